"""Heads: multi-head attention taken apart on the small model; the sidebar's model's heads on your sentence."""

from functools import cache

import streamlit as st

from encoder_core.lessons import heads as core
from encoder_core.model.head_patterns import DEFAULT_THRESHOLD, head_label, label_heads, layer_averages
from encoder_core.pretrained.minilm import INSTALL_HINT
from ui.frame import sections as lesson
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import narrow_layer_head, report_encoding, show_model, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.state import MODEL, value
from ui.models import lesson_model, minilm, minilm_run, minilm_similarities, minilm_word_cosines, small_model
from ui.questions import heads as questions
from ui.views import heads as views

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

lesson.start("heads", P)
st.title("Heads")
st.caption(
    "Multi-head attention: how d is split into heads, what one head computes, and what the heads "
    "of the sidebar's model do on your sentence (all-MiniLM-L6-v2's were shaped by pretraining)."
)

pre, _ = minilm()
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
rerun, layer_help = lesson.rerun_open_section, "Counting from 0, the layer nearest the input."
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
    st.warning(views.ALL_UNKNOWN_TEXT)
labels = label_heads(run.attentions, run.tokens)
T = len(run.tokens)


def layer_head() -> tuple[int, int]:
    """The chosen layer and head: read by each section on each of its runs, since the sliders rerun it alone."""
    return int(value(P.heads_layer)), int(value(P.heads_head))


def small_layer_head() -> tuple[int, int]:  # the nearest the small model of the mechanics steps has
    return min(layer_head()[0], cfg.n_layers - 1), min(layer_head()[1], cfg.n_heads - 1)


mechanics = cache(lambda layer, head: core.head_mechanics(small, enc_small, layer, head))


# ---- sections ----
def render_split() -> None:
    (layer, head), (small_layer, small_head) = layer_head(), small_layer_head()
    mech = mechanics(small_layer, small_head)
    lesson.narrative(
        f"{mechanics_name[:1].upper() + mechanics_name[1:]} has d = {cfg.d_model} and {cfg.n_heads} heads, "
        "so each head works in "
        f"d/h = {cfg.d_model} / {cfg.n_heads} = {cfg.d_head} dimensions. There is no separate matrix per head: "
        f"the block computes Q = xW_Q (all {cfg.d_model} columns at once) and head h simply takes columns "
        f"h·{cfg.d_head} to (h+1)·{cfg.d_head}. The same for K and V. Each head then runs its own "
        "softmax(QKᵀ/√d_head) over the tokens, so each gets its own attention map."
    )
    if (small_layer, small_head) != (layer, head):
        st.caption(
            f"The small model has {cfg.n_layers} layers and {cfg.n_heads} heads, "
            f"so this step shows its layer {small_layer}, head {small_head}."
        )
    slices = views.slice_charts(mech)
    show_chart_row(slices.values(), [f"heads_{name.lower()}" for name in slices])
    predict_then_see(
        questions.weight_count(cfg.n_heads, mechanics_name),
        fingerprint(mechanics_name, enc_small.ids),
        answer=lambda: mech.n_weights,
        reveal=lambda _: reveal_weight_count(mech),
    )
    show_code(core.head_mechanics)


def reveal_weight_count(mech: core.HeadMechanics) -> None:
    st.markdown(views.weight_count_text(mech))
    show_chart(views.own_weights_chart(mech), "heads_small_weights")
    show_table(views.shapes_table(mech), hide_index=True)


def render_concat() -> None:
    mech = mechanics(*small_layer_head())
    lesson.narrative(
        f"Each of the {cfg.n_heads} heads returns weights @ V, a [{len(enc_small)} × {cfg.d_head}] matrix. "
        f"Laid side by side they form a [{len(enc_small)} × {cfg.d_model}] concatenation, back to the model's "
        f"width. The output projection W_O [{cfg.d_model} × {cfg.d_model}] then mixes the heads: every output "
        "feature reads from every head's block of columns (dashed lines). This is the attention "
        "sublayer's output, before the residual and LayerNorm."
    )
    show_chart(views.concatenation_chart(mech), "heads_concat")
    show_chart(views.w_o_chart(mech), "heads_w_o")
    st.metric(
        "max |concat · W_Oᵀ + b − the block's attention output|",
        f"{mech.max_abs_error:.1e}",
        help="Recomputed here from the weight matrices, compared with what the block itself produced.",
    )
    (st.success if mech.agrees else st.error)(
        "Recomputing every head from the weight matrices, concatenating and applying W_O gives the block's own "
        f"attention output: the largest difference is {mech.max_abs_error:.1e} (at most float32 rounding). "
        "The heads really are just slices of one computation."
        if mech.agrees
        else f"The recomputation differs from the block's output by {mech.max_abs_error:.1e}."
    )
    show_code(core.head_mechanics)


