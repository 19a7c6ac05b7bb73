// One chart per place on the page, updated in place: Plotly.react with the new figure, never a
// fresh newPlot for new data. Streamlit calls this function on the first mount and again each time
// the chart's data changes; the <div> it draws into stays, so plotly only redraws what changed.
export default function (component) {
  const { data, parentElement } = component;
  if (!window.__encoderLabPlotly) {
    // plotly.js, the copy that ships with the plotly package, served once per page from the
    // app's static folder; every chart on the page waits for the same download.
    window.__encoderLabPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = new URL("app/static/plotly.min.js", document.baseURI).href;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => reject(new Error("plotly.js could not be loaded"));
      document.head.appendChild(script);
    });
  }
  let holder = parentElement.querySelector("div[data-testid=stPlotlyChart]");
  if (!holder) {
    // The same test id as Streamlit's own chart element, so the page's styles, the browser tests
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
  window.__encoderLabPlotly
    .then((Plotly) => Plotly.react(chart, figure.data, figure.layout, { responsive: true, ...data.config }))
    .catch((error) => {
      holder.textContent = `This chart could not be drawn (${error.message}); its numbers are in the panel below.`;
    });
}
