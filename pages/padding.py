"""Padding: a batch needs pads, pads need the key padding mask, and pad outputs are never to be read."""

from functools import cache

import streamlit as st

from encoder_core.lessons.padding import (
    LEAK_MIN_PADS,
    LEAK_TRENDS,
    PAD_SHARE_MIN,
    even_share,
    fast_path_pad_outputs,
    leak_trend,
    mean_pad_share,
    pad_count,
    pad_leak,
    padded_attention,
    zero_key_pad_check,
)
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, report_encoding, show_model, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import Section, finish, narrative, render_sections, rerun_open_section, side_by_side, start
from ui.frame.state import ensure_valid, value
from ui.models import lesson_model
from ui.questions import padding as questions
from ui.views import padding as view
from ui.views.figures import numbers_text

DEFAULT_A, DEFAULT_B, DEFAULT_SINGLE = "the cat sat on the mat", "it was happy", "the cat sat"
MAX_EXTRA_PADS = 32
SHORT_ROW = 1  # the batch is [pair, single]; the single sentence is the one that gets padded


chosen = lesson_model(sidebar_model(), sidebar_seed())
model, tokenizer = chosen.encoder, chosen.tokenizer
cfg = model.config
# Each sequence is cut to leave room for the widest extra padding the slider allows.
max_tokens = cfg.max_positions - MAX_EXTRA_PADS

P = LessonParams(
    "padding",
    Param("sentence_a", DEFAULT_A, "text"),
    Param("sentence_b", DEFAULT_B, "text"),
    Param("single", DEFAULT_SINGLE, "text"),
    Param("n_pads", 0, "int", 0, MAX_EXTRA_PADS),
    Param("use_mask", True, "bool"),
    Param("layer", 0, "int", 0, cfg.n_layers - 1),
    Param("head", 0, "int", 0, cfg.n_heads - 1),
    shared=(QUIZ_SEED,),
)
start("padding", P)
note_long_text(P, {"sentence_a": "Pair: sentence A", "sentence_b": "Pair: sentence B", "single": "Single sentence"})
ensure_valid(P)

st.title("Padding and the key padding mask")
st.markdown(
    "Sentences in a batch have different lengths, but a batch is one rectangular tensor. The shorter ones are "
    "filled up with **[PAD]** tokens, and a **key padding mask** tells attention to ignore them. This page shows "
    "what the mask does, and what goes wrong, silently, without it."
)

show_model(chosen)

c_a, c_b, c_s = st.columns(3)
c_a.text_input("Pair: sentence A", key=P.sentence_a.key)
c_b.text_input("Pair: sentence B", key=P.sentence_b.key)
c_s.text_input("Single sentence", key=P.single.key)
c_pads, c_mask, c_layer, c_head = st.columns([3, 2, 2, 2])
c_pads.slider(
    "Extra pads beyond the batch width",
    0,
    MAX_EXTRA_PADS,
    key=P.n_pads.key,
    help="Pads added to every row of the batch.",
)
c_mask.toggle(
    "Padding mask", key=P.use_mask.key, help="Pass the key padding mask to the model (True = ignore that key)."
)
# Only the attention section reads the layer and head: moving them reruns that section alone.
c_layer.slider("Layer", 0, cfg.n_layers - 1, key=P.layer.key, on_change=rerun_open_section)
c_head.slider("Head", 0, cfg.n_heads - 1, key=P.head.key, on_change=rerun_open_section)

text_a = usable_sentence(value(P.sentence_a), DEFAULT_A)
text_b = usable_sentence(value(P.sentence_b), DEFAULT_B)
text_single = usable_sentence(value(P.single), DEFAULT_SINGLE)
pair = tokenizer.encode(text_a, text_b, max_length=max_tokens, truncate=True)
single = tokenizer.encode(text_single, max_length=max_tokens, truncate=True)
report_encoding(pair, max_tokens)
report_encoding(single, max_tokens)
n_extra, use_mask = int(value(P.n_pads)), bool(value(P.use_mask))

batch = tokenizer.pad([pair, single], extra_pads=n_extra)
tokens = batch.tokens[SHORT_ROW]
n_real, width = batch.lengths[SHORT_ROW], batch.ids.shape[1]
n_pads = width - n_real
# What the predictions are made on: the model, and the batch as it reaches the model.
on_this_batch = (chosen.name, sidebar_seed(), batch.ids.tolist())
zero_key = zero_key_pad_check()
# The pad-leak runs (in float64, ~40 passes) and the fast-path check are computed by their own
# sections only, so a change made on another tab does not wait for them.


