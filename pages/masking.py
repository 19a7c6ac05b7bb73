"""Masked language modelling: BERT's pre-training objective, one token at a time."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import streamlit as st

from encoder_core import MAX_SEED
from encoder_core.data.corpus import nsp_pairs
from encoder_core.lessons import masking as core
from encoder_core.objectives.loss import loss_breakdown
from encoder_core.objectives.mlm_masking import exact_counts, mask_tokens
from encoder_core.training.train import train_mlm
from ui import shared_charts as shared
from ui.frame.charts import show_chart, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, report_encoding, show_notes, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.notices import has_trained
from ui.frame.params import LessonParams, Param, snippet
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section, escape_md
from ui.frame.sections import Section, finish, narrative, render_sections, set_page_controls, show_metrics, start
from ui.frame.state import ensure_valid, value
from ui.models import cached_leakage, masked_lm, run_leakage, seconds_per_step, word_tokenizer
from ui.questions import masking as questions
from ui.views import masking as view

DEFAULT_SENTENCE = "the cat sat on the mat and the dog slept on the floor"
DEFAULT_FILL = "the [MASK] sat on the mat"
MAX_WORDS = 512
N_NSP_PAIRS = 6
LEAK_REQUEST = "_leak_requested"  # set by the button's callback, so a rerun before the button cannot lose the click

P = LessonParams(
    "masking",
    Param("mlm_sentence", DEFAULT_SENTENCE, "text"),
    Param("mlm_rate", 0.15, "float", 0.0, 1.0),
    Param("mlm_exact", True, "bool"),
    Param("mlm_seed", 0, "int", 0, MAX_SEED),
    Param("mlm_n", 200, "int", 0, 1_000_000),
    Param("fill_sentence", DEFAULT_FILL, "text"),
    Param("fill_position", 0, "int", 0, None),  # any word: brought into the sentence's range below
    Param("fill_model", "minilm", "choice", options=("minilm", "mlm")),  # who fills in, whatever the sidebar
    Param("leak_steps", 300, "int", 10, 2000),
    shared=(QUIZ_SEED,),
)


def draw_again() -> None:
    """Dynamic masking: a new pattern per draw. The seed moves on, so the link still reproduces the view."""
    st.session_state[P.mlm_seed.key] = (int(value(P.mlm_seed)) + 1) % (MAX_SEED + 1)


start("masking", P)
note_long_text(P, {"mlm_sentence": "Sentence", "fill_sentence": "Sentence with [MASK]"})
ensure_valid(P)
st.title("Masked language modelling")
narrative(
    "BERT learns by a cloze game: hide some tokens, read the rest in both directions, and guess what was hidden. "
    "Below, your sentence goes through that game one token at a time: which positions are chosen, what the model "
    "is actually given, which positions are scored, and what a trained model guesses."
)

trained, load_error, mlm_notice = masked_lm(sidebar_model())
tokenizer = trained.tokenizer if trained else word_tokenizer()
max_positions = trained.model.config.max_positions if trained else 512
filler, _, filler_notice = masked_lm(value(P.fill_model))  # the fill-in-the-blank's own model
fill_tokenizer = filler.tokenizer if filler else tokenizer

# ---- controls: always at the top, also in lecture mode ----
with st.container(border=True):
    st.markdown("**The masking draw**")
    c1, c2, c3 = st.columns([3, 2, 2])
    c1.text_input("Sentence", key=P.mlm_sentence.key, help="Lower-cased and cut into word pieces, as BERT reads it.")
    c2.slider("Masking rate", 0.0, 1.0, step=0.01, key=P.mlm_rate.key, help="BERT used 0.15.")
    c3.toggle("Exact count", key=P.mlm_exact.key, help=view.EXACT_COUNT_HELP)
    c4, c5, c6 = st.columns([2, 2, 3])
    c4.number_input("Masking seed", 0, MAX_SEED, step=1, key=P.mlm_seed.key)
    c5.button("Draw again", on_click=draw_again, icon=":material/casino:", help="A new masking pattern (new seed).")
    c6.number_input("Worked count: N tokens", 0, 1_000_000, step=10, key=P.mlm_n.key)
    st.markdown("**Fill-mask**")
    f1, f2 = st.columns([3, 2])
    f1.text_input("Sentence with [MASK]", key=P.fill_sentence.key, help="Type [MASK] where a word goes.")
    fill_text = usable_sentence(value(P.fill_sentence), DEFAULT_FILL)
    fill_words = fill_tokenizer.split(fill_text)[:MAX_WORDS]
    asked, in_range = value(P.fill_position), replace(P.fill_position, hi=len(fill_words))
    if not in_range.is_valid(asked):  # a link's word, or a shorter sentence typed: say what is used instead
        st.warning(view.fill_position_notice(snippet(str(asked)), len(fill_words), in_range.nearest_valid(asked)))
    ensure_valid([in_range])
    f2.selectbox(
        "Or hide one word",
        list(range(len(fill_words) + 1)),
        key=P.fill_position.key,
        format_func=lambda i: (
            "none (use the [MASK]s typed)" if i == 0 else f"“{fill_words[i - 1]}” (word {i} of {len(fill_words)})"
        ),
    )
    st.radio(
        "Answered by", P.fill_model.options, key=P.fill_model.key, horizontal=True, format_func=view.fill_model_name
    )
    st.markdown("**Leakage experiment**")
    st.number_input("Training steps for each of the two tiny models", 10, 2000, step=50, key=P.leak_steps.key,
                    help="The sidebar seed sets their shared starting weights and batches.")  # fmt: skip

st.caption(view.mlm_choice_text(sidebar_model(), trained.choice, trained.name, trained.metadata) if trained else "")
if mlm_notice:
    st.warning(mlm_notice)
if load_error:
    st.error(f"The trained model could not be loaded, so the sections that need it are skipped.\n\n{load_error}")

sentence = usable_sentence(value(P.mlm_sentence), DEFAULT_SENTENCE)
enc = tokenizer.encode(sentence, max_length=max_positions, truncate=True)
report_encoding(enc, max_positions)
draw_settings = {name: value(P[f"mlm_{name}"]) for name in ("rate", "exact", "seed")}
draw = core.draw_masks(tokenizer, enc.ids, **draw_settings)
loss_context = fingerprint(enc.ids, draw_settings)  # the loss question's: until it is answered, no label is shown
# The model's pass over the draw: only the shapes and loss sections read it, so only they run it.
forward = cache(lambda: core.mlm_forward(trained.model, draw.result.inputs, draw.result.labels, tokenizer=tokenizer))


# ---- 1. choose, corrupt, label ----
def render_draw() -> None:
    counts = draw.counts
    labels = trained is None or revealed(questions.LOSS, loss_context)  # no model: no loss question
    if counts.chosen == 0:
        st.warning(view.nothing_chosen_text(draw, labels))
    show_metrics(view.count_metrics(counts))
    st.markdown(view.rule_text(draw))
    drawn_from = (trained.choice if trained else "words", tuple(enc.ids), *draw_settings.values())  # rate, exact, seed
    show_chart(shared.masking_draw_chart(*drawn_from, labels, draw), "masking_draw")
    if not labels:
        st.caption(view.LABELS_HELD)
    if note := view.every_fate_text(draw, core.rate_showing_every_fate(counts.eligible)):
        st.info(note)
    narrative(view.WHY_NOT_ALWAYS_MASK)
    worked = exact_counts(int(value(P.mlm_n)), draw.rate)
    st.markdown(view.worked_count_text(worked, draw.rate))
    show_chart(shared.masking_split_chart(int(value(P.mlm_n)), draw.rate), "masking_split")
    show_code(mask_tokens, exact_counts)


# ---- 2. shapes ----
@st.cache_data(show_spinner=False)
def exercise_shapes() -> list:
    """Built once: a throwaway model of the exercise's size, run to read its shapes."""
    return core.shape_exercise(**core.EXERCISE_SHAPE).shape_steps()


