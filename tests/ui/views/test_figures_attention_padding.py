"""The attention and padding lessons' figure builders, without Streamlit: data in == data drawn, labels escaped."""

import numpy as np
import pytest
import torch

from encoder_core.lessons.attention import compare_masks, contrast_word, drop_last_token, look_ahead, seed001_reading
from encoder_core.lessons.padding import fast_path_pad_outputs, pad_leak, padded_attention, zero_key_pad_check
from ui.views import attention as attention_view
from ui.views import padding as padding_view

MARKUP = "<b>x</b> <script>alert(1)</script> &amp; the cat"


@pytest.fixture(scope="module")
def batch(tok):
    return tok.pad([tok.encode("the cat sat on the mat", "it was happy"), tok.encode("the cat sat")])


def all_labels(fig) -> list[str]:
    out = [fig.layout.title.text or ""]
    for trace in fig.data:
        for attr in ("x", "y", "name", "text"):
            value = getattr(trace, attr, None)
            if value is not None and not isinstance(value, (int, float)):
                out += [str(v) for v in np.asarray(value, dtype=object).ravel()]
    return out


def test_mask_pair_figures_draw_the_comparison(small_model, tok):
    tokens = ["[CLS]", "the", "<b>x</b>", "&", "[SEP]"]  # label text as a user could make it
    c = compare_masks(small_model, tok.encode("the cat sat").ids, 1, 2)
    bi, causal = attention_view.mask_pair_figures(c, tokens)
    np.testing.assert_array_equal(bi.data[0].z, c.bidirectional.numpy().astype(np.float64))
    np.testing.assert_array_equal(causal.data[0].z, c.causal.numpy().astype(np.float64))
    assert (bi.data[0].zmin, bi.data[0].zmax) == (0.0, 1.0)
    assert "layer 1, head 2" in bi.layout.title.text
    assert list(bi.data[0].y) == ["0 [CLS]", "1 the", "2 &lt;b&gt;x&lt;/b&gt;", "3 &amp;", "4 [SEP]"]
    assert bi.data[0].texttemplate  # values in the cells for a short sentence
    title = bi.layout.title  # lifted clear of the key labels on the top axis
    assert title.yref == "paper" and title.yanchor == "bottom" and title.automargin and title.pad.b >= 50
    table = attention_view.mask_pair_table(c, tokens)
    assert len(table) == 25 and table["causal"].sum() == pytest.approx(5.0, abs=1e-5)
    sums = attention_view.row_sums_table(c, tokens)
    assert sums["row sum, causal"].tolist() == c.row_sums_causal


def test_drop_last_figure(small_model, tok):
    enc = tok.encode("the cat sat down")
    r = drop_last_token(small_model, enc.ids)
    fig = attention_view.drop_last_figure(r, enc.tokens)
    assert [t.name for t in fig.data] == ["causal mask", "bidirectional"]
    np.testing.assert_array_equal(fig.data[0].y, r.shift_causal)
    np.testing.assert_allclose(fig.data[1].y, r.shift_bidirectional)
    assert list(fig.data[0].x) == ["0 [CLS]", "1 the", "2 cat", "3 sat", "4 down"]
    assert "[SEP]" in fig.layout.title.text
    assert attention_view.drop_last_table(r, enc.tokens)["shift, causal"].tolist() == r.shift_causal


def test_word_contrast_figure(small_model, tok):
    a, b = tok.encode("she sat on the bank of the river"), tok.encode("she sat on the bank and counted the money")
    r = contrast_word(small_model, a.ids, b.ids, a.tokens, b.tokens, "bank")
    fig = attention_view.word_contrast_figure(r)
    assert list(fig.data[0].x) == ["embeddings", "after layer 0", "after layer 1"]  # layers counted from 0
    np.testing.assert_array_equal(fig.data[0].y, r.distance_causal)
    np.testing.assert_allclose(fig.data[1].y, r.distance_bidirectional)
    assert attention_view.word_contrast_table(r)["distance, bidirectional"].tolist() == r.distance_bidirectional


def test_seed001_figures():
    reading = seed001_reading()
    bi, causal = attention_view.seed001_figures(reading)
    np.testing.assert_allclose(bi.data[0].z[0], [0.2585, 0.0202, 0.0440, 0.6773], atol=5e-5)
    assert list(bi.data[0].x) == ["x0", "x1", "x2", "x3"]
    np.testing.assert_array_equal(causal.data[0].z[-1], bi.data[0].z[-1])
    assert len(attention_view.seed001_table(reading)) == 16


