"""Every figure every lesson draws, held to the honest-figure rules (tests/figure_rules.py).

Driven by encoder_core.lessons.LESSONS: a new lesson is audited as soon as its page exists. Each lesson
is opened one section (tab) at a time, so that a caption is compared with the metrics of its own
section, in three states: its defaults, every control moved (the sentences read backwards, every
slider at its top, every select box, radio and select slider on its last option, every toggle
flipped), and lecture mode (large type, wrapped titles). The rules' own tests below show that each one
catches a bad figure. The walk takes about a minute, so its tests are marked slow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import figure_rules as rules
import plotly.graph_objects as go
import pytest
from apptest_helpers import ROOT, charts, decode, open_linked, open_page, skip_predictions
from streamlit.proto.WidgetStates_pb2 import WidgetState

from encoder_core.lessons import LESSONS

PAGES = [lesson.id for lesson in LESSONS if (ROOT / "pages" / f"{lesson.id}.py").exists()]
TEXT_KINDS = ("caption", "markdown", "info", "warning", "error", "success")


@dataclass
class Drawn:
    """What one run of a page put on screen."""

    where: str  # lesson, state and section, for the failure message
    charts: list[tuple[str, dict, str]] = field(default_factory=list)  # (key, decoded spec, alt text)
    texts: list[str] = field(default_factory=list)  # captions, markdown, alerts
    metrics: list[str] = field(default_factory=list)  # metric values as shown
    controls: dict[str, tuple[int, int]] = field(default_factory=dict)  # "layer"/"head" slider -> its range

    def words_on_charts(self) -> list[str]:
        """Titles, annotations and text alternatives: where a chart names the layer or head it shows."""
        return [rules._title_and_notes(spec) + " " + alt for _, spec, alt in self.charts]

    def labels_of_charts(self) -> dict[str, list[str]]:
        """Per chart, its category and tick labels: where it numbers a sequence of layers, heads, ..."""
        out = {}
        for key, spec, _ in self.charts:
            labels = []
            for trace in spec.get("data", []):
                for axis in ("x", "y"):
                    values = trace.get(axis)
                    if isinstance(values, list) and values and isinstance(values[0], str):
                        labels.extend(values)
            for name, axis in spec.get("layout", {}).items():
                if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
                    labels.extend(str(t) for t in axis.get("ticktext", []) or [])
            out[key] = labels
        return out


def read(at, where: str) -> Drawn:
    drawn = Drawn(where)
    drawn.charts = list(charts(at))  # st.plotly_chart or the lab's own chart component, whichever drew it
    for kind in TEXT_KINDS:
        drawn.texts += [str(el.value) for el in at.main.get(kind)]
    drawn.metrics = [str(m.value) for m in at.main.get("metric")]
    for slider in at.main.slider:
        label = str(slider.label).lower()
        if label in ("layer", "head"):
            drawn.controls[label] = (int(slider.min), int(slider.max))
    return drawn


def pick_last_option(el) -> None:
    """Choose a select box's, radio's or select slider's last option, as a click on it sends it: by its
    label (the page's own values behind the labels are not known here)."""
    label = el.options[-1]

    class Picked(type(el)):
        @property
        def _widget_state(self):
            state = WidgetState(id=self.id)
            if self.type == "select_slider":
                state.string_array_value.data[:] = [label]
            else:
                state.string_value = label
            return state

    el.__class__ = Picked


def backwards(text: str) -> str:
    return " ".join(reversed(text.split()))


def another_state(at):
    """Every main-area control moved away from its default (the sidebar's modes are left alone)."""
    for el in at.main.text_input:
        el.input(backwards(el.value) or "the bank of the river")
    for el in at.main.text_area:
        el.input("\n".join(backwards(line) for line in el.value.splitlines()))
    for el in at.main.slider:
        if not isinstance(el.value, tuple):
            el.set_value(el.max)
    for el in [*at.main.selectbox, *at.main.radio, *at.main.get("select_slider")]:
        if len(el.options) > 1:
            pick_last_option(el)
    for el in [*at.main.toggle, *at.main.checkbox]:
        el.set_value(not el.value)
    return at.run()


STATES = {"defaults": {}, "every control moved": {}, "lecture mode": {"lecture": "1"}}


@pytest.fixture(scope="module")
def drawn() -> list[Drawn]:
    """Each lesson, section by section (a caption beside its own section's metrics), in each state.

    One AppTest run per (lesson, state, section), shared by every rule."""
    out = []
    for page in PAGES:
        n_sections = max(1, len(open_page(page, every_section=False).tabs))
        for state, query in STATES.items():
            for step in range(n_sections):
                at = open_linked(page, {"step": str(step), **query}, every_section=False)
                # Moving the controls asks every prediction again: skip them, to see what they reveal.
                at = skip_predictions(another_state(at)) if state == "every control moved" else at
                assert not at.exception, (page, state, step, at.exception)
                out.append(read(at, f"{page}, {state}, section {step}"))
    return out


def problems_of(drawn: list[Drawn], check) -> list[str]:
    return [f"{d.where}, {key}: {p}" for d in drawn for key, spec, alt in d.charts for p in check(spec, alt)]


@pytest.mark.slow
def test_the_audit_sees_every_lesson_and_many_charts(drawn):
    seen = {d.where.split(",")[0] for d in drawn if d.charts}
    assert seen == set(PAGES) - {"home"}
    assert sum(len(d.charts) for d in drawn) > 60


@pytest.mark.slow
def test_every_chart_has_a_title_axis_titles_and_a_text_alternative(drawn):
    assert problems_of(drawn, rules.check_labelled) == []


@pytest.mark.slow
def test_bars_start_at_zero_and_a_partial_distribution_names_the_rest(drawn):
    assert problems_of(drawn, lambda spec, alt: rules.check_bars_from_zero(spec)) == []


@pytest.mark.slow
def test_a_zoomed_axis_says_so(drawn):
    assert problems_of(drawn, lambda spec, alt: rules.check_zoom_declared(spec)) == []


@pytest.mark.slow
def test_attention_heatmaps_use_the_whole_zero_to_one_scale(drawn):
    assert problems_of(drawn, lambda spec, alt: rules.check_attention_scale(spec)) == []


@pytest.mark.slow
def test_a_caption_quotes_a_metric_with_the_metrics_digits(drawn):
    problems = [f"{d.where}: {p}" for d in drawn for p in rules.same_quantity_other_digits(d.texts, d.metrics)]
    assert problems == []


@pytest.mark.slow
def test_layers_and_heads_are_numbered_as_their_controls_number_them(drawn):
    """One numbering, from 0: a title or text names a layer / head inside its control's range, and a chart
    that numbers a sequence of layers, heads, blocks or positions starts it at 0."""
    problems = []
    for d in drawn:
        problems += [f"{d.where}: {p}" for p in rules.numbering_outside(d.words_on_charts() + d.texts, d.controls)]
        for key, labels in d.labels_of_charts().items():
            problems += [f"{d.where}, {key}: {p}" for p in rules.labels_not_from_zero(labels)]
    assert problems == []


# ---- each rule catches a bad figure ------------------------------------------------------------


def spec_of(fig: go.Figure) -> dict:
    return decode(json.loads(fig.to_json()))


ALT = "A sentence that says what the chart shows."


def bars(values, *, y_range=None, title="Bars", y_title="probability") -> dict:
    fig = go.Figure(go.Bar(x=["a", "b", "c"], y=values))
    fig.update_layout(title=title, xaxis_title="word", yaxis_title=y_title)
    if y_range:
        fig.update_yaxes(range=y_range)
    return spec_of(fig)


def test_rule_bars_from_zero_catches_a_cut_axis_and_a_missing_rest():
    assert rules.check_bars_from_zero(bars([0.5, 0.3, 0.2])) == []
    assert rules.check_bars_from_zero(bars([0.5, 0.3, 0.2], y_range=[0.15, 0.6]))
    partial = bars([0.05, 0.04, 0.03])
    assert any("rest" in p for p in rules.check_bars_from_zero(partial))
    named = bars([0.05, 0.04, 0.03], title="Top 3 (all other words: 88%)")
    assert rules.check_bars_from_zero(named) == []
    counts = bars([5, 3, 2], y_title="count")
    assert rules.check_bars_from_zero(counts) == []
    one_event = bars([0.05, 0.04, 0.03], y_title="probability of the original word")  # not parts of one whole
    assert rules.check_bars_from_zero(one_event) == []


def line(values, *, title="Line", rangemode=None) -> dict:
    fig = go.Figure(go.Scatter(x=list(range(len(values))), y=values))
    fig.update_layout(title=title, xaxis_title="block", yaxis_title="norm")
    if rangemode:
        fig.update_yaxes(rangemode=rangemode)
    return spec_of(fig)


def test_rule_zoom_catches_an_axis_that_leaves_out_zero_unless_it_says_zoomed():
    drift = [8.0, 8.02, 8.05, 8.08]
    assert rules.check_zoom_declared(line(drift))
    assert rules.check_zoom_declared(line(drift, title="Zoomed in: 8.00 to 8.08")) == []
    assert rules.check_zoom_declared(line(drift, rangemode="tozero")) == []
    assert rules.check_zoom_declared(line([-0.2, 1.0, 4.0])) == []
    assert rules.check_zoom_declared(bars([0.9, 0.95, 1.0], y_range=[0.85, 1.0]))


def heatmap(zmin, zmax, title="Attention") -> dict:
    fig = go.Figure(
        go.Heatmap(z=[[0.2, 0.8], [0.5, 0.5]], zmin=zmin, zmax=zmax, colorbar={"title": {"text": "weight"}})
    )
    fig.update_layout(title=title, xaxis_title="key (attended to)", yaxis_title="query (attending)")
    return spec_of(fig)


def test_rule_attention_scale_catches_a_stretched_colour_scale():
    assert rules.check_attention_scale(heatmap(0.0, 1.0)) == []
    assert rules.check_attention_scale(heatmap(0.2, 0.8))
    assert rules.check_attention_scale(heatmap(0.2, 0.8, title="Colours zoomed to 0.2-0.8")) == []
    cosine = go.Figure(go.Heatmap(z=[[1.0, 0.5]], zmin=-1, zmax=1, colorbar={"title": {"text": "cosine"}}))
    assert rules.check_attention_scale(spec_of(cosine)) == []


def test_rule_labelled_catches_a_missing_title_axis_title_or_alt():
    good = bars([0.5, 0.3, 0.2])
    assert rules.check_labelled(good, ALT) == []
    assert rules.check_labelled(good, "") == ["no text alternative (alt='')"]
    assert rules.check_labelled(bars([0.5, 0.3, 0.2], title=""), ALT) == ["no title"]
    assert rules.check_labelled(bars([0.5, 0.3, 0.2], y_title=""), ALT) == ["yaxis has no title"]


def test_rule_caption_digits_catch_one_number_shown_twice():
    assert rules.same_quantity_other_digits(["largest error 1e-07"], ["1.2e-07"])
    assert rules.same_quantity_other_digits(["agree to 3.1e-07"], ["3.14e-07"])
    assert rules.same_quantity_other_digits(["largest error 1.2e-07"], ["1.2e-07"]) == []
    assert rules.same_quantity_other_digits(["a share of 81%"], ["0.81"]) == []
    assert rules.same_quantity_other_digits(["a share of 81%"], ["0.812"])
    assert rules.same_quantity_other_digits(["cosine 0.4512"], ["0.9866"]) == []


def test_rule_numbering_catches_a_second_convention():
    controls = {"layer": (0, 1), "head": (0, 3)}
    assert rules.numbering_outside(["after layer 0", "after layer 1", "head 3"], controls) == []
    assert rules.numbering_outside(["after layer 2"], controls)
    assert rules.numbering_outside(["layer0, head 0"], controls)
    assert rules.numbering_outside(["Bidirectional (no mask), layer<br>0, head 0"], controls)
    # a text about another, named model is held to that model's numbering, from 0 all the same
    assert rules.numbering_outside(["In all-MiniLM-L6-v2, layer 4, head 11"], controls) == []
    assert rules.numbering_outside(["In all-MiniLM-L6-v2, layer 6"], controls)
    assert rules.labels_not_from_zero(["embeddings", "after layer 0", "after layer 1", "after layer 5"]) == []
    assert rules.labels_not_from_zero(["embeddings", "after layer 1", "after layer 2"])
    assert rules.labels_not_from_zero(["1: a cat", "sentence 1", "sentence 2"])
