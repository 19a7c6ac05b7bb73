"""Figure exports (one figure, all figures, CSV), lecture / high-contrast styling, colour-blind-safe palettes."""

import io
import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from ui.frame.export import ExportedFigure, figure_html, figures_html, table_csv
from ui.frame.shell import (
    EVERY_SCREEN_CSS,
    FIT_CELL_TEXT_PX,
    NARROW_SCREEN_CSS,
    PHONE_CHART_SHARE,
    PHONE_WIDTH_PX,
    READABLE_CELL_TEXT_PX,
)
from ui.views.figures import (
    CATEGORICAL,
    COLORBAR_MARGIN,
    DIVERGING,
    HIGH_CONTRAST_PAIR,
    LABEL_CHAR_PX,
    PAIR,
    PHONE_HIDDEN_CELL_FONT,
    SEQUENTIAL,
    attention_heatmap,
    bar_chart,
    cell_lines,
    colorbar_margin,
    label_margin,
    line_chart,
    styled,
)

VOID = {"meta", "br", "img", "input", "link", "hr", "source", "area", "base", "col", "embed", "track", "wbr"}


class TagBalance(HTMLParser):
    """Checks that every element is closed in order; collects the plotly divs."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.plot_divs, self.doctype = [], [], [], False

    def handle_decl(self, decl):
        self.doctype = decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "plotly-graph-div" in (attrs.get("class") or ""):
            self.plot_divs.append(attrs["id"])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def parse(text: str) -> TagBalance:
    checker = TagBalance()
    checker.feed(text)
    checker.close()
    assert checker.doctype and not checker.errors and not checker.stack, (checker.errors, checker.stack)
    return checker


def drawn_calls(text: str) -> list[tuple[str, list, dict]]:
    """(div id, data, layout) of every Plotly.newPlot call in the page, decoded from its JSON."""
    decoder, calls, at = json.JSONDecoder(), [], 0
    while (at := text.find("Plotly.newPlot(", at)) != -1:
        rest = text[at + len("Plotly.newPlot(") :]
        parts, pos = [], 0
        for _ in range(3):
            pos += len(rest[pos:]) - len(rest[pos:].lstrip(" \n,"))
            value, pos = decoder.raw_decode(rest, pos)
            parts.append(value)
        calls.append(tuple(parts))
        at += 1
    return calls


def figures_for_export():
    return [
        ExportedFigure("weights", attention_heatmap(np.eye(3) * 0.5 + 0.1, ["a", "b", "c"]), "Mostly diagonal."),
        ExportedFigure("norms", bar_chart(["x", "y"], [1.5, 2.25], title="Norms"), "Two bars: 1.5 and 2.25."),
        ExportedFigure("loss <curve>", line_chart([0, 1, 2], {"loss": [3.0, 2.0, 1.5]}), "Loss falls to 1.5."),
    ]


def test_all_figures_page_is_valid_html_with_every_figure_once():
    items = figures_for_export()
    text = figures_html(items, title="Encoder Lab: demo")
    checker = parse(text)
    calls = drawn_calls(text)
    assert len(checker.plot_divs) == len(calls) == len(items)
    assert [c[0] for c in calls] == checker.plot_divs and len(set(checker.plot_divs)) == len(items)
    for item, (_, data, layout) in zip(items, calls):
        expected = json.loads(item.fig.to_json())
        assert data == expected["data"]
        assert layout.get("title") == expected["layout"].get("title")
    assert text.count("plotly.js v") == 1  # the library is inlined once, so the file works offline
    for item in items:
        assert f"<figcaption>{item.alt}</figcaption>" in text


def test_user_text_in_names_and_captions_is_escaped():
    fig = bar_chart(["a"], [1.0])
    text = figures_html([ExportedFigure("<b>k</b>", fig, "<script>alert(1)</script>")], title="<i>t</i>")
    parse(text)
    assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>k</b>" not in text and "<i>t</i>" not in text


def test_one_figure_page_is_standalone():
    fig = bar_chart(["a", "b"], [1.0, 2.0])
    text = figure_html(fig, "norms", "Two bars.")
    checker = parse(text)
    assert len(checker.plot_divs) == 1 and text.count("plotly.js v") == 1
    assert "<figcaption>Two bars.</figcaption>" in text


def test_an_empty_page_is_still_valid():
    assert not parse(figures_html([])).plot_divs


def test_csv_keeps_every_number_exactly():
    table = pd.DataFrame({"token": ["the", "cat"], "weight": [1 / 3, 2 / 7], "count": [1, 2]})
    back = pd.read_csv(io.StringIO(table_csv(table)))
    pd.testing.assert_frame_equal(back, table)


def test_csv_defuses_typed_formulas_but_not_numbers():
    tokens = ["=cmd|' /C calc'!A0", "@sum", "+x", "-", "ok"]
    table = pd.DataFrame({"token": tokens, "value": [-1.5, 2.0, 3.0, 4.0, 5.0]})
    back = pd.read_csv(io.StringIO(table_csv(table)))
    assert list(back["token"]) == ["'=cmd|' /C calc'!A0", "'@sum", "'+x", "'-", "ok"]
    assert list(back["value"]) == [-1.5, 2.0, 3.0, 4.0, 5.0]


def test_styled_leaves_the_built_figure_alone():
    fig = attention_heatmap(np.eye(2), ["a", "b"])
    before = fig.to_json()
    styled(fig, lecture=True, high_contrast=True)
    assert fig.to_json() == before


def test_lecture_mode_enlarges_every_text():
    fig = styled(attention_heatmap(np.eye(2), ["a", "b"], title="t"), lecture=True)
    plain = attention_heatmap(np.eye(2), ["a", "b"], title="t")
    assert fig.layout.font.size == 20 and fig.layout.title.font.size == 24
    assert fig.layout.xaxis.tickfont.size == 18 and fig.layout.yaxis.title.font.size == 20
    assert fig.data[0].textfont.size == 18 and fig.data[0].colorbar.tickfont.size == 18
    assert fig.layout.height > plain.layout.height
    assert styled(plain).layout.font.size is None  # nothing changes outside lecture mode


def test_lecture_mode_keeps_the_title_on_one_line_clear_of_a_top_axis():
    title = "Bidirectional (no mask), layer 0, head 0"
    tokens = ["[CLS]", "happy", "[SEP]"]
    top = styled(attention_heatmap(np.eye(3), tokens, title=title), lecture=True)  # key axis on top
    plain = styled(bar_chart(tokens, [1.0, 2.0, 3.0], title=title), lecture=True)
    assert top.layout.title.text == title and top.layout.title.yanchor == "bottom"  # one line, as written
    line = round(24 * 1.3)
    # Above the plot, bottom to top: the top axis's labels (upright when the figure is narrow: "0 [CLS]"
    # is 7 characters of 18 px type), its title, then the title; the margin holds them all.
    upright_labels_and_axis_title = 7 * 18 * 0.6 + 20
    assert top.layout.title.pad.b >= upright_labels_and_axis_title
    assert top.layout.margin.t >= top.layout.title.pad.b + line
    assert plain.layout.title.pad.b < 16 and plain.layout.margin.t >= line


def test_lecture_mode_keeps_cell_numbers_inside_their_cells():
    many = styled(attention_heatmap(np.full((20, 20), 0.05), [str(i) for i in range(20)]), lecture=True)
    assert many.data[0].texttemplate is None and many.data[0].text is None  # 20 columns: 18 px would not fit
    ragged = styled(go.Figure(go.Heatmap(z=[[1, 2, 3], [4]])), lecture=True)
    assert ragged.data[0].textfont.size == 18


def test_lecture_mode_shows_log_axes_at_powers_of_ten_only():
    fig = styled(line_chart([16, 512], {"s": [0.07, 72.0]}, log_y=True), lecture=True)
    assert fig.layout.yaxis.dtick == 1  # no three-quarter-size 2s and 5s between the decades


def test_line_charts_start_their_value_axis_at_zero_unless_asked():
    assert line_chart([0, 1], {"s": [8.0, 8.04]}).layout.yaxis.rangemode == "tozero"
    assert line_chart([0, 1], {"s": [8.0, 8.04]}, from_zero=False).layout.yaxis.rangemode is None
    assert line_chart([0, 1], {"s": [1.0, 100.0]}, log_y=True).layout.yaxis.rangemode is None
    names = line_chart(["embeddings", "after layer 0"], {"s": [1.0, 2.0]})
    assert list(names.data[0].x) == ["embeddings", "after layer 0"]


def test_high_contrast_is_black_on_white_with_outlines():
    bars = styled(bar_chart(["a"], [1.0]), high_contrast=True)
    lines = styled(line_chart([0, 1], {"s": [1, 2]}), high_contrast=True)
    cells = styled(attention_heatmap(np.eye(2), ["a", "b"]), high_contrast=True)
    assert bars.layout.font.color == "#000000" and bars.layout.paper_bgcolor == "#ffffff"
    assert bars.layout.xaxis.showline and bars.layout.yaxis.linecolor == "#000000"
    assert bars.data[0].marker.line.color == "#000000" and bars.data[0].marker.line.width == 1.5
    assert lines.data[0].line.width == 4
    assert cells.data[0].xgap == 1 and cells.data[0].ygap == 1
    plain = styled(bar_chart(["a"], [1.0]))
    assert plain.layout.font.color is None and plain.data[0].marker.line.width is None


def test_styling_reaches_every_subplot():
    fig = make_subplots(rows=1, cols=2)
    fig.add_bar(x=["a"], y=[1], row=1, col=1)
    fig.add_heatmap(z=[[1, 2]], row=1, col=2)
    out = styled(fig, lecture=True, high_contrast=True)
    assert out.layout.xaxis2.tickfont.size == 18 and out.layout.xaxis2.linecolor == "#000000"


def test_colour_cycle_is_colour_blind_safe_unless_a_figure_sets_its_own():
    assert list(styled(go.Figure()).layout.colorway) == list(CATEGORICAL)
    own = go.Figure(layout={"colorway": ["#000000", "#E69F00"]})
    assert list(styled(own).layout.colorway) == ["#000000", "#E69F00"]


def test_shared_scales_are_the_colour_blind_safe_ones():
    assert SEQUENTIAL.lower() in ("cividis", "viridis")
    assert DIVERGING == "RdBu"  # red-blue: readable without red-green vision
    assert attention_heatmap(np.eye(2), ["a", "b"]).data[0].colorscale == go.Heatmap(colorscale=SEQUENTIAL).colorscale


# Simulated colour-vision deficiency (Machado, Oliveira & Fernandes 2009, severity 1), applied in
# linear RGB; distance is CIE76 delta-E in Lab. About 2.3 is "just noticeable"; under 12 two plot
# colours are easily confused at a glance.
CVD = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
MIN_DELTA_E = 12.0


def _lab(hex_colour: str, matrix=None) -> np.ndarray:
    srgb = np.array([int(hex_colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)])
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    if matrix is not None:
        linear = np.clip(np.asarray(matrix) @ linear, 0, 1)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def worst_confusion(palette) -> float:
    return min(
        float(np.linalg.norm(_lab(a, m) - _lab(b, m)))
        for a, b in itertools.combinations(palette, 2)
        for m in [None, *CVD.values()]
    )


@pytest.mark.parametrize("palette", [PAIR, HIGH_CONTRAST_PAIR, CATEGORICAL], ids=["pair", "high-contrast", "cycle"])
def test_palettes_stay_distinct_for_colour_blind_readers(palette):
    assert worst_confusion(palette) >= MIN_DELTA_E


def test_a_red_green_pair_fails_the_palette_check():
    assert worst_confusion(("#d62728", "#2ca02c")) < MIN_DELTA_E


def test_heatmap_margins_grow_with_their_labels_and_colour_bar_digits():
    short, long = label_margin(["0 [CLS]"]), label_margin(["0 [CLS]", "11 extraordinarily"])
    assert long - short == pytest.approx(LABEL_CHAR_PX * (18 - 7), abs=1)
    assert label_margin(["0 [CLS]"], titled=False) < short  # no axis title beside the labels
    assert colorbar_margin(0.03) > colorbar_margin(1.0) == COLORBAR_MARGIN
    fig = attention_heatmap(np.eye(3), ["[CLS]", "extraordinarily", "[SEP]"])
    assert fig.layout.margin.l == label_margin(["1 extraordinarily"]) and fig.layout.margin.r == COLORBAR_MARGIN


def one_row(words, *, size=None):
    """A row of cells with a word written in each, as the outputs lesson's label rows are drawn."""
    fig = go.Figure(
        go.Heatmap(z=[list(range(len(words)))], text=[words], texttemplate="%{text}", textfont={"size": size}),
        layout={"margin": {"l": 40, "r": 10, "t": 60, "b": 40}, "height": 190},
    )
    return fig


