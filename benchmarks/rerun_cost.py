"""What one rerun of a lesson costs the server: bytes sent, figures, CPU. Deterministic enough to compare
two commits on a busy machine, where wall-clock times are not (prints a table; not a test).

    .venv/bin/python -m benchmarks.rerun_cost [--runs 5] [--lesson block inside] [--profile block]

Each lesson is opened as an AppTest (`tests.apptest_helpers.open_page`, its default tab, every prediction
skipped), as two students in one server process, so that whatever one caches the other can reuse. Then,
`--runs` times, with a new sentence each time (`benchmarks.lesson_inputs`, as `benchmarks.hall_load` draws them):

- **new sentence**: student A types a sentence nobody has typed;
- **same sentence**: student B types the sentence A just typed (a class typing what the lecturer says);
- **control**: student A moves the lesson's second control (a slider where the page has one; `CONTROLS`);
- **first page**: a third student's first run of the page, on its defaults, which others opened before
  (the burst of a hall joining at once).

Per rerun it reports:

- **bytes**: the sum of the serialized protobuf sizes (`ForwardMsg.ByteSize()`) of every forward message
  the run enqueued (deltas, page info, script finished), i.e. what the server writes to the WebSocket before
  compression, counted before Streamlit's queue coalesces anything;
- **chart bytes**: of those, the chart elements (the lab's chart element, or `plotly_chart` in an earlier commit);
- **figures**: plotly charts sent;
- **calls**: Python function calls in the run (cProfile, in the script's thread), from a second pass on other
  sentences: a count the machine's other load does not move;
- **CPU**: `time.process_time()` of the run (every thread of this process: the script runs in AppTest's own
  thread; torch runs one thread, as the app does), median over the runs. Scripts are compiled once, as a server
  does (AppTest alone would compile app.py and the page on every run).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import streamlit.testing.v1.app_test as app_test
import streamlit.testing.v1.local_script_runner as local_script_runner
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner

from benchmarks.lesson_inputs import SENTENCE_BOXES, random_sentence
from tests.apptest_helpers import open_page

# The lesson's second control: (kind, key, values to cycle through); its sentence box is SENTENCE_BOXES'.
CONTROLS = {
    "attention": ("slider", "attention.head", (1, 2, 3, 0)),
    "padding": ("slider", "padding.n_pads", (3, 5, 7, 1)),
    "masking": ("slider", "masking.mlm_rate", (0.2, 0.3, 0.4, 0.5)),
    "block": ("slider", "block.block_layer", (1, 0)),
    "heads": ("slider", "heads.heads_head", (1, 2, 3, 0)),
    "outputs": None,  # its controls are text boxes, a segmented control and a formatted selectbox AppTest cannot set
    "tradeoffs": ("text_input", "tradeoffs.next_word", ("today", "slowly", "here", "again")),
    "inside": ("select_slider", "inside.inside_steps", (4, 16, 64)),
}


@dataclass
class Tally:
    bytes: int = 0
    chart_bytes: int = 0
    figures: int = 0
    on: bool = False


TALLY = Tally()
_enqueue = ForwardMsgQueue.enqueue


def _counting_enqueue(self, msg) -> None:
    if TALLY.on:
        TALLY.bytes += msg.ByteSize()
        if msg.WhichOneof("type") == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            kind = element.WhichOneof("type")
            if kind == "plotly_chart" or (kind == "bidi_component" and element.bidi_component.json):
                TALLY.figures += 1
                TALLY.chart_bytes += getattr(element, kind).ByteSize()
    _enqueue(self, msg)


ForwardMsgQueue.enqueue = _counting_enqueue

# AppTest gives every run a new ScriptCache, so each run compiles app.py and the page again (3-4 ms); a server
# compiles each script once. One cache for every run here, as in a server: both the runner's (app.py) and the
# one AppTest hands its pages manager (the page itself).
_SCRIPT_CACHE = local_script_runner.ScriptCache()
local_script_runner.ScriptCache = lambda: _SCRIPT_CACHE
app_test.ScriptCache = lambda: _SCRIPT_CACHE

# The script runs in AppTest's own thread, and cProfile sees one thread: a profiler set here is enabled there.
PROFILER: list[cProfile.Profile] = []
_run_script = ScriptRunner._run_script


def _profiled_run_script(self, rerun_data) -> None:
    if not PROFILER:
        return _run_script(self, rerun_data)
    PROFILER[0].enable()
    try:
        return _run_script(self, rerun_data)
    finally:
        PROFILER[0].disable()


ScriptRunner._run_script = _profiled_run_script


@dataclass
class Cost:
    bytes: list[int] = field(default_factory=list)
    chart_bytes: list[int] = field(default_factory=list)
    figures: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)  # Python function calls of the run, from its second pass

    def row(self) -> tuple[str, str, str, str, str]:
        def med(xs):
            return statistics.median(xs) if xs else float("nan")

        return (
            f"{med(self.bytes) / 1000:,.1f}",
            f"{med(self.chart_bytes) / 1000:,.1f}",
            f"{med(self.figures):g}",
            f"{med(self.cpu) * 1000:,.0f}",
            f"{med(self.calls) / 1000:,.0f}",
        )


@contextmanager
def measured(cost: Cost, count_calls: bool = False):
    """Bytes, figures and CPU of the run inside; with count_calls, its function calls instead of its CPU (a
    profiler slows the run down, so the two come from separate passes)."""
    TALLY.bytes = TALLY.chart_bytes = TALLY.figures = 0
    TALLY.on = True
    profiler = cProfile.Profile() if count_calls else None
    if profiler:
        PROFILER.append(profiler)
    t = time.process_time()
    try:
        yield
    finally:
        if profiler:
            PROFILER.clear()
            cost.calls.append(pstats.Stats(profiler).total_calls)
        else:
            cost.cpu.append(time.process_time() - t)
        TALLY.on = False
        cost.bytes.append(TALLY.bytes)
        cost.chart_bytes.append(TALLY.chart_bytes)
        cost.figures.append(TALLY.figures)


def sentences(runs: int, seed: int = 46) -> list[str]:
    r = random.Random(seed)
    return [random_sentence(r) for _ in range(runs)]


def move_control(at, lesson: str, i: int):
    kind, key, values = CONTROLS[lesson]
    widget = getattr(at, kind)(key=key)
    new = values[i % len(values)]
    if kind == "text_input":
        widget.input(new)
    else:
        widget.set_value(new)
    return at.run()


def lesson_costs(lesson: str, runs: int, profile: bool = False) -> dict[str, Cost]:
    """Two passes of `runs` rounds: the first measures CPU, the second (other sentences, so that a new sentence is
    new again) counts function calls. profile: print where the first pass's new-sentence reruns went."""
    costs = {name: Cost() for name in ("new sentence", "same sentence", "control", "first page")}
    profiler = cProfile.Profile() if profile else None
    for count_calls, seed in ((False, 46), (True, 47)):
        a = open_page(lesson, timeout=300, every_section=False)
        b = open_page(lesson, timeout=300, every_section=False)
        for i, text in enumerate(sentences(runs, seed)):
            a.text_input(key=SENTENCE_BOXES[lesson]).input(text)
            if profiler and not count_calls:
                PROFILER.append(profiler)
            with measured(costs["new sentence"], count_calls):
                a.run()
            PROFILER.clear()
            b.text_input(key=SENTENCE_BOXES[lesson]).input(text)
            with measured(costs["same sentence"], count_calls):
                b.run()
            if CONTROLS[lesson]:
                with measured(costs["control"], count_calls):
                    move_control(a, lesson, i)
            if not [w for w in a.text_input if w.key == SENTENCE_BOXES[lesson]]:
                a.run()  # the control reran its section alone (a fragment): AppTest's tree holds only that section
            c = open_page(None, timeout=300)  # the home page first, as open_page does, unmeasured
            c.switch_page(f"pages/{lesson}.py")
            with measured(costs["first page"], count_calls):
                c.run()
            for at in (a, b, c):
                assert not at.exception, (lesson, at.exception)
    if profiler:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(60)
        print(f"\n### {lesson}: profile of the new-sentence reruns\n\n```\n{out.getvalue()}\n```")
    return costs


def main() -> None:
    from benchmarks.browser import lessons

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lesson", nargs="+", default=None)
    ap.add_argument("--profile", nargs="*", default=(), help="lessons whose new-sentence reruns to profile")
    args = ap.parse_args()
    rows = []
    for lesson in args.lesson or lessons():
        costs = lesson_costs(lesson, args.runs, profile=lesson in args.profile)
        rows += [(lesson, name, *cost.row()) for name, cost in costs.items()]
        print("| " + " |\n| ".join(" | ".join(row) for row in rows[-len(costs) :]) + " |", flush=True)
    print(f"\nmedians of {args.runs} reruns each")
    print("| lesson | rerun | kB sent | kB of chart specs | figures | CPU ms | thousand calls |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
