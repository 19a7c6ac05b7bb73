"""Trade-offs and pitfalls: every cost of an encoder, measured on your sentence, and the classic mistakes run live."""

from dataclasses import replace

import streamlit as st

from encoder_core.finetune.tasks import make_task
from encoder_core.lessons import tradeoffs as core
from encoder_core.lessons.masking import summarise_leakage
from encoder_core.lessons.padding import fast_path_pad_outputs, pad_leak
from encoder_core.lessons.tradeoffs import MAX_SENTENCE_TOKENS, TIMING_LENGTHS
from ui import shared_charts as shared
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, report_encoding, show_model, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.notices import has_trained
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section, escape_md
from ui.frame.sections import Section, finish, narrative, render_sections, start
from ui.frame.state import ensure_valid, value
from ui.models import (
    append_reuse,
    cached_leakage,
    lesson_model,
    minilm,
    minilm_pooling_ranking,
    run_leakage,
    trained_mlm,
)
from ui.questions import tradeoffs as questions
from ui.views import masking as masking_view
from ui.views import outputs as outputs_view
from ui.views import tradeoffs as tradeoffs_view
from ui.views.figures import Chart, short_number

DEFAULT_SENTENCE, DEFAULT_WORD = "the cat sat on the mat and the dog slept", "again"
MAX_APPEND, PITFALL_PADS, LEAK_STEPS, MAX_COPIES = 64, 16, 300, 200
MEASURE, TRAIN = "_measure_lengths", "_train_leakage"  # set by the buttons' callbacks
PITFALL_KEYS = {  # each pitfall's chart key
    1: "pitfall_mask",
    2: "pitfall_pad_rows",
    3: "pitfall_leakage",
    4: "pitfall_mean",
    5: "pitfall_cls",
    6: "pitfall_truncation",
}

chosen = lesson_model(sidebar_model(), sidebar_seed())
model, tokenizer = chosen.encoder, chosen.tokenizer
trained, trained_error, _ = trained_mlm()

P = LessonParams(
    "tradeoffs",
    Param("sentence", DEFAULT_SENTENCE, "text"),
    Param("next_word", DEFAULT_WORD, "text"),
    Param("n_append", 16, "int", 0, MAX_APPEND),
    Param("copies", 100, "int", 1, MAX_COPIES),
    Param("epochs", 40, "int", 1, 100),
    Param("word", 2, "int", 1, MAX_SENTENCE_TOKENS - 2),
    Param("mask_seed", 0, "int", 0, 10_000),
    shared=(QUIZ_SEED,),
)
start("tradeoffs", P)
note_long_text(P, {"sentence": "Sentence", "next_word": "Appended word"})
ensure_valid(P)

st.title("Trade-offs and pitfalls")
st.markdown(
    "Reading both ways costs something: work that cannot be reused, a hard length cap, a quadratic bill, and a "
    "training signal at only a few positions. Each cost is measured below on your sentence, and each classic "
    "mistake is run live, with its symptom and its one-line fix."
)
show_model(chosen)

st.text_input("Sentence", key=P.sentence.key, help=f"The lesson reads its first {MAX_SENTENCE_TOKENS} tokens.")
c1, c2, c3, c4, c5, c6 = st.columns(6)
c1.text_input("Appended word", key=P.next_word.key, help="The token appended in 'No reuse of earlier work'.")
c2.number_input("Tokens to append, N", 0, MAX_APPEND, key=P.n_append.key)
c3.number_input("Copies of the sentence", 1, MAX_COPIES, key=P.copies.key, help="The long document in 'Length'.")
c4.number_input("Epochs", 1, 100, key=P.epochs.key, help="For static vs dynamic masking.")
c5.number_input("Position to hide", 1, MAX_SENTENCE_TOKENS - 2, key=P.word.key, help="For the [MASK] mismatch.")
c6.number_input("Masking seed", 0, 10_000, key=P.mask_seed.key)

text = usable_sentence(value(P.sentence), DEFAULT_SENTENCE)
enc = tokenizer.encode(text, max_length=MAX_SENTENCE_TOKENS, truncate=True)
if enc.truncated:
    st.warning(f"This lesson reads the first {MAX_SENTENCE_TOKENS} tokens of the sentence: {enc.truncated} cut.")