def test_cell_text_is_read_as_plotly_writes_it():
    fig = go.Figure(go.Heatmap(z=[[0.5, 0.25]], text=[["a&amp;b<br>→ <b>cat</b>", "x"]], texttemplate="%{text}"))
    assert cell_lines(fig.data[0]) == [["a&b", "→ cat"], ["x"]]
    numbers = go.Figure(go.Heatmap(z=[[0.123456, 1.0]], texttemplate="%{z:.2f} (%{x})", x=["a", "b"]))
    assert cell_lines(numbers.data[0]) == [["0.12 (a)"], ["1.00 (b)"]]


def test_cell_text_plotly_cannot_fit_is_hidden_on_a_phone_where_it_would_overrun():
    # One row: plotly writes it at the figure's type size however narrow the cells. Eleven five-letter words
    # do not fit a phone's chart; three do.
    crowded = styled(one_row(["other"] * 11))
    assert crowded.data[0].textfont.size == PHONE_HIDDEN_CELL_FONT
    assert styled(one_row(["cat", "dog", "owl"])).data[0].textfont.size is None
    # A size the view chose is kept where it fits, marked where it would not.
    assert styled(one_row(["cat", "dog", "owl"], size=12)).data[0].textfont.size == 12
    assert styled(one_row(["person"] * 12, size=12)).data[0].textfont.size == PHONE_HIDDEN_CELL_FONT
    # A grid plotly fits itself is left to plotly (and to the stylesheet, which hides what it shrank too far).
    grid = styled(attention_heatmap(np.full((12, 12), 0.05), [str(i) for i in range(12)]))
    assert grid.data[0].textfont.size is None
    # Lecture mode writes its own 18-px numbers, or none (test_lecture_mode_keeps_cell_numbers_inside_their_cells).
    assert styled(one_row(["other"] * 11), lecture=True).data[0].textfont.size == 18


