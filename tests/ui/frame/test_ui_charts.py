"""Figure exports (one figure, all figures, CSV), lecture / high-contrast styling, colour-blind-safe palettes."""

import io
import itertools
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from ui.frame.export import ExportedFigure, figure_html, figures_html, table_csv
from ui.views.figures import (
    CATEGORICAL,
    COLORBAR_ROOM,
    DIVERGING,
    HIGH_CONTRAST_PAIR,
    LABEL_CHAR_PX,
    PAIR,
    SEQUENTIAL,
    attention_heatmap,
    bar_chart,
    colorbar_room,
    label_room,
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
    short, long = label_room(["0 [CLS]"]), label_room(["0 [CLS]", "11 extraordinarily"])
    assert long - short == pytest.approx(LABEL_CHAR_PX * (18 - 7), abs=1)
    assert label_room(["0 [CLS]"], titled=False) < short  # no axis title beside the labels
    assert colorbar_room(0.03) > colorbar_room(1.0) == COLORBAR_ROOM
    fig = attention_heatmap(np.eye(3), ["[CLS]", "extraordinarily", "[SEP]"])
    assert fig.layout.margin.l == label_room(["1 extraordinarily"]) and fig.layout.margin.r == COLORBAR_ROOM