def render_grid() -> None:
    n, m = min(T, GRID_MAX_TOKENS), min(T, MAP_MAX_TOKENS)
    lesson.narrative(
        f"All {n_layers * n_heads} heads of {model_name} on your sentence, one small map each: rows are layers, "
        "columns heads; inside each map, rows are queries and columns keys, as in the large map below. "
        "Above each map: the pattern that describes it best and how much weight goes there (next step; in "
        "lecture mode, point at a map to see them). The outlined map is the chosen layer and head."
    )
    choice = core.previous_token_choice(labels)
    predict_then_see(
        questions.previous_token([head_label(labels, *c) for c in choice.candidates]),
        fingerprint(model_name, run.tokens),
        answer=lambda: choice.answer,
        reveal=lambda _: reveal_grid(choice, n, m),
    )


def reveal_grid(choice: core.HeadChoice, n: int, m: int) -> None:
    layer, head = layer_head()
    chosen_label = head_label(labels, layer, head)
    st.markdown(views.previous_token_text(choice, n_layers * n_heads, DEFAULT_THRESHOLD))
    best = choice.candidates[choice.answer]
    if best != (layer, head):
        st.button(
            f"Show layer {best[0]}, head {best[1]} in the large map",
            key="heads_show_previous",
            on_click=lesson.set_page_controls,
            args=({P.heads_layer.key: best[0], P.heads_head.key: best[1]},),
        )
    if n < T:
        st.info(f"The thumbnails show the first {n} of {T} tokens; the labels use all of them.")
    captions = not lesson.lecture_mode()  # lecture type is too large for a caption over every thumbnail
    grid = views.grid_chart(run.attentions[:, :, :n, :n], labels, chosen_label, model_name, captions=captions)
    show_chart(grid, "heads_grid")
    if m < T:
        st.info(f"The large map shows the first {m} of {T} tokens.")
    large = views.head_map_chart(run.attentions[layer, head, :m, :m], run.tokens[:m], chosen_label, T, model_name)
    show_chart(large, "heads_chosen")


def render_labels() -> None:
    layer, head = layer_head()
    chosen_label = head_label(labels, layer, head)
    averages, sinks = layer_averages(run.attentions, run.tokens), core.sink_summary(labels)
    lesson.narrative(
        "Each head gets a name from its own weights: for every pattern we average, over the query rows, the weight "
        "it puts on the previous token, the next token, [CLS], [SEP], or itself. The largest of the five names the "
        f"head if it reaches {DEFAULT_THRESHOLD:.2f}; otherwise the head is *broad*. The mass is that largest average."
    )
    m1, m2 = st.columns(2)
    m1.metric(f"Layer {layer}, head {head}: pattern", chosen_label.pattern)
    m2.metric("mass behind the label", f"{chosen_label.mass:.2f}")
    show_table(views.labels_table(labels), hide_index=True, height=300)
    show_chart(views.averages_chart(averages, model_name), "heads_layer_averages")
    st.markdown(views.sinks_text(sinks))
    lesson.narrative(views.sinks_reading(sinks, chosen_model.choice, chosen_model.trained))
    show_code(label_heads)