def test_the_marked_size_looks_like_the_figure_type_and_no_view_uses_it():
    assert abs(PHONE_HIDDEN_CELL_FONT - 12) < 0.05
    views = Path(__file__).resolve().parents[3] / "ui" / "views"
    assert not [f.name for f in views.glob("*.py") if f.name != "figures.py" and "11.99" in f.read_text()]


def test_the_stylesheet_hides_cell_text_plotly_shrank_too_far_and_enlarges_the_rest():
    hidden = re.findall(r'font-size: (\d+)px;"\]', EVERY_SCREEN_CSS.split("{display: none;}")[0])
    assert sorted(map(int, hidden)) == list(range(1, FIT_CELL_TEXT_PX))
    # An attribute selector matches a substring: "font-size: 1px;" must not also match 11 px, 21 px, ...
    written = {px: f"font-family: x; font-size: {px}px; fill: red;" for px in range(1, 40)}
    matched = {px for px, style in written.items() for h in hidden if f"font-size: {h}px;" in style}
    assert matched == set(range(1, FIT_CELL_TEXT_PX))
    enlarged = f'font-size: {FIT_CELL_TEXT_PX}px;"] {{font-size: {READABLE_CELL_TEXT_PX}px !important;}}'
    assert enlarged in EVERY_SCREEN_CSS
    assert f'font-size: {PHONE_HIDDEN_CELL_FONT}px;"] {{display: none;}}' in NARROW_SCREEN_CSS


