"""Masked language modelling: BERT's pre-training objective, one token at a time."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from encoder_core import MAX_SEED
from encoder_core.checkpoint import fill_mask
from encoder_core.corpus import nsp_pairs
from encoder_core.lessons import masking as lesson
from encoder_core.loss import loss_breakdown
from encoder_core.masking import exact_counts, mask_tokens
from encoder_core.train import train_mlm
from ui.frame.charts import show_figure
from ui.frame.code import show_code
from ui.frame.inputs import report_encoding, usable_sentence
from ui.frame.modes import sidebar_seed
from ui.frame.params import Param
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section, escape_md
from ui.frame.sections import Section, finish, narrative, render_sections, start
from ui.frame.state import ensure_valid
from ui.models import cached_leakage, run_leakage, seconds_per_step, trained_mlm, word_tokenizer
from ui.views import masking as figs

DEFAULT_SENTENCE = "the cat sat on the mat and the dog slept on the floor"
DEFAULT_FILL = "the [MASK] sat on the mat"
MAX_WORDS = 512
MAX_FILL_CHARTS = 6
N_NSP_PAIRS = 6

PARAMS = [
    Param("mlm_sentence", DEFAULT_SENTENCE, "text"),
    Param("mlm_rate", 0.15, "float", 0.0, 1.0),
    Param("mlm_exact", True, "bool"),
    Param("mlm_seed", 0, "int", 0, MAX_SEED),
    Param("mlm_n", 200, "int", 0, 1_000_000),
    Param("fill_sentence", DEFAULT_FILL, "text"),
    Param("fill_position", 0, "int", 0, MAX_WORDS),
    Param("leak_steps", 300, "int", 10, 2000),
    QUIZ_SEED,
]


def draw_again() -> None:
    """Dynamic masking: a new pattern per draw. The seed moves on, so the link still reproduces the view."""
    st.session_state["mlm_seed"] = (int(st.session_state.get("mlm_seed", 0)) + 1) % (MAX_SEED + 1)


def fmt_mean(value: float) -> str:
    return "undefined" if value != value else f"{value:.4f}"  # nan: nothing was chosen, no positions to average


start("masking", PARAMS)
st.title("Masked language modelling")
narrative(
    "BERT learns by a cloze game: hide some tokens, read the rest in both directions, and guess what was "
    "hidden. Below, your sentence goes through that game one token at a time: which positions are chosen, "
    "what the model is actually given, which positions are scored, and what the lab's own trained model "
    "guesses."
)

trained, load_error = trained_mlm()
tokenizer = trained.tokenizer if trained else word_tokenizer()
max_positions = trained.model.config.max_positions if trained else 512

# ---- controls: always at the top, also in lecture mode ----
with st.container(border=True):
    st.markdown("**The masking draw**")
    c1, c2, c3 = st.columns([3, 2, 2])
    c1.text_input("Sentence", key="mlm_sentence", max_chars=2000, help="Lower-cased and split into words.")
    c2.slider("Masking rate", 0.0, 1.0, step=0.01, key="mlm_rate", help="BERT used 0.15.")
    c3.toggle(
        "Exact count",
        key="mlm_exact",
        help="On: exactly round(rate x eligible) positions, split 80/10/10 exactly. "
        "Off: BERT's original coin flip for every token, so the count varies.",
    )
    c4, c5, c6 = st.columns([2, 2, 3])
    c4.number_input("Masking seed", 0, MAX_SEED, step=1, key="mlm_seed")
    c5.button("Draw again", on_click=draw_again, icon=":material/casino:", help="A new masking pattern (new seed).")
    c6.number_input("Worked count: N tokens", 0, 1_000_000, step=10, key="mlm_n")
    st.markdown("**Fill-mask**")
    f1, f2 = st.columns([3, 2])
    f1.text_input("Sentence with [MASK]", key="fill_sentence", max_chars=2000, help="Type [MASK] where a word goes.")
    fill_text = usable_sentence(st.session_state["fill_sentence"], DEFAULT_FILL)
    fill_words = tokenizer.split(fill_text)[:MAX_WORDS]
    ensure_valid([Param("fill_position", 0, "int", 0, len(fill_words))])
    f2.selectbox(
        "Or hide one word",
        list(range(len(fill_words) + 1)),
        key="fill_position",
        format_func=lambda i: "none (use the [MASK]s typed)" if i == 0 else f"word {i}: {fill_words[i - 1]}",
    )
    st.markdown("**Leakage experiment**")
    st.number_input(
        "Training steps for each of the two tiny models",
        10,
        2000,
        step=50,
        key="leak_steps",
        help="The sidebar seed sets their shared starting weights and batches.",
    )

if load_error:
    st.error(f"The trained model could not be loaded, so the sections that need it are skipped.\n\n{load_error}")

sentence = usable_sentence(st.session_state["mlm_sentence"], DEFAULT_SENTENCE)
enc = tokenizer.encode(sentence, max_length=max_positions, truncate=True)
report_encoding(enc, max_positions)
draw = lesson.draw_masks(
    tokenizer,
    enc.ids,
    rate=st.session_state["mlm_rate"],
    exact=st.session_state["mlm_exact"],
    seed=st.session_state["mlm_seed"],
)
forward = lesson.mlm_forward(trained.model, draw.result.inputs, draw.result.labels) if trained else None


def needs_model() -> bool:
    if trained is None:
        st.info("This part needs the trained model (see the message at the top of the page).")
    return trained is not None


# ---- 1. choose, corrupt, label ----
def render_draw() -> None:
    counts, rule = draw.counts, draw.rule
    if counts.eligible == 0:
        st.warning(
            "This sentence has no ordinary token to choose: [CLS], [SEP], [PAD] (and here [UNK] and a typed "
            "[MASK]) are never eligible, so nothing is masked and there is nothing to learn from it."
        )
    elif counts.chosen == 0:
        st.warning(
            f"Nothing was chosen (rate {draw.rate:g} of {counts.eligible} eligible tokens), so every label is "
            "-100: this sentence would add no loss and teach the model nothing."
        )
    m = st.columns(5)
    m[0].metric("eligible", counts.eligible)
    m[1].metric("chosen", counts.chosen)
    m[2].metric("[MASK]", counts.masked)
    m[3].metric("random token", counts.random)
    m[4].metric("kept", counts.kept)
    if draw.exact:
        verdict = "matches" if draw.follows_rule else "does NOT match"
        st.markdown(
            f"The rule for **{rule.eligible}** eligible tokens at rate **{draw.rate:g}**: "
            f"round({draw.rate:g} x {rule.eligible}) = **{rule.chosen}** chosen, then 80/10/10 gives "
            f"**{rule.masked}** [MASK], **{rule.random}** random, **{rule.kept}** kept. This draw {verdict} it."
        )
    else:
        st.markdown(
            f"Coin flip: each of the {counts.eligible} eligible tokens is chosen with probability {draw.rate:g}, "
            f"so on average {draw.expected_chosen:.2f} are chosen (give or take {draw.chosen_spread:.2f}); this "
            f"draw chose **{counts.chosen}**. The exact rule would choose {rule.chosen}."
        )
    rows = draw.rows()
    show_figure(
        figs.draw_figure(rows, title=f"This draw: {counts.chosen} of {counts.eligible} eligible tokens chosen"),
        "masking_draw",
        alt=f"Of {counts.eligible} eligible tokens in the sentence, {counts.chosen} were chosen: {counts.masked} "
        f"became [MASK], {counts.random} a random token and {counts.kept} were kept; every other position is "
        "labelled -100.",
        table=pd.DataFrame(rows),
    )
    narrative(
        "Only chosen positions get a label (their original id); every other position is labelled **-100**, "
        "the value PyTorch's cross-entropy skips. Why not always [MASK]? [MASK] never occurs when the model is "
        "later used on real text. If it were the only corruption, the model could learn that only [MASK] "
        "positions need a good vector. A random word, or the true word left in place, means any position might "
        "be scored, so every position's vector has to stay honest."
    )
    n = int(st.session_state["mlm_n"])
    worked = exact_counts(n, draw.rate)
    st.markdown(
        f"**Worked count.** {n} eligible tokens at rate {draw.rate:g}: round({draw.rate:g} x {n}) = "
        f"**{worked.chosen}** chosen, of which round(0.8 x {worked.chosen}) = **{worked.masked}** [MASK], "
        f"**{worked.random}** random and **{worked.kept}** kept."
    )
    show_figure(
        figs.split_bar(worked, title=f"{n} eligible tokens at rate {draw.rate:g}"),
        "masking_split",
        alt=f"Of {n} eligible tokens, {worked.chosen} are chosen: {worked.masked} become [MASK], "
        f"{worked.random} a random token, {worked.kept} stay as they are.",
        table=pd.DataFrame([worked.__dict__]),
    )
    show_code(mask_tokens, exact_counts)


# ---- 2. shapes ----
SHAPE_MEANING = {
    "token ids": "B sequences, T positions: the corrupted input",
    "hidden states": "D numbers per position, built from both sides",
    "logits": "a score for each of V vocabulary words at every position",
    "logits at chosen positions": "only the rows the loss reads: one per chosen position",
}


def shape_table(steps) -> pd.DataFrame:
    return pd.DataFrame(
        [{"tensor": name, "shape": str(shape), "what it holds": SHAPE_MEANING[name]} for name, shape in steps]
    )


@st.cache_data(show_spinner=False)
def exercise_shapes() -> list:
    """Built once: a throwaway model of the exercise's size, run to read its shapes."""
    return lesson.shape_exercise(**lesson.EXERCISE_SHAPE).shape_steps()


