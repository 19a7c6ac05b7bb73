// One chart per place on the page, changed in place: Plotly.react with the new figure, never a fresh
// newPlot for new data. Streamlit calls this function on the first mount and again each time the
// chart's data changes; the <div> it draws into stays, so plotly only redraws what changed.

// plotly.js (static/plotly.min.js: plotly's cartesian bundle, scripts/plotly_bundle.py) and Streamlit's
// chart themes as its front end resolves them (static/chart_themes.json), fetched once per page: every
// chart on the page waits for the same two downloads.
function loadOnce() {
  if (!window.__encoderLabCharts) {
    const asset = (name) => new URL(`app/static/${name}`, document.baseURI).href;
    const plotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = asset("plotly.min.js");
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => reject(new Error("plotly.js could not be loaded"));
      document.head.appendChild(script);
    });
    const themes = fetch(asset("chart_themes.json")).then((r) => (r.ok ? r.json() : {}), () => ({}));
    window.__encoderLabCharts = Promise.all([plotly, themes]);
  }
  return window.__encoderLabCharts;
}

// Dark when the page's background is: Streamlit gives a component its theme as CSS variables. Read at most
// once a second: reading a computed style makes the browser settle the page's styles first, which on a
// lesson's large page costs more than the chart's own update.
function isDark(element) {
  const now = performance.now();
  const known = window.__encoderLabDark;
  if (known && now - known.at < 1000) return known.dark;
  const probe = document.createElement("span");
  probe.style.color = getComputedStyle(element).getPropertyValue("--st-background-color").trim() || "#fff";
  element.appendChild(probe);
  const rgb = (getComputedStyle(probe).color.match(/\d+(\.\d+)?/g) || [255, 255, 255]).map(Number);
  probe.remove();
  const dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 128;
  window.__encoderLabDark = { at: now, dark };
  return dark;
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) {
    loadOnce(); // the page's first element asks for plotly.js at once, before any chart is on its way
    return;
  }
  let holder = parentElement.querySelector("div[data-testid=stPlotlyChart]");
  if (!holder) {
    // The same test id as Streamlit's own chart element, so that the page's styles, the browser tests
    // and the benchmarks find a chart the same way whichever element drew it.
    holder = document.createElement("div");
    holder.setAttribute("data-testid", "stPlotlyChart");
    holder.setAttribute("role", "img");
    holder.appendChild(document.createElement("div"));
    parentElement.appendChild(holder);
  }
  holder.setAttribute("aria-label", data.alt);
  const chart = holder.firstChild;
  const figure = JSON.parse(data.figure);
  const title = figure.layout.title;
  if (title && typeof title.text === "string" && title.text) title.text = `<b>${title.text}</b>`; // as Streamlit draws titles
  loadOnce()
    .then(([Plotly, themes]) => {
      const template = themes[isDark(parentElement) ? "dark" : "light"];
      if (template) figure.layout.template = template;
      return Plotly.react(chart, figure.data, figure.layout, { responsive: true, ...data.config });
    })
    .catch((error) => {
      holder.textContent = `This chart could not be drawn (${error.message}); its numbers are in the panel below.`;
    });
}