report_encoding(replace(enc, truncated=0), MAX_SENTENCE_TOKENS)
tokens, ids = enc.tokens, tuple(enc.ids)
n_append, seed = int(value(P.n_append)), int(value(P.mask_seed))
word_pieces = tokenizer.encode(value(P.next_word) or "", max_length=None).ids[1:-1]
if not word_pieces:
    st.info(f"The appended word is empty, so the lesson appends “{DEFAULT_WORD}”.")
    word_pieces = tokenizer.encode(DEFAULT_WORD).ids[1:-1]
new_id = word_pieces[0]
cache_key = (chosen.choice, sidebar_seed(), ids)


def ask(flag: str) -> None:
    """A button's callback: the request survives until the run that serves it."""
    st.session_state[flag] = True


def needs_trained() -> bool:
    return has_trained(trained, trained_error)


@st.cache_data(show_spinner=False, max_entries=16)
def append_costs(_model, key, n: int):
    return core.append_costs(_model, key[-1], n)


@st.cache_resource(show_spinner=False)
def timing_store() -> dict:
    """Length timings by model, measured once per server when someone asks, shared by every session."""
    return {}


@st.cache_data(show_spinner=False, max_entries=16)
def pad_pitfalls(_model, key):
    batch = tokenizer.pad([tokenizer.encode(text, max_length=MAX_SENTENCE_TOKENS)], extra_pads=PITFALL_PADS)
    return pad_leak(_model, batch, 0), fast_path_pad_outputs(_model, batch, 0, seed=sidebar_seed())


def render_reuse() -> None:
    reuse = append_reuse(model, cache_key, new_id)
    new_token = tokenizer.vocab[new_id]
    show_chart(shared.append_shift_chart(cache_key, new_id, tuple(tokens), new_token, reuse), "append_shift")
    m1, m2, m3 = st.columns(3)
    m1.metric("Largest move, causal", short_number(reuse.max_causal))
    m2.metric("Largest move, bidirectional", short_number(reuse.max_bidirectional))
    m3.metric("Cached step vs full causal run", short_number(reuse.cached_vs_full))
    narrative(tradeoffs_view.reuse_text(reuse, escape_md(new_token)))
    if n_append == 0:
        st.info("N = 0: nothing is appended, so there is no cost to compare. Raise N above.")
        return
    if len(ids) + n_append > model.config.max_positions:
        st.info(f"{len(ids)} + {n_append} tokens would pass the model's {model.config.max_positions} positions.")
        return
    predict_then_see(  # the costs are counted (and timed) only once the student has committed
        questions.cache_question(len(ids), n_append),
        fingerprint(cache_key, n_append),
        answer=lambda: append_costs(model, cache_key, n_append).ratio,
        reveal=lambda _: reveal_costs(append_costs(model, cache_key, n_append)),
    )


def reveal_costs(costs) -> None:
    st.markdown(tradeoffs_view.saving_text(costs))
    show_chart_row(
        (tradeoffs_view.append_flops_chart(costs), tradeoffs_view.append_time_chart(costs)),
        ("append_flops", "append_time"),
    )
    narrative(tradeoffs_view.flops_text(costs))
    show_code(core.append_costs)


def render_length() -> None:
    copies = int(value(P.copies))
    cap = core.length_cap(tokenizer, " ".join([text] * copies), model.config.max_positions)
    cut = core.first_cut(tokenizer, text, copies, cap.cap)
    if cut is None:  # nothing is cut (or the sentence is one piece): nothing to predict
        reveal_length(cap)
        return
    predict_then_see(  # the cut is drawn, and its arithmetic shown, once the student has committed
        questions.cut_question(cut, copies, escape_md),
        fingerprint(cap.cap, text, copies),
        answer=lambda: cut.options.index(cut.index),
        reveal=lambda _: reveal_length(cap, tradeoffs_view.cut_answer_text(cut, escape_md)),
    )