def count_question():
    count = pad_count(pair, single, n_extra)
    return count, questions.pad_count(count, n_extra), fingerprint(chosen.name, batch.ids.tolist())


def count_settled() -> bool:
    """Has the student answered (or skipped) how many pads the single sentence gets, on this batch?"""
    _, question, context = count_question()
    return revealed(question, context)


def wait_for_count() -> bool:
    """In a section that shows the pads: say so and stop until the pad count is answered."""
    if count_settled():
        return False
    st.info("Answer the prediction in “The batch” first: this section shows the pads.")
    return True


def render_batch() -> None:
    count, question, context = count_question()
    predict_then_see(
        question, context, answer=lambda: questions.pad_count_answer(question, count), reveal=lambda _: reveal_batch()
    )


def reveal_batch() -> None:
    show_chart(view.batch_chart(batch), "batch")
    narrative(
        f"The pair has **{len(pair)} tokens** ([CLS] A [SEP] B [SEP]); the single sentence has **{n_real}** "
        f"([CLS] … [SEP]). The batch is {width} wide"
        + (f" ({n_extra} extra pads on every row)" if n_extra else "")
        + f", so {view.pads_text(batch)}. Each sequence's **segment** row says which sentence a token belongs "
        "to (A or B; pads carry segment id 0, so A). In its **mask** row **True means “ignore this key”**: "
        "PyTorch's convention for `src_key_padding_mask`."
    )
    if width == n_real:
        st.info("The single sentence is as long as the batch, so it has no pads: move the slider to add some.")


def render_attention() -> None:
    if wait_for_count():
        return
    layer, head = int(value(P.layer)), int(value(P.head))  # read here: the sliders rerun this section alone
    attn = padded_attention(model, batch, SHORT_ROW, layer, head)
    charts = view.padded_attention_charts(attn, tokens)
    share = mean_pad_share(attn)
    if not n_pads or share < PAD_SHARE_MIN:  # no pads, or pads that get (almost) nothing: shown, not asked
        if n_pads:
            st.info(
                f"On this head the real tokens give the pads only {share:.3f} of their attention even without the "
                f"mask (under {PAD_SHARE_MIN:g}), so nothing is asked: move the head slider to predict on another head."
            )
        reveal_attention(attn, charts, share if n_pads else None)
        return
    question = questions.pad_share(n_real, n_pads, layer, head, share, even_share(attn))
    context = fingerprint(*on_this_batch, layer, head)
    if not revealed(question, context):  # the worked half: with the mask, the pads get nothing
        show_chart(charts[0], "padded_attention_masked")
    predict_then_see(question, context, answer=lambda: share, reveal=lambda _: reveal_attention(attn, charts, share))


def reveal_attention(attn, charts, share: float | None) -> None:
    show_chart_row(charts, ("padded_attention_masked", "padded_attention_unmasked"), side_by_side(width))
    if share is not None:
        st.markdown(
            f"Without the mask, a real token gives the pads **{share:.3f}** of its attention on average. "
            f"{n_pads} of the {width} keys are pads: a head that spread its attention evenly would give them "
            f"{n_pads / width:.3f}."
        )
    show_chart(view.pad_mass_chart(attn, tokens), "pad_mass")
    narrative(
        "With the mask, every [PAD] **column** is exactly 0: the mask adds −∞ to those scores before the "
        "softmax, and e^−∞ = 0. Without it, the pads are ordinary keys and take their share of every row. The "
        "pad **rows** (pads as queries) are computed either way; they come back to that below."
    )
    show_code(padded_attention)


def render_leak() -> None:
    if wait_for_count():
        return
    narrative(
        "The **pad-leak gap** is the largest change in any real token's final output between the padded batch "
        "and the single sentence run on its own: 0 means the pads changed nothing. It is computed in double "
        "precision, so float32 noise of about 1e-6 does not blur “nothing” and “something”."
    )
    leak = cache(lambda: pad_leak(model, batch, SHORT_ROW, min_pads=LEAK_MIN_PADS))  # run once, after the commit
    question = questions.leak_trend(max(LEAK_MIN_PADS, n_pads))
    predict_then_see(
        question,
        fingerprint(*on_this_batch),
        answer=lambda: LEAK_TRENDS.index(leak_trend(leak())),
        reveal=lambda _: reveal_leak(leak()),
        score=lambda guess, answer: questions.leak_verdict(question, leak(), guess, answer),
    )