def test_batch_figure_marks_exactly_the_pads_and_writes_every_token(batch):
    fig = padding_view.batch_figure(batch)
    heat = fig.data[0]
    mask = batch.key_padding_mask.numpy().astype(int)
    # Three rows per sequence (the tokens, the segment row and the mask row the text speaks of), each dark on pads.
    np.testing.assert_array_equal(np.asarray(heat.z), np.repeat(mask, 3, axis=0))
    assert list(heat.y) == [f"{s}: {r}" for s in ("pair", "single") for r in ("token", "segment", "mask")]
    rows = [list(row) for row in heat.text]
    assert rows[0::3] == batch.tokens
    assert rows[1] == ["AB"[int(s)] for s in batch.segments[0]] and "B" in rows[1]
    assert rows[5] == ["True" if m else "False" for m in mask[1]]
    dark = [[t for t, m in zip(seq, row) if m] for seq, row in zip(batch.tokens, batch.key_padding_mask.tolist())]
    assert all(t == "[PAD]" for row in dark for t in row) and sum(map(len, dark)) > 0


def test_batch_table_shows_tokens_ids_segments_and_mask(batch):
    table = padding_view.batch_table(batch)
    single = table[table["sequence"] == "single"].set_index("row")
    assert [single.loc["token", str(t)] for t in range(12)] == batch.tokens[1]
    assert single.loc["id", "5"] == "0"
    assert single.loc["ignore key (mask)", "4"] == "False" and single.loc["ignore key (mask)", "5"] == "True"
    pair = table[table["sequence"] == "pair"].set_index("row")
    assert pair.loc["segment", "7"] == "A" and pair.loc["segment", "8"] == "B"


def test_pads_text_names_the_pads_of_whichever_sequence_is_shorter(tok):
    longer_single = tok.pad([tok.encode("it was", "ok"), tok.encode("the cat sat on the mat all day")])
    pads = [longer_single.ids.shape[1] - n for n in longer_single.lengths]
    assert pads[0] > 0 and pads[1] == 0
    assert (
        padding_view.pads_text(longer_single)
        == f"the pair is followed by **{pads[0]} [PAD]**, the single sentence by **0 [PAD]**"
    )


def test_padding_figures(small_model, batch):
    tokens = batch.tokens[1]
    pa = padded_attention(small_model, batch, 1, 0, 0)
    masked, unmasked = padding_view.padded_attention_figures(pa, tokens)
    np.testing.assert_array_equal(masked.data[0].z, pa.masked.numpy().astype(np.float64))
    np.testing.assert_array_equal(unmasked.data[0].z, pa.unmasked.numpy().astype(np.float64))
    assert (masked.data[0].z[:, 5:] == 0).all()
    mass = padding_view.pad_mass_figure(pa, tokens)
    np.testing.assert_array_equal(mass.data[0].y, [0.0] * 5)
    np.testing.assert_allclose(mass.data[1].y, pa.pad_mass_unmasked)
    assert len(padding_view.padded_attention_table(pa, tokens)) == 144

    leak = pad_leak(small_model, batch, 1)
    curve = padding_view.leak_curve_figure(leak)
    np.testing.assert_array_equal(curve.data[0].x, leak.pad_counts)
    np.testing.assert_array_equal(curve.data[0].y, leak.curve_masked)
    np.testing.assert_array_equal(curve.data[1].y, leak.curve_unmasked)
    assert len(curve.data) == 2  # no marker unless the page says which setting this batch is in
    on, off = padding_view.leak_curve_figure(leak, mask_on=True), padding_view.leak_curve_figure(leak, mask_on=False)
    assert (on.data[2].x[0], on.data[2].y[0]) == (leak.n_pads, leak.gap_masked)
    assert (off.data[2].x[0], off.data[2].y[0]) == (leak.n_pads, leak.gap_unmasked)
    # the marker sits on its curve: the curve's last point is this batch's pad count
    assert leak.pad_counts[-1] == leak.n_pads and off.data[1].y[-1] == pytest.approx(leak.gap_unmasked)
    assert padding_view.leak_per_token_table(leak, tokens)["change, without mask"].tolist() == leak.per_token_unmasked

    check = zero_key_pad_check()
    zu, zm = padding_view.zero_key_figures(check)
    assert list(zu.data[0].x) == ["x0", "x1", "x2", "[PAD]"]
    np.testing.assert_array_equal(zm.data[0].z[:, 3], [0, 0, 0, 0])
    assert padding_view.zero_key_outputs_table(check)["alone"].iloc[3] == "—"

    fast = fast_path_pad_outputs(small_model, batch, 1)
    bars = padding_view.fast_path_figure(fast)
    np.testing.assert_allclose(bars.data[0].y, fast.norms_train)
    np.testing.assert_array_equal(bars.data[1].y, fast.norms_eval)
    assert list(bars.data[0].x) == [f"pos {p}" for p in range(5, 12)]


