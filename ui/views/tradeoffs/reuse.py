"""Section 1, no reuse of earlier work: append a token, and what a cache saves a causal model."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import AppendCosts, AppendReuse

from ..figures import Chart, earlier_token_shifts, esc, line_chart, per_token_table, short_number

MODES = ("causal mask, keys and values cached", "bidirectional, recomputed")


def _legend_below(fig: go.Figure) -> go.Figure:
    """Half-width charts: a legend at the side would take half the plot."""
    fig.update_layout(legend={"orientation": "h", "y": -0.3}, height=420)
    return fig


def append_shift_figure(r: AppendReuse, tokens: Sequence[str]) -> go.Figure:
    return earlier_token_shifts(
        tokens[: r.n_earlier],
        r.shift_causal,
        r.shift_bidirectional,
        title="Append one token: how far earlier vectors move",
        y_title="change of its final vector (L2)",
        text_format=".2g",
    )


def append_shift_alt(r: AppendReuse, new_token: str) -> str:
    return (
        f"Appending “{esc(new_token)}” moves the {r.n_earlier} earlier vectors by at most "
        f"{short_number(r.max_causal)} under the causal mask and by up to {short_number(r.max_bidirectional)} "
        "without it."
    )


def append_shift_table(r: AppendReuse, tokens: Sequence[str]) -> pd.DataFrame:
    columns = {"change, causal": r.shift_causal, "change, bidirectional": r.shift_bidirectional}
    return per_token_table(tokens[: r.n_earlier], columns)


def append_shift_chart(r: AppendReuse, tokens: Sequence[str], new_token: str) -> Chart:
    return Chart(append_shift_figure(r, tokens), append_shift_alt(r, new_token), append_shift_table(r, tokens))


def reuse_text(r: AppendReuse, new_token_md: str) -> str:
    return (
        f"Append **{new_token_md}** and run again. Under a causal mask no earlier position ever looked "
        "to its right, so every earlier vector, and every key and value made from them, stays where it was "
        f"(largest change in any layer's input {short_number(r.layer_input_shift_causal)}): a decoder "
        "keeps them in a **KV cache** and computes only the new row. Bidirectionally every earlier vector moves "
        f"(layer inputs by up to {short_number(r.layer_input_shift_bidirectional)}), so the whole "
        "sequence is run again."
    )


def saving_text(c: AppendCosts) -> str:
    """The prediction's answer: how many times the cached appends' FLOPs the encoder spends."""
    return (
        f"Appending {c.n} tokens to {c.prefix}, the encoder spends **{c.ratio:.1f} times** the FLOPs of the cached "
        f"causal model: {c.flops_bidirectional[-1]:,} against {c.flops_cached[-1]:,}. Each append reruns about T "
        "rows instead of one, so the saving is close to the sequence's mean length."
    )


def _appends_figure(
    c: AppendCosts, cached: list[float], bidirectional: list[float], title: str, y_title: str
) -> go.Figure:
    """A cost of the N appends, cumulative, for the cached causal model and the bidirectional one."""
    series = {MODES[0]: cached, MODES[1]: bidirectional}
    return _legend_below(
        line_chart(list(range(c.n + 1)), series, title=title, x_title="tokens appended, N", y_title=y_title)
    )


def append_flops_figure(c: AppendCosts) -> go.Figure:
    cached, bidirectional = [f / 1e6 for f in c.flops_cached], [f / 1e6 for f in c.flops_bidirectional]
    title = f"FLOPs of N appends to {c.prefix} tokens, counted"
    return _appends_figure(c, cached, bidirectional, title, "matrix-product FLOPs, millions (cumulative)")


def append_costs_alt(c: AppendCosts) -> str:
    return (
        f"After {c.n} appends the bidirectional model has done {c.flops_bidirectional[-1]:,} FLOPs and the "
        f"cached causal one {c.flops_cached[-1]:,}: {c.ratio:.1f} times fewer. The closed form gives "
        f"{c.closed_form[0]:,} and {c.closed_form[1]:,}."
    )


def append_costs_table(c: AppendCosts) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "N appended": list(range(c.n + 1)),
            "FLOPs, cached causal": c.flops_cached,
            "FLOPs, bidirectional": c.flops_bidirectional,
            "ms, cached causal": [s * 1e3 for s in c.seconds_cached],
            "ms, bidirectional": [s * 1e3 for s in c.seconds_bidirectional],
        }
    )


def append_flops_chart(c: AppendCosts) -> Chart:
    return Chart(append_flops_figure(c), append_costs_alt(c), append_costs_table(c))


def append_time_figure(c: AppendCosts) -> go.Figure:
    cached, bidirectional = [s * 1e3 for s in c.seconds_cached], [s * 1e3 for s in c.seconds_bidirectional]
    return _appends_figure(
        c, cached, bidirectional, "The same appends: wall time, measured", "milliseconds (cumulative)"
    )


def append_time_alt(c: AppendCosts) -> str:
    return (
        f"Measured: {c.seconds_bidirectional[-1] * 1e3:.1f} ms bidirectional against "
        f"{c.seconds_cached[-1] * 1e3:.1f} ms cached, for {c.n} appends."
    )


def append_time_chart(c: AppendCosts) -> Chart:
    return Chart(append_time_figure(c), append_time_alt(c))


def flops_text(c: AppendCosts) -> str:
    slower = c.seconds_cached[-1] >= c.seconds_bidirectional[-1]
    clock = (
        " Here the clock favours the full rerun: on a model this small each cached step's fixed Python overhead "
        "outweighs its arithmetic. Choose all-MiniLM-L6-v2 in the sidebar to see the FLOPs gap in the time too."
        if slower
        else ""
    )
    return (
        f"Each FLOP count is read off the shapes of the run itself (every matrix product, 2·rows·in·out), and "
        f"equals the closed form: bidirectional L[(8D² + 4D·d_ff)ΣT + 4DΣT²] = {c.closed_form[0]:,}, "
        f"cached L[(8D² + 4D·d_ff)N + 4DΣT] = {c.closed_form[1]:,}. The times are one run's, on a "
        "shared server."
    ) + clock