def render_shapes() -> None:
    if not needs_model():
        return
    steps = forward.shape_steps()
    st.markdown("Read from the tensors of the model's pass over the draw above:")
    st.dataframe(shape_table(steps), hide_index=True)
    st.code(" -> ".join(str(shape) for _, shape in steps), language=None)
    ex = lesson.EXERCISE_SHAPE
    with st.expander(
        f"Try it: {ex['batch']} sequences of length {ex['length']}, width {ex['d_model']}, "
        f"{ex['vocab_size']:,} words, {ex['n_masked']} masked positions. What are the shapes?"
    ):
        st.dataframe(shape_table(exercise_shapes()), hide_index=True)
        st.caption("Computed by running a throwaway model of exactly that size.")
    show_code(lesson.mlm_forward)


# ---- 3. loss ----
def render_loss() -> None:
    if not needs_model():
        return
    b = forward.breakdown
    m = st.columns(3)
    m[0].metric(f"mean over the {b.n_counted} chosen positions", fmt_mean(b.mean))
    m[1].metric("PyTorch cross_entropy(ignore_index=-100)", fmt_mean(forward.pytorch_loss))
    m[2].metric(f"wrong: sum / all {b.n_positions} positions", fmt_mean(b.wrong_mean_all_positions))
    if b.n_counted == 0:
        st.info(
            "No position carries a loss in this draw, so the mean is undefined: there are no positions to "
            "average (PyTorch returns nan here). Raise the rate or draw again."
        )
    tokens = draw.tokens
    show_figure(
        figs.loss_bars(
            tokens,
            draw.input_tokens,
            b.per_position[0],
            b.counted[0],
            mean=b.mean,
            wrong_mean=b.wrong_mean_all_positions,
            title="Cross-entropy at each position (grey: label -100, contributes nothing)",
        ),
        "masking_loss",
        alt=(
            f"{b.n_counted} of {b.n_positions} positions carry a loss; their mean is {fmt_mean(b.mean)}, "
            f"while dividing the same sum by all positions gives {fmt_mean(b.wrong_mean_all_positions)}."
            if b.n_counted
            else f"None of the {b.n_positions} positions carries a loss: every bar is 0 and there are no "
            "positions to average."
        ),
        table=loss_table(forward, tokens, draw.input_tokens),
    )
    ex = lesson.count_example(trained.model, tokenizer)
    eb = ex.forward.breakdown
    st.markdown(
        f"**Count before you average.** *{lesson.COUNT_EXAMPLE_TEXT}* is {ex.n_positions} positions with "
        f"[CLS] and [SEP]. Hide two of them: the model receives `{' '.join(ex.input_tokens)}`. The loss is the "
        f"mean of **{ex.n_counted}** terms, {fmt_mean(eb.mean)}; dividing by all {ex.n_positions} positions "
        f"gives {fmt_mean(eb.wrong_mean_all_positions)}, a loss {ex.n_positions / ex.n_counted:.0f} times too "
        "small that also shifts with how long the sentence is."
    )
    show_figure(
        figs.loss_bars(
            ex.tokens,
            ex.input_tokens,
            eb.per_position[0],
            eb.counted[0],
            mean=eb.mean,
            wrong_mean=eb.wrong_mean_all_positions,
            title=f"{ex.n_positions} positions, {ex.n_counted} hidden: the mean is over {ex.n_counted}",
        ),
        "masking_count_example",
        alt=f"Of {ex.n_positions} positions, {ex.n_counted} carry a loss: right mean {fmt_mean(eb.mean)}, "
        f"wrong mean over all positions {fmt_mean(eb.wrong_mean_all_positions)}.",
        table=loss_table(ex.forward, ex.tokens, ex.input_tokens),
    )
    show_code(loss_breakdown)