def render_shapes() -> None:
    if not has_trained(trained):
        return
    steps = forward().shape_steps()
    if not revealed(questions.LOSS, loss_context):  # the rows the loss reads answer the loss question
        steps = steps[:-1]
    st.markdown("Read from the tensors of the model's pass over the draw above:")
    show_table(view.shape_table(steps), hide_index=True)
    st.code(view.shape_chain(steps), language=None)
    if len(steps) < len(core.SHAPE_STEPS):
        st.caption(view.SHAPES_HELD)
    with st.expander(view.exercise_question(core.EXERCISE_SHAPE)):
        show_table(view.shape_table(exercise_shapes()), hide_index=True)
        st.caption("Computed by running a throwaway model of exactly that size.")
    show_code(core.mlm_forward)


# ---- 3. loss ----
def render_loss() -> None:
    if not has_trained(trained):
        return
    predict_then_see(
        questions.LOSS,
        loss_context,
        answer=lambda: core.LOSS_SETS.index(core.loss_outcome(draw)),
        reveal=lambda _: reveal_loss(),
        score=lambda guess, answer: questions.loss_verdict(guess, answer, core.matching_loss_sets(draw)),
    )


def reveal_loss() -> None:
    st.markdown(view.loss_positions_text(draw, core.loss_positions(draw)))
    choice = core.hardest_choice(draw, forward())
    if not choice.asked:
        st.caption(questions.hardest_not_asked(choice))
        return reveal_losses()
    q = questions.hardest(choice, draw.positions, trained.name)
    context = fingerprint(enc.ids, draw_settings, trained.choice)
    predict_then_see(
        q, context, lambda: choice.answer, lambda _: reveal_losses(choice), questions.hardest_score(q, choice)
    )