def test_user_markup_never_reaches_a_label_unescaped(small_model, tok):
    enc = tok.encode(MARKUP)
    tokens = [MARKUP, *enc.tokens[1:]]  # even a raw label is escaped by the builders
    c = compare_masks(small_model, enc.ids, 0, 0)
    figs = [
        *attention_view.mask_pair_figures(c, tokens),
        attention_view.drop_last_figure(drop_last_token(small_model, enc.ids), tokens),
    ]
    b = tok.pad([enc, tok.encode("the cat")])
    pa = padded_attention(small_model, b, 1, 0, 0)
    padded_tokens = [MARKUP, *b.tokens[1][1:]]
    figs += [*padding_view.padded_attention_figures(pa, padded_tokens), padding_view.pad_mass_figure(pa, padded_tokens)]
    for fig in figs:
        for label in all_labels(fig):
            assert "<script" not in label and "<b>" not in label


def test_the_grid_shown_before_a_prediction_carries_only_its_own_numbers(small_model, tok, batch):
    enc = tok.encode("the cat sat")
    bi, causal = attention_view.mask_pair_charts(compare_masks(small_model, enc.ids, 0, 0), enc.tokens)
    assert list(bi.table.columns) == ["query", "key", "bidirectional"]  # no causal column before the commit
    assert list(causal.table.columns) == ["query", "key", "bidirectional", "causal"]
    seed_bi, seed_causal = attention_view.seed001_charts(seed001_reading())
    assert "causal" not in seed_bi.table.columns and "causal" in seed_causal.table.columns
    masked, unmasked = padding_view.padded_attention_charts(
        padded_attention(small_model, batch, 1, 0, 0), batch.tokens[1]
    )
    assert list(masked.table.columns) == ["query", "key", "with mask"]  # no unmasked column before the commit
    assert "without mask" in unmasked.table.columns


def test_the_look_ahead_charts(small_model, tok):
    enc = tok.encode("the cat sat down")
    grid = torch.softmax(torch.randn(len(enc.ids), len(enc.ids), generator=torch.Generator().manual_seed(0)), -1)
    grid[2] = torch.tensor([0.0, 0.05, 0.05, 0.9, 0.0, 0.0])
    la = look_ahead(grid, enc.tokens, 0, 1)
    chart = attention_view.look_ahead_chart(grid, enc.tokens, la, "a trained model")
    np.testing.assert_allclose(chart.figure.data[0].z, grid.numpy(), atol=1e-7)
    assert "layer 0, head 1, on your sentence" in chart.figure.layout.title.text
    assert chart.alt.startswith("On your sentence, “cat” (token 2) gives “sat” (token 3) 0.90 of its attention")
    assert len(chart.table) == 36 and list(chart.table.columns) == ["query", "key", "weight"]
    example = attention_view.look_ahead_example_chart(grid, enc.tokens, "a trained model", 0, 1, 0.876)
    assert "on an example" in example.figure.layout.title.text and "0.88 of its attention" in example.alt
    assert "on your sentence" in attention_view.head_grid_chart(grid, enc.tokens, "m", 0, 1).figure.layout.title.text


def test_why_a_row_question_is_not_asked(small_model, tok):
    from encoder_core.lessons.attention import RowFacts

    backwards = RowFacts([0.5, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0], [1, 2, 3])
    assert "rows 1, 2 come out the same as well" in attention_view.rows_not_asked(backwards, 4)
    still = RowFacts([1e-4, 0.2, 0.0], [1e-4, 0.2, 0.0], [2])
    assert "only 1.0e-04 of its attention" in attention_view.rows_not_asked(still, 3)


@pytest.mark.parametrize("extra", [0, 3, 16])
def test_in_lecture_mode_a_wide_batch_keeps_its_words(tok, small_model, extra):
    """The batch's cells are its content (tokens, A/B, True/False): past the width where a heatmap's numbers give
    way, lecture mode keeps its words, at the size read from the back of a hall, up to LECTURE_MAX_WORD_COLUMNS
    columns. A heatmap of numbers as wide drops its own (the numbers panel has them)."""
    from ui.views.figures import LECTURE_CELL_FONT, LECTURE_MAX_CELL_COLUMNS, LECTURE_MAX_WORD_COLUMNS, styled

    long = "the cat sat on the mat and the dog slept by the warm fire"  # 14 words
    wide = tok.pad([tok.encode(long, "it was late"), tok.encode("the cat")], extra_pads=extra)
    columns = wide.ids.shape[1]
    assert columns > LECTURE_MAX_CELL_COLUMNS
    trace = styled(padding_view.batch_figure(wide), lecture=True).data[0]
    if columns <= LECTURE_MAX_WORD_COLUMNS:
        assert trace.texttemplate == "%{text}" and len(trace.text) == 6  # three rows per sequence, every cell
        assert trace.textfont.size == LECTURE_CELL_FONT
    else:
        assert trace.texttemplate is None  # past what a cell can hold at that size: hover and the table have them
    grid = compare_masks(small_model, wide.ids[0].tolist(), 0, 0)
    numbers = styled(attention_view.mask_pair_figures(grid, wide.tokens[0])[0], lecture=True)
    assert numbers.data[0].texttemplate is None  # numbers in a wide grid: the numbers panel has them