def loss_table(fwd, tokens, input_tokens) -> pd.DataFrame:
    b = fwd.breakdown
    guesses = tokenizer.decode(fwd.top_guess[0])
    rows = []
    for t, token in enumerate(tokens):
        counted = bool(b.counted[0, t])
        rows.append(
            {
                "position": t,
                "original": token,
                "model receives": input_tokens[t],
                "label": int(fwd.labels[0, t]),
                "loss": float(b.per_position[0, t]),
                "p(original)": float(fwd.label_probability[0, t]) if counted else None,
                "model's top guess": guesses[t],
            }
        )
    return pd.DataFrame(rows)


# ---- 4. fill-mask ----
def render_fill() -> None:
    if not needs_model():
        return
    view = lesson.fill_mask_view(trained.model, tokenizer, fill_text, int(st.session_state["fill_position"]))
    report_encoding(view, max_positions)
    st.markdown("The model receives:")
    st.code(" ".join(view.tokens), language=None)
    if not view.predictions:
        st.warning("There is no [MASK] to fill: type `[MASK]` where a word should go, or choose a word to hide above.")
        return
    if len(view.predictions) > 1:
        narrative(
            f"{len(view.predictions)} blanks are filled in one pass: each guess sees the other blanks only as "
            "[MASK], never the other guesses. That is why an encoder cannot simply write a sentence."
        )
    shown = view.predictions[:MAX_FILL_CHARTS]
    if len(view.predictions) > len(shown):
        st.caption(f"Showing the first {len(shown)} of {len(view.predictions)} blanks.")
    columns = st.columns(min(len(shown), 3))
    for i, pred in enumerate(shown):
        with columns[i % len(columns)]:
            words = [w for w, _ in pred.top]
            probs = [p for _, p in pred.top]
            show_figure(
                figs.top_k_bars(words, probs, title=lesson.context(view.tokens, pred.position, width=2)),
                f"fill_{i}",
                alt=f"At position {pred.position} the model's first choice is '{words[0]}' with probability "
                f"{probs[0]:.1%}, then " + ", ".join(f"'{w}' {p:.1%}" for w, p in zip(words[1:], probs[1:])) + ".",
                table=pd.DataFrame({"token": words, "probability": probs}),
            )
            if pred.hidden_word is not None:
                word = escape_md(pred.hidden_word)
                if pred.hidden_rank is None:
                    st.caption(f"The hidden word '{word}' is not in the vocabulary: it can never be guessed.")
                else:
                    st.caption(
                        f"The hidden word '{word}' is choice {pred.hidden_rank} of {tokenizer.vocab_size}, "
                        f"probability {pred.hidden_probability:.1%}."
                    )
    meta = trained.metadata.get("metrics", {})
    if "top1" in meta:
        st.caption(
            f"The lab's model (d={trained.model.config.d_model}, {trained.model.config.n_layers} layers, "
            f"{tokenizer.vocab_size} words) fills a hidden content word of an unseen sentence correctly "
            f"{meta['top1']:.0%} of the time at its first guess, {meta['top5']:.0%} within five "
            f"(always guessing the most common words: {meta.get('baseline_top1', float('nan')):.0%} and "
            f"{meta.get('baseline_top5', float('nan')):.0%})."
        )
    show_code(lesson.fill_mask_view, fill_mask)