def reveal_losses(choice: core.HardestChoice | None = None) -> None:
    if choice is not None:
        st.markdown(questions.hardest_text(choice, draw.positions))
    show_metrics(view.loss_metrics(forward()))
    if forward().breakdown.n_counted == 0:
        st.info(view.NO_LOSS_TEXT)
    show_chart(view.loss_chart(forward(), draw.tokens, draw.input_tokens), "masking_loss")
    narrative(view.LOSS_NARRATIVE)
    ex = core.count_example(trained.model, tokenizer)
    st.markdown(view.count_example_text(ex))
    show_chart(view.count_example_chart(ex), "masking_count_example")
    show_code(loss_breakdown, core.loss_outcome)


# ---- 4. fill-mask ----
def render_fill() -> None:
    if not has_trained(filler):
        return
    show_notes([("warning", filler_notice)] if filler_notice else [])
    used, key = filler.choice, P.fill_model.key
    swap = {key: view.other_fill_model(used)}  # "Answered by" is a page-level control: the page reruns
    st.markdown(view.fill_model_text(value(P.fill_model), used, filler.parameters))
    st.button(view.other_fill_model_label(used), key="fill_other_model", icon=":material/swap_horiz:",
              on_click=set_page_controls, args=(swap,))  # fmt: skip
    at = int(value(P.fill_position))
    plan = core.plan_fill(fill_tokenizer, fill_text, at, filler.model.config.max_positions, DEFAULT_FILL)
    show_notes(view.fill_plan_notes(plan))
    filled = cache(lambda: core.fill_mask_view(filler.model, fill_tokenizer, plan.text, plan.position))
    report_encoding(plan.encoding, plan.max_positions)
    st.markdown("The model receives:")
    st.code(" ".join(plan.encoding.tokens), language=None)
    predict_then_see(
        questions.FILL, fingerprint(used, plan.encoding.ids), filled, reveal_fill, questions.fill_score(fill_tokenizer)
    )