def reveal_length(cap, worked: str = "") -> None:
    if worked:
        st.markdown(worked)
    show_chart(tradeoffs_view.cap_chart(cap), "length_cap")
    st.code(tradeoffs_view.cap_cut_text(cap), language="text", wrap_lines=True)
    narrative(
        tradeoffs_view.length_text(cap)
        + (tradeoffs_view.trained_cap_text(trained.metadata) if chosen.choice == "mlm" and trained else "")
    )
    show_code(core.length_cap)


def render_quadratic() -> None:
    pre, error, _ = minilm()
    target = pre.model if pre is not None else model
    if pre is None:
        st.warning(f"all-MiniLM-L6-v2 is not available, so this runs on {chosen.name}. {error}")
    scaling = core.attention_scaling(target.config)
    st.caption(tradeoffs_view.scaling_model_text(target.config, "all-MiniLM-L6-v2" if pre is not None else chosen.name))
    store = timing_store()
    timings = store.get(id(target))
    if timings is None and st.session_state.pop(MEASURE, False):
        with st.spinner(f"Timing T = {', '.join(map(str, TIMING_LENGTHS))}…"):
            timings = store[id(target)] = core.time_lengths(target, ids)
    charts = tradeoffs_view.scaling_sizes_chart(scaling, timings), tradeoffs_view.scaling_flops_chart(scaling)
    show_chart_row(charts, ("attention_size", "attention_flops"))
    if timings is None:
        st.button(
            "Measure the times on this server", key="measure_lengths", type="primary", on_click=ask, args=(MEASURE,)
        )
    if timings is not None:
        show_chart(tradeoffs_view.timing_chart(timings), "attention_time")
        st.metric("Fitted exponent, attention", f"{timings.exponent_attention:.2f}")
    narrative(tradeoffs_view.quadratic_text(scaling))
    show_code(core.time_lengths)


def render_efficiency() -> None:
    labels = core.objective_labels(tokenizer, ids, seed, trained.model if trained else None)
    show_chart(tradeoffs_view.objectives_chart(labels), "objectives")
    show_chart(tradeoffs_view.loss_counts_chart(labels), "loss_positions")
    st.markdown(tradeoffs_view.corruption_text(labels))
    narrative(tradeoffs_view.EFFICIENCY_TEXT)
    show_code(core.objective_labels)


def render_mismatch() -> None:
    if not needs_trained():
        return
    positions = core.eligible_positions(tokenizer, ids)
    if not positions:
        st.info("The sentence has no word the model could be asked about: type a few words.")
        return
    asked = int(value(P.word))
    word_at = min(positions, key=lambda p: abs(p - asked))
    mm = core.mask_mismatch(trained.model, tokenizer, ids, word_at, seed)
    position = core.clear_position(mm, word_at)  # where one input wins by the margin: no coin toss
    if moved := tradeoffs_view.mismatch_moved_text(asked, word_at, position):
        st.caption(moved)
    if position is None:
        reveal_mismatch(mm)
        return
    mm = core.mask_mismatch(trained.model, tokenizer, ids, position, seed) if position != word_at else mm
    predict_then_see(
        questions.mismatch_question(position, escape_md(mm.original)),
        fingerprint(cache_key, position, seed),
        answer=lambda: core.CASES.index(core.likeliest_case(mm)),
        reveal=lambda _: reveal_mismatch(mm),
    )


def reveal_mismatch(mm) -> None:
    st.markdown(tradeoffs_view.mismatch_answer_text(mm, escape_md))
    show_chart(tradeoffs_view.mismatch_chart(mm), "mask_mismatch")
    show_table(tradeoffs_view.mismatch_table(mm), hide_index=True)
    narrative(tradeoffs_view.MISMATCH_TEXT)
    show_code(core.mask_mismatch)


def render_roberta() -> None:
    n_eligible = len(core.eligible_positions(tokenizer, ids))
    if n_eligible == 0:
        st.info("The sentence has no word that masking could choose.")
        return
    views = core.masking_views(n_eligible, int(value(P.epochs)), seed)
    show_chart(tradeoffs_view.views_chart(views), "masking_views")
    show_table(tradeoffs_view.views_summary_table(views), hide_index=True)
    narrative(tradeoffs_view.views_text(views))
    st.markdown("**RoBERTa's changes** (no change to the architecture):")
    st.table(tradeoffs_view.roberta_table())
    show_code(core.masking_views)


