"""Timing a change inside the page, on the page's own clock (performance.now()).

A change is timed from the Enter key's keydown to the first animation frame in which a chart on
the page holds new data. Taking both times in the page leaves out Playwright's own round trips
to the browser: timed from Python, a change also counted the trip that delivers the key press and
the one that reports the redraw, about 90-130 ms on this machine, which a student never waits for.
"""

from __future__ import annotations

# Added before the app's own scripts: every WebSocket the page opens notes when each of its
# messages arrives and when the page sends its first message after Enter. Our listener is added
# in the constructor, before the app's own handler, so the time is taken before the app reads it.
RECORD_SOCKET = """(() => {
  const Native = window.WebSocket;
  window.__received = [];
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', e => {
        if (typeof e.data !== 'string') window.__received.push(performance.now());
      });
    }
    send(data) {
      const t = window.__timing;
      if (t && t.key !== undefined && t.sent === undefined) t.sent = performance.now();
      return super.send(data);
    }
  };
})()"""

# Remember the drawn charts, then wait for Enter; from the next frame on, check once per
# animation frame whether a chart was replaced or redrawn with new data. Polling from Python
# instead (serialising every chart every few milliseconds) loaded the browser's main thread
# enough to slow the very redraw being timed.
ARM = """(keys) => {
  const charts = () => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')];
  const before = charts().map(el => [el, el.data]);
  const t = window.__timing = {};
  const redrawn = () => charts().some(el =>
      el.data && !before.some(([e, d]) => e === el && d === el.data));
  const watch = () => { if (redrawn()) t.drawn = performance.now(); else requestAnimationFrame(watch); };
  const onKey = e => {
    if (!keys.includes(e.key)) return;
    t.key = performance.now();
    t.firstReceived = (window.__received || []).length;
    document.removeEventListener('keydown', onKey, true);
    requestAnimationFrame(watch);
  };
  document.addEventListener('keydown', onKey, true);
}"""

DRAWN = "() => window.__timing && window.__timing.drawn !== undefined"

# key, sent, drawn (ms on the page's clock) and the arrival times of the messages received since
# the key press, in order.
READ = """() => { const t = window.__timing;
  return {...t, received: (window.__received || []).slice(t.firstReceived)}; }"""


def arm(page, keys: tuple[str, ...] = ("Enter",)) -> None:
    """Time from the next press of one of these keys (Enter for a text box, an arrow for a slider)."""
    page.evaluate(ARM, list(keys))


def wait_drawn(page, timeout_s: float = 30.0) -> dict:
    """After arm() and Enter: wait for the redraw, then the page's timings (ms)."""
    page.wait_for_function(DRAWN, timeout=timeout_s * 1000)
    return page.evaluate(READ)


def latency_s(timing: dict) -> float:
    """Enter -> chart redrawn, in seconds."""
    return (timing["drawn"] - timing["key"]) / 1000