def reveal_fill(filled: core.FillMaskView) -> None:
    if filled.n_blanks > 1:
        narrative(view.blanks_narrative(filled.n_blanks))
    if note := view.shown_blanks_text(filled):
        st.caption(note)
    columns = st.columns(min(len(filled.predictions), 3))
    for i, pred in enumerate(filled.predictions):
        with columns[i % len(columns)]:
            show_chart(view.fill_chart(filled, pred), f"fill_{i}")
            if pred.hidden_word is not None:
                st.caption(view.hidden_word_text(pred, escape_md(pred.hidden_word), fill_tokenizer.vocab_size))
    st.caption(escape_md(view.ranking_text(filled, fill_tokenizer.vocab_size)))
    if (word := st.text_input(view.TRY_WORD, key="fill_try", max_chars=60)).strip():
        st.markdown(escape_md(view.guess_rank_text(core.rank_guess(fill_tokenizer, filled.first_probabilities, word))))
    if q := view.model_quality_text(filler.metadata, filler.model.config, fill_tokenizer.vocab_size, filler.name):
        st.caption(q)
    show_code(core.fill_mask_view, core.plan_fill, core.rank_guess)


# ---- 5. leakage ----
def render_leakage() -> None:
    narrative(view.LEAKAGE_INTRO)
    steps, seed = int(value(P.leak_steps)), sidebar_seed()
    result = cached_leakage(steps, seed)
    if result is None:
        result = train_on_request(steps, seed)
    if result is not None:
        render_leakage_summary(core.summarise_leakage(result))


def request_leakage(steps: int, seed: int) -> None:
    st.session_state[LEAK_REQUEST] = (steps, seed)


def train_on_request(steps: int, seed: int):
    """The button, and the run once it has been clicked for these settings (None until then)."""
    st.caption(view.leakage_request_text(steps, seed, core.leakage_estimate(seconds_per_step(), steps)))
    st.button("Train both models", key="leak_train", icon=":material/model_training:", type="primary",
              on_click=request_leakage, args=(steps, seed))  # fmt: skip
    if st.session_state.pop(LEAK_REQUEST, None) != (steps, seed):
        return None
    bar = st.progress(0.0, text="training the correct model...")

    def progress(step: int, total: int) -> None:
        if step == total or step % max(1, total // 50) == 0:  # about 50 updates, whatever the length
            bar.progress(step / total, text=view.leakage_progress_text(core.leakage_run_at(step, total), step, total))

    result = run_leakage(steps, seed, progress)
    bar.empty()
    return result


def render_leakage_summary(summary) -> None:
    show_metrics(view.leakage_metrics(summary))
    st.markdown(view.leakage_text(summary))
    show_chart(view.leakage_accuracy_chart(summary), "leakage_accuracy")
    show_chart(view.leakage_loss_chart(summary), "leakage_loss")
    show_table(view.leakage_table(summary), hide_index=True)
    show_code(train_mlm, core.summarise_leakage)


# ---- 6. next-sentence prediction ----
@st.cache_data(show_spinner=False, max_entries=64)
def nsp_examples(seed: int) -> list[core.NSPExample]:
    return core.nsp_examples(tokenizer, n=N_NSP_PAIRS, seed=seed)


def render_nsp() -> None:
    seed = value(P.mlm_seed)
    examples = nsp_examples(int(seed))
    st.markdown(view.nsp_text(examples, seed))
    show_table(view.nsp_table(examples), hide_index=True)
    narrative(view.NSP_NARRATIVE)
    show_code(core.nsp_examples, nsp_pairs)


sections = [
    Section(
        "Choose, corrupt, label",
        "About 15% of ordinary tokens are chosen; of those 80% become [MASK], 10% a random word, 10% stay.",
        render_draw,
    ),
    Section(
        "Follow the shapes",
        "(B, T) ids -> (B, T, D) hidden -> (B, T, V) logits -> (n, V): the rows the loss reads.",
        render_shapes,
        tab="Shapes",
    ),
    Section(
        "Which positions carry a loss",
        "Some positions carry a label, the others -100: which positions does the loss read?",
        render_loss,
        tab="The loss",
    ),
    Section(
        "Fill in the blank",
        "The trained model reads both sides of a [MASK] and ranks its whole vocabulary: which word comes first?",
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
render_sections(sections, P)
finish(P)