def test_on_a_phone_every_chart_is_capped_below_half_the_screen_except_in_full_screen():
    assert NARROW_SCREEN_CSS.strip().startswith(f"@media (max-width: {PHONE_WIDTH_PX}px)")
    assert PHONE_CHART_SHARE < 50
    cap = re.search(r"^(.*)\{max-height: (\d+)vh; max-height: (\d+)svh;\}", NARROW_SCREEN_CSS, re.M)
    assert cap and int(cap[2]) == int(cap[3]) == PHONE_CHART_SHARE
    assert ':not(:has([data-title="Close fullscreen"]))' in cap[1]
    for target in ('[data-testid="stRadioOption"] {min-height: 44px;', "button {min-height: 44px;}"):
        assert f'[class*="st-key-predict-"] {target}' in EVERY_SCREEN_CSS


def test_a_shared_chart_is_styled_once_and_lecture_or_contrast_style_a_copy():
    from ui.frame.charts import chart_figure, shared_chart
    from ui.views.figures import Chart, matrix_heatmap

    built = Chart(matrix_heatmap(np.arange(6.0).reshape(2, 3), ["a", "b"], title="t"), "alt")
    shared = shared_chart(built)
    assert shared.shared and not built.shared
    assert list(shared.figure.layout.colorway) == list(CATEGORICAL)  # styled for the default view, once
    kept = shared.figure.to_json()
    assert chart_figure(shared, lecture=False, high_contrast=False) is shared.figure
    for lecture, contrast in ((True, False), (False, True), (True, True)):
        fig = chart_figure(shared, lecture=lecture, high_contrast=contrast)
        assert fig is not shared.figure
        assert fig.to_json() == styled(go.Figure(shared.figure), lecture=lecture, high_contrast=contrast).to_json()
    assert shared.figure.to_json() == kept  # no session changed what the others see
    own = Chart(matrix_heatmap(np.ones((2, 2)), ["a", "b"], title="t"), "alt")
    assert chart_figure(own, lecture=True, high_contrast=False) is own.figure  # built for this run: styled in place
    assert own.figure.layout.font.size == 20