# ---- 5. leakage ----
LEAK_REQUEST = "_leak_requested"


def request_leakage(steps: int, seed: int) -> None:
    st.session_state[LEAK_REQUEST] = (steps, seed)


def render_leakage() -> None:
    narrative(
        "A classic bug: the positions are chosen and labelled correctly, but the input still shows the "
        "original token there. The model can then score perfectly by copying what it sees, and never has "
        "to use the context. Below, two tiny models (d=32, one layer) start from the **same weights** and "
        "see the **same batches**; the only difference is whether the chosen positions are really hidden."
    )
    steps, seed = int(st.session_state["leak_steps"]), sidebar_seed()
    result = cached_leakage(steps, seed)
    if result is None:
        rate = seconds_per_step()
        estimate = f" Expect about {max(1, round(rate * steps))} s on this server." if rate else ""
        st.caption(
            f"{steps} training steps for each model, seed {seed}.{estimate} A finished run is kept, so the next "
            "person asking for the same steps and seed sees it at once."
        )
        st.button(
            "Train both models",
            key="leak_train",
            icon=":material/model_training:",
            type="primary",
            on_click=request_leakage,
            args=(steps, seed),
        )
        # The click is recorded by the callback, so a rerun of the script before this point cannot lose it.
        if st.session_state.pop(LEAK_REQUEST, None) != (steps, seed):
            return
        bar = st.progress(0.0, text="training the correct model...")

        def progress(step: int, total: int) -> None:
            if step == total or step % max(1, total // 50) == 0:
                which = "correct" if step <= total // 2 else "leaky"
                bar.progress(step / total, text=f"training the {which} model: step {step} of {total}")

        result = run_leakage(steps, seed, progress)
        bar.empty()
    show_leakage(lesson.summarise_leakage(result))


def show_leakage(summary) -> None:
    names = lesson.LEAKAGE_RUNS
    acc, top5 = summary.final_train_accuracy, summary.held_out_top5
    m = st.columns(4)
    m[0].metric("training accuracy, correct", f"{acc['correct']:.1%}")
    m[1].metric("training accuracy, leaky", f"{acc['leaky']:.1%}")
    m[2].metric("fill-mask top-5, correct", f"{top5['correct']:.1%}")
    m[3].metric("fill-mask top-5, leaky", f"{top5['leaky']:.1%}")
    reached = summary.first_step_at["leaky"]
    when = f"by step {reached}" if reached else "never within these steps"
    st.markdown(
        f"The leaky model's training accuracy reaches {summary.threshold:.0%} {when} and ends at "
        f"{acc['leaky']:.1%}; the correct one ends at {acc['correct']:.1%}. On {summary.n_held_out} unseen "
        f"sentences with a content word really hidden, the leaky model has it in its top five "
        f"{top5['leaky']:.1%} of the time, the correct one {top5['correct']:.1%}. Near-perfect training "
        "accuracy almost at once is the symptom: check what the model actually receives at every scored position."
    )
    curves = {names[k]: summary.accuracy[k] for k in ("correct", "leaky")}
    show_figure(
        figs.training_curves(
            summary.steps,
            curves,
            title=f"Training accuracy at the scored positions (mean of the last {summary.window} steps)",
            y_title="accuracy",
            y_range=(0.0, 1.05),
        ),
        "leakage_accuracy",
        alt=f"Training accuracy: the leaky run ends at {acc['leaky']:.1%}, the correct run at {acc['correct']:.1%}.",
        table=pd.DataFrame({"step": summary.steps, **curves}),
    )
    losses = {names[k]: summary.loss[k] for k in ("correct", "leaky")}
    show_figure(
        figs.training_curves(
            summary.steps, losses, title="Training loss at the scored positions", y_title="cross-entropy (nats)"
        ),
        "leakage_loss",
        alt=f"Training loss: the leaky run falls to {losses[names['leaky']][-1]:.3f}, "
        f"the correct run to {losses[names['correct']][-1]:.3f}.",
        table=pd.DataFrame({"step": summary.steps, **losses}),
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "run": names[k],
                    f"training accuracy (last {summary.window} steps)": summary.final_train_accuracy[k],
                    f"first step at {summary.threshold:.0%}": str(summary.first_step_at[k] or "not reached"),
                    "held-out fill-mask top-1": summary.held_out_top1[k],
                    "held-out fill-mask top-5": summary.held_out_top5[k],
                    "seconds": summary.seconds[k],
                }
                for k in ("correct", "leaky")
            ]
        ),
        hide_index=True,
    )
    show_code(train_mlm, lesson.summarise_leakage)