def render_pitfall(n: int, chart: Chart | None, metric: tuple[str, str]) -> None:
    """One pitfall: its chart (if it could be measured), its number, its diagnosis and its one-line fix."""
    if chart is not None:
        show_chart(chart, PITFALL_KEYS[n])
    st.metric(*metric)
    st.markdown(tradeoffs_view.PITFALL_TEXT[n])
    st.code(tradeoffs_view.PITFALL_FIX[n], language="python", wrap_lines=True)


def render_pad_pitfalls() -> None:
    leak, fast = pad_pitfalls(model, cache_key)
    st.markdown(tradeoffs_view.PITFALL_TITLES[1])
    render_pitfall(1, tradeoffs_view.pitfall_mask_chart(leak), tradeoffs_view.pitfall_mask_metric(leak))
    st.markdown(tradeoffs_view.PITFALL_TITLES[2])
    render_pitfall(2, tradeoffs_view.pitfall_pads_chart(fast), tradeoffs_view.pitfall_pads_metric(fast))


def render_label_pitfalls() -> None:
    st.markdown(tradeoffs_view.PITFALL_TITLES[3])
    result = cached_leakage(LEAK_STEPS, sidebar_seed())
    if result is None and st.session_state.pop(TRAIN, False):
        with st.spinner("Training the correct and the leaky model…"):
            result = run_leakage(LEAK_STEPS, sidebar_seed())
    if result is None:
        st.button(f"Train both tiny models ({LEAK_STEPS} steps)", key="leak_train", on_click=ask, args=(TRAIN,))
        st.caption("The same experiment as in Masked LM: run once per server and shared; or open it there.")
        render_pitfall(3, None, ("Training accuracy, leaky vs correct", "not trained yet"))
    else:
        summary = summarise_leakage(result)
        render_pitfall(3, masking_view.leakage_accuracy_chart(summary), tradeoffs_view.pitfall_leak_metric(summary))
    st.markdown(tradeoffs_view.PITFALL_TITLES[4])
    if not needs_trained():
        return
    la = core.loss_averaging(trained.model, tokenizer, ids, seed)
    if la is None:
        st.info("15% of this sentence's words rounds to none chosen: type a longer sentence.")
        return
    render_pitfall(4, tradeoffs_view.averaging_chart(la), ("Loss and gradient scaled by", f"{la.scale:.3f}"))


def render_output_pitfalls() -> None:
    st.markdown(tradeoffs_view.PITFALL_TITLES[5])
    ranking = minilm_pooling_ranking()  # the measurement "Using the outputs" makes, shared, not redone
    if ranking is None:
        st.info("all-MiniLM-L6-v2 is not installed, so this pitfall cannot be measured here.")
    else:
        render_pitfall(5, outputs_view.ranking_chart(ranking), tradeoffs_view.pitfall_cls_metric(ranking))
    st.page_link(
        "pages/outputs.py", label="The whole comparison: Using the outputs, its Pooling tab", icon=":material/link:"
    )
    st.markdown(tradeoffs_view.PITFALL_TITLES[6])
    ex = make_task("qa").held_out[0]  # the lesson's own QA data
    full = len(tokenizer.encode(ex.text_a, ex.text_b, max_length=None))
    trunc = core.answer_truncation(tokenizer, ex.text_a, ex.text_b, ex.answer, range(6, full + 1))
    st.markdown(
        tradeoffs_view.qa_example_text(
            escape_md(ex.text_a), escape_md(ex.text_b), escape_md(tradeoffs_view.answer_words(ex))
        )
    )
    keeps = ("Shortest max_length that keeps the answer", f"{trunc.shortest_keeping}")
    render_pitfall(6, tradeoffs_view.truncation_chart(trunc), keeps)


RENDERS = (
    render_reuse,
    render_length,
    render_quadratic,
    render_efficiency,
    render_mismatch,
    render_roberta,
    render_pad_pitfalls,
    render_label_pitfalls,
    render_output_pitfalls,
)
sections = [
    Section(title, takeaway, render, tab) for (title, takeaway, tab), render in zip(tradeoffs_view.SECTIONS, RENDERS)
]
sections.append(check_yourself_section("tradeoffs"))
render_sections(sections, P)
finish(P)