def test_heatmaps_send_float32_and_write_cell_numbers_from_z():
    weights = np.array([[0.123456789, 0.876543211], [0.5, 0.5]])
    fig = attention_heatmap(weights, ["a", "b"])
    trace = fig.data[0]
    assert trace.z.dtype == np.float32 and trace.text is None
    np.testing.assert_array_equal(trace.z, weights.astype(np.float32))
    assert cell_lines(trace) == [["0.12"], ["0.88"], ["0.50"], ["0.50"]]
    spec = json.loads(fig.to_json())["data"][0]["z"]
    assert spec["dtype"] == "f4"  # 4 bytes a number on the wire


CHART_PAGE = """
import plotly.graph_objects as go
import streamlit as st
from ui.frame.charts import show_chart
from ui.views.figures import Chart

z = st.session_state.setdefault("z", [[0.25, 0.75], [0.5, 0.5]])
show_chart(Chart(go.Figure(go.Heatmap(z=z), layout={"title": {"text": "two by two"}}), "A 2 by 2 grid."), "grid")
"""


def test_a_chart_is_sent_as_its_figure_without_the_placeholder_theme_and_changes_under_the_same_key():
    """The lab's chart element: the figure's numbers reach the page exactly, without the Python-side template
    (the page puts Streamlit's resolved theme in), under one key per place, so a change redraws the same chart."""
    from streamlit.testing.v1 import AppTest

    from ui.frame.chart_element import COMPONENT_NAME

    at = AppTest.from_string(CHART_PAGE, default_timeout=60).run()

    def sent():
        [el] = [e for e in at.get("bidi_component") if e.proto.component_name == COMPONENT_NAME]
        return el.proto.id, json.loads(el.proto.json)

    first_id, data = sent()
    figure = json.loads(data["figure"])
    assert "template" not in figure["layout"] and data["alt"] == "A 2 by 2 grid."
    assert figure["data"][0]["z"] == [[0.25, 0.75], [0.5, 0.5]]
    at.session_state["z"] = [[1.0, 0.0], [0.0, 1.0]]
    at.run()
    second_id, data = sent()
    assert second_id == first_id and first_id.endswith("chart_grid")
    assert json.loads(data["figure"])["data"][0]["z"] == [[1.0, 0.0], [0.0, 1.0]]


def test_without_the_bundle_streamlits_own_chart_element_draws(monkeypatch):
    """A checkout run without make setup has no static/plotly.min.js: its charts still draw, by st.plotly_chart."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr("ui.frame.chart_element.HAS_BUNDLE", False)
    at = AppTest.from_string(CHART_PAGE, default_timeout=60).run()
    assert not at.exception and not at.get("bidi_component")
    [chart] = at.get("plotly_chart")
    assert json.loads(chart.proto.spec)["data"][0]["z"] == [[0.25, 0.75], [0.5, 0.5]]