def reveal_leak(leak) -> None:
    if use_mask:
        st.success(
            f"Mask on: the single sentence's outputs in this batch match its outputs alone (gap {leak.gap_masked:.1e})."
        )
    else:
        st.error(
            f"Mask off: the single sentence's outputs in this batch moved by up to {leak.gap_unmasked:.3g} "
            f"because of its {leak.n_pads} pads."
        )
    m1, m2 = st.columns(2)
    m1.metric("Gap with the mask", f"{leak.gap_masked:.1e}")
    m2.metric("Gap without the mask", f"{leak.gap_unmasked:.3g}")
    st.markdown(view.leak_trend_text(leak))
    show_chart(view.leak_curve_chart(leak, use_mask), "pad_leak")
    with st.expander("Per token: how far each real output moved"):
        show_table(view.leak_per_token_table(leak, tokens), hide_index=True)
    narrative(
        "With the mask the gap is zero, rounding aside, however many pads there are. Without it, it is clearly "
        "not zero, and it changes with the number of pads: each one is another key taking a share of every "
        "softmax row.\n\n"
        "**Forgetting the mask doesn't crash anything.** The model runs, the shapes are right; it just makes a "
        "sentence's vectors depend on how long its batch-mates were, which no test on single sentences catches."
    )
    show_code(pad_leak, leak_trend)


def render_zero_key() -> None:
    show_chart_row(view.zero_key_charts(zero_key), ("zero_key_unmasked", "zero_key_masked"))
    st.markdown(
        f"**No mask:** rows x0, x1, x2 give the pad {numbers_text(zero_key.pad_weight_unmasked)}; "
        "their outputs move by up "
        f"to {zero_key.gap_unmasked:.3f}. **Masked:** the pad gets 0 and the gap is {zero_key.gap_masked:.1f}."
    )
    narrative(
        "A small check by hand, on the worked example's tensors (torch seed 7): its first three tokens, plus a "
        "pad whose input is all zeros, so its key and value are zero too. A zero key scores 0 against every "
        "query, and 0 is not −∞: after the softmax the pad still gets a share of every real row, and the "
        "outputs move. Masked, the real outputs equal those of the three tokens alone exactly."
    )
    show_code(zero_key_pad_check)


def render_pad_rows() -> None:
    show_table(view.zero_key_outputs_table(zero_key), hide_index=True)
    pad_out, mean_v = zero_key.outputs_masked[3], zero_key.mean_real_value
    narrative(
        "The pad's own row is still computed. In the check above its query is zero, so it spreads its attention "
        f"evenly over the three real tokens and its output ({pad_out[0]:.4f}, {pad_out[1]:.4f}) is just their "
        f"average value ({mean_v[0]:.4f}, {mean_v[1]:.4f}). It is *some* vector, and it means nothing: nothing "
        "downstream (pooling, a loss, a classifier) should ever read a pad's output."
    )
    if wait_for_count():  # the rest runs this batch, pads and all
        return
    fast = fast_path_pad_outputs(model, batch, SHORT_ROW, seed=sidebar_seed())
    if fast.pad_positions:
        show_chart(view.fast_path_chart(fast), "fast_path")
    narrative(
        "Another reason: PyTorch's own `nn.TransformerEncoder` does not even agree with itself about them. Here a "
        "fresh one of the same shape (seeded with the sidebar's seed) runs this batch's embeddings with the "
        "padding mask. In train mode (dropout 0) the pads are computed like any token. In eval mode, under "
        "`torch.inference_mode`, it takes a fast path that packs the real tokens into a nested tensor, skips the "
        "pads, and fills their outputs with zeros. The real tokens agree in both modes "
        f"(max difference {fast.real_max_diff:.1e}); the pad rows do not."
    )
    show_code(fast_path_pad_outputs)


sections = [
    Section("The batch", "One rectangle: the single sentence is filled up with [PAD] tokens.", render_batch),
    Section(
        "Attention with and without the mask",
        "With the mask the pads get exactly 0. Without it, what share of the attention do they take?",
        render_attention,
        tab="With and without the mask",
    ),
    Section(
        "The pad-leak gap",
        "Leave the mask off and append pads: do the sentence's outputs move, and how as the pads add up?",
        render_leak,
    ),
    Section(
        "A zero key is not a masked key",
        "A pad with key 0 still scores 0, not −∞, and still takes attention.",
        render_zero_key,
        tab="Zero key vs masked key",
    ),
    Section("The pad's own output", "Pads get an output too; never read it.", render_pad_rows),
]
sections.append(check_yourself_section("padding"))
render_sections(sections, P)
finish(P)
