"""Charts every session shares: built once per server process for each sentence and setting, and kept.

A hall of students opens a lesson on the same defaults and types the sentence the lecturer says: the charts
below are built by their lesson's view once for all of them. Each is a shared chart (ui.frame.charts.shared_chart):
styled for the default view when it is built and never changed after; show_chart styles a copy for lecture
mode or high contrast. An argument whose name starts with "_" is not part of the cache's key: it follows from
the arguments before it (the result those inputs give), which the page has already computed.
"""

from __future__ import annotations

import streamlit as st

from encoder_core.lessons import block as core
from encoder_core.objectives.mlm_masking import exact_counts
from ui.frame.charts import shared_chart
from ui.views import block as block_view
from ui.views import masking as masking_view
from ui.views import tradeoffs as tradeoffs_view
from ui.views.figures import Chart


# Five plotly figures: about 0.2 MB for a sentence of 15 tokens, 3.8 MB for 512. 16 kept: 61 MB at most.
@st.cache_resource(show_spinner=False, max_entries=16)
def block_input_charts(seed: int, norm: str, ids: tuple, segments: tuple, tokens: tuple, _parts) -> dict[str, Chart]:
    """The block lesson's first section: the three embeddings, their sum and its LayerNorm, by chart key
    (_parts: the walk's embeddings, the same at every layer)."""
    sizes, normed = core.summarize_parts(_parts), core.token_stats(_parts.normed)
    charts = block_view.embedding_charts(_parts, list(tokens), sizes, normed)
    return {key: shared_chart(chart) for key, chart in charts.items()}


# About 0.24 MB for a sentence of 15 tokens, 2.4 MB for 512. 16 kept: 39 MB at most.
@st.cache_resource(show_spinner=False, max_entries=16)
def masking_draw_chart(model: str, ids: tuple, rate: float, exact: bool, seed: int, labels: bool, _draw) -> Chart:
    """The masking lesson's draw, token by token (_draw: the draw of the model's tokenizer on ids, these settings)."""
    return shared_chart(masking_view.draw_chart(_draw, labels))


@st.cache_resource(show_spinner=False, max_entries=32)
def masking_split_chart(n: int, rate: float) -> Chart:
    """The worked count of n tokens at this rate: it does not read the sentence, so a class shares one."""
    return shared_chart(masking_view.split_chart(exact_counts(n, rate), rate))


# Bars over at most 64 tokens (the lesson's cap): small.
@st.cache_resource(show_spinner=False, max_entries=64)
def append_shift_chart(key: tuple, new_id: int, tokens: tuple, new_token: str, _reuse) -> Chart:
    """Trade-offs' first chart, how far each earlier token moved when one was appended (key: the model's choice,
    seed and the sentence's ids; _reuse: lesson.append_one_token of them)."""
    return shared_chart(tradeoffs_view.append_shift_chart(_reuse, list(tokens), new_token))