def render_pieces() -> None:
    layer, head = layer_head()
    if pre is None:
        st.info(
            "The heads that join word pieces are shown on all-MiniLM-L6-v2, which is not installed. "
            f"To add it: `{INSTALL_HINT}`"
        )
        return
    lesson.narrative(
        "A WordPiece tokenizer has 30,522 entries. A word it does not hold whole is cut into known pieces; "
        "pieces after the first start with ##. Characters it has no piece for become [UNK]."
    )
    splits = core.sentence_splits(pre.tokenizer, [("A", text_a), ("B", text_b)])
    a, b, c = st.columns(3)
    a.metric("words", splits.n_words)
    b.metric("word pieces", splits.n_pieces)
    c.metric("words split into pieces", splits.n_split_words)
    show_table(views.fragmentation_table(splits), hide_index=True)
    mini_run = run if use_minilm else minilm_run(text_a, text_b)
    same = core.same_word_mass(mini_run.attentions, mini_run.tokens)
    if same is None:
        st.info("No word of your sentence was split. Try a rare or long word, such as “unbelievably”.")
        st.button(
            "Try a sentence with split words",
            key="heads_try_pieces",
            on_click=lesson.set_page_controls,
            args=({P.heads_sentence.key: PIECES_EXAMPLE},),
            help=f"Sets the sentence to “{PIECES_EXAMPLE}”.",
        )
        return
    mini_labels = labels if use_minilm else label_heads(mini_run.attentions, mini_run.tokens)
    st.markdown(views.same_word_text(same, layer, head, head_label(mini_labels, *same.best_head).pattern))
    show_chart(views.same_word_chart(same), "heads_same_word")
    m = min(len(mini_run.tokens), MAP_MAX_TOKENS)
    weights, tokens = mini_run.attentions[layer, head, :m, :m], mini_run.tokens[:m]
    pieces = views.pieces_map_chart(weights, tokens, core.piece_spans(tokens), same, layer, head)
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
    lesson.narrative(
        "One vector for a whole sentence: take the [CLS] token's final vector, or the mean of all real (non-pad) "
        "token vectors. all-MiniLM-L6-v2 was trained for sentence similarity with the mean, so that is the vector "
        "it was built to give; its [CLS] vector was not trained for this job. Cosine similarity compares "
        "directions: 1 means the same direction, 0 unrelated."
    )
    sims = minilm_similarities(tuple(lines))
    charts = views.similarity_charts(sims)
    show_chart_row(charts.values(), [f"heads_sim_{pooling}" for pooling in charts])
    st.markdown(views.similarities_text(sims))
    river = minilm_word_cosines(core.BANK_RIVER, core.BANK_MONEY, core.BANK_WORD)
    same_sense = minilm_word_cosines(core.BANK_RIVER, core.BANK_RIVER_AGAIN, core.BANK_WORD)
    st.markdown(
        f"**The “{core.BANK_WORD}” pair again, now with a trained model.** The vector of “{core.BANK_WORD}” in "
        f"“{core.BANK_RIVER}” against the one in “{core.BANK_MONEY}”, and against “{core.BANK_RIVER_AGAIN}” "
        "(the same sense; all three sentences are word for word the same up to and including “bank”)."
    )
    a, b = st.columns(2)
    a.metric("river vs money", f"{river.final:.3f}", help="cosine after the last layer")
    b.metric("river vs stream", f"{same_sense.final:.3f}", help="cosine after the last layer")
    show_chart(views.bank_chart(river, same_sense), "heads_bank")
    lesson.narrative(
        "At the embeddings the two vectors are the same token embedding at the same position, so the cosine is 1. "
        "Every layer mixes in the context through attention, and the two “bank”s drift apart when the "
        "context differs, much less when it means the same thing."
    )
    show_code(core.similarities)


lesson.render_sections(
    [
        lesson.Section(
            "Split d into heads",
            f"Each head works on its own {cfg.d_head}-dimensional slice of Q, K and V: how many attention "
            "weights does one layer compute?",
            render_split,
        ),
        lesson.Section(
            "Concatenate and project with W_O",
            "The head outputs are laid side by side and mixed by W_O: exactly the block's attention output.",
            render_concat,
        ),
        lesson.Section(
            "All heads at once",
            f"{n_layers * n_heads} heads, {n_layers * n_heads} maps of the same sentence: which head looks back?",
            render_grid,
        ),
        lesson.Section(
            "What each head does",
            "Each head named by where its weight goes; many simply park it on a special token.",
            render_labels,
        ),
        lesson.Section(
            "Words in pieces",
            "Rare words are split into WordPiece pieces, and some heads join the pieces back together.",
            render_pieces,
        ),
        lesson.Section(
            "Sentence vectors",
            "Mean pooling gives a sentence vector that separates paraphrases from unrelated sentences; [CLS] less so.",
            render_vectors,
        ),
        check_yourself_section("heads"),
    ],
    P,
)
lesson.finish(P)