# ---- 6. next-sentence prediction ----
@st.cache_data(show_spinner=False, max_entries=64)
def nsp_table(seed: int) -> pd.DataFrame:
    rows = []
    for ex in lesson.nsp_examples(tokenizer, n=N_NSP_PAIRS, seed=seed):
        rows.append(
            {
                "sentence A": ex.sentence_a,
                "sentence B": ex.sentence_b,
                "label": "IsNext" if ex.is_next else "NotNext (random)",
                "model input": " ".join(ex.tokens),
                "segments": "".join(map(str, ex.segments)),
            }
        )
    return pd.DataFrame(rows)


def render_nsp() -> None:
    table = nsp_table(int(st.session_state["mlm_seed"]))
    n_next = int((table["label"] == "IsNext").sum())
    st.markdown(
        f"Pairs drawn from the lab's corpus with masking seed {st.session_state['mlm_seed']}: "
        f"**{n_next} of {len(table)}** are real continuations, the rest pair A with a random sentence."
    )
    st.dataframe(table, hide_index=True)
    narrative(
        "BERT's second pre-training task, **next-sentence prediction**, packs two sentences into one input, "
        "`[CLS] A [SEP] B [SEP]`, with segment 0 for `[CLS]`, A and its `[SEP]` and segment 1 for B and the "
        "last `[SEP]`. In half of the pairs B really followed A; in the other half B is a random sentence. "
        "The final vector at **[CLS]** goes through a two-way classifier, IsNext or NotNext, and that is "
        "what [CLS] was put there for: one position whose vector stands for the whole input. Later work "
        "found the task adds little. **RoBERTa dropped it**, trained on masked tokens alone over longer "
        "stretches of text, and **masked dynamically**: a fresh masking pattern every time a sentence comes "
        "round, instead of one pattern fixed when the data was prepared. The *Draw again* button above is "
        "dynamic masking; the lab's own model was trained that way, without NSP."
    )
    show_code(lesson.nsp_examples, nsp_pairs)


sections = [
    Section(
        "Choose, corrupt, label",
        "About 15% of ordinary tokens are chosen; of those 80% become [MASK], 10% a random word, 10% stay.",
        render_draw,
    ),
    Section(
        "Follow the shapes",
        "(B, T) ids -> (B, T, D) hidden -> (B, T, V) logits -> only the chosen rows reach the loss.",
        render_shapes,
        tab="Shapes",
    ),
    Section(
        "Loss only where the answer was hidden",
        "Positions labelled -100 add nothing; the mean is over the chosen positions only.",
        render_loss,
        tab="The loss",
    ),
    Section(
        "Fill in the blank",
        "The trained model reads both sides of a [MASK] and ranks every word in its vocabulary.",
        render_fill,
    ),
    Section(
        "When the answer leaks",
        "Leave the original token in the input and training accuracy hits ~100% at once, while fill-mask fails.",
        render_leakage,
        tab="Leakage",
    ),
    Section(
        "The other objective: next-sentence prediction",
        "Half real continuations, half random pairs, judged from [CLS]; RoBERTa dropped it and masked dynamically.",
        render_nsp,
        tab="Next-sentence prediction",
    ),
    check_yourself_section("masking"),
]
render_sections(sections)
finish(PARAMS)
