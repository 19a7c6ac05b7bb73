"""The block: one sentence through the embeddings and one whole encoder layer; post-norm or pre-norm."""

from __future__ import annotations

import streamlit as st

from encoder_core import POST_NORM_STAGES, EncoderBlock, preset
from encoder_core.lessons import block as core
from encoder_core.model.model import Embeddings, sinusoidal_table
from encoder_core.model.reference import block_equivalence, to_torch_layer
from ui import shared_charts as shared
from ui.frame.charts import show_chart, show_chart_row, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, report_encoding, usable_sentence
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.notices import has_trained
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import Section, finish, narrative, render_sections, show_metrics, start
from ui.frame.state import ensure_valid, value
from ui.models import block_walk, minilm, small_model, trained_mlm, word_tokenizer
from ui.questions import block as questions
from ui.views import block as view

CONFIG = preset("small")
DEFAULT_SENTENCE = "the cat sat on the mat"
N_POSITIONS_SHOWN = 64
INIT_LABELS = view.init_labels(CONFIG.d_model)

P = LessonParams(
    "block",
    Param("block_sentence", DEFAULT_SENTENCE, "text"),
    Param("block_layer", 0, "int", 0, CONFIG.n_layers - 1),
    Param("block_norm", "post", "choice", options=("post", "pre")),
    Param("block_step", "input", "choice", options=POST_NORM_STAGES),
    Param("block_depth", 12, "int", 12, 24),
    Param("block_init", "bert", "choice", options=core.INIT_CHOICES),
    shared=(QUIZ_SEED,),
)


@st.cache_data(show_spinner=False, max_entries=64)
def deep_stack(ids: tuple, segments: tuple, depth: int, seed: int, init_std: float) -> core.DeepStackStudy:
    return core.deep_stack_study(list(ids), list(segments), depth, seed, init_std)


@st.cache_data(show_spinner=False)
def param_counts(name: str) -> core.BlockParams:
    return core.block_params(preset(name))


@st.cache_data(show_spinner=False, max_entries=64)
def trained_ffn(text: str) -> core.FfnNorms | None:
    """The FFN output lengths of a trained encoder on the sentence: MiniLM, else the lab's MLM, else None."""
    pre = minilm().model
    if pre is not None:
        return core.ffn_norms_of(pre.model, pre.tokenizer, text, "all-MiniLM-L6-v2")
    mlm = trained_mlm().model
    return None if mlm is None else core.ffn_norms_of(mlm.model.bert, mlm.tokenizer, text, mlm.name)


# ---- controls ---------------------------------------------------------------------------

start("block", P)
note_long_text(P, {"block_sentence": "Sentence"})
ensure_valid(P)
st.title("The block")
st.caption(
    "One sentence through the input embeddings and one whole encoder layer: every intermediate tensor, "
    "and what changes when the LayerNorm moves."
)

top = st.columns([4, 1.3, 1.3])
top[0].text_input("Sentence", key=P.block_sentence.key, help="Type any sentence and press Enter.")
top[1].slider("Layer", min_value=int(P.block_layer.lo), max_value=int(P.block_layer.hi), key=P.block_layer.key)
top[2].radio(
    "LayerNorm placement", P.block_norm.options, key=P.block_norm.key, horizontal=True, format_func=view.NORM_LABELS.get
)

norm = value(P.block_norm)
stages = core.stages_for(norm)
controls = st.columns([4, 1.3, 2.4])
controls[0].select_slider(
    "Step through the block",
    options=stages,
    key=P.block_step.key,
    format_func=lambda s: f"{stages.index(s)}. {view.STAGE_LABELS[s]}",
    help="The stages in the order this block computes them.",
)
controls[1].slider(
    "Deep-stack depth",
    min_value=int(P.block_depth.lo),
    max_value=int(P.block_depth.hi),
    key=P.block_depth.key,
    help="Blocks in the post-norm vs pre-norm comparison.",
)
controls[2].radio("Deep-stack initial weights", core.INIT_CHOICES, key=P.block_init.key, format_func=INIT_LABELS.get)

# ---- compute ----------------------------------------------------------------------------

sentence = usable_sentence(value(P.block_sentence), DEFAULT_SENTENCE)
seed, layer = sidebar_seed(), int(value(P.block_layer))
step = value(P.block_step)
model = small_model(seed, norm)
tokenizer = word_tokenizer()
enc = tokenizer.encode(sentence, max_length=model.config.max_positions, truncate=True)
if model_note := view.model_choice_note(sidebar_model(), seed):
    st.info(model_note, icon=":material/info:")
report_encoding(enc, model.config.max_positions)
tokens = enc.tokens
walk = block_walk(seed, norm, tuple(enc.ids), tuple(enc.segments), layer)  # shared by every student: read only
d, d_ff = walk.d_model, walk.d_ff
# The predictions asked on this input. A later section holds back what would answer one not yet committed (or
# skipped) on this sentence: a student can open the next tab first.
row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, core.first_word_position(len(tokens)))
norm_question = questions.layernorm_std(
    tokens[row.position], row.position, row.std_before, row.std_after, core.norm_std_traps(row, d)
)
norm_context, shape_context = fingerprint(seed, enc.ids), fingerprint(seed, enc.ids, layer, norm)
shape_question = questions.ffn_shape(len(tokens), d, d_ff)
norm_open, shape_open = not revealed(norm_question, norm_context), not revealed(shape_question, shape_context)


def wait(section: str | None, what: str) -> None:
    st.info(view.wait_note(section, what), icon=":material/lock:")


# ---- sections -----------------------------------------------------------------------------


def render_input() -> None:
    parts = walk.embeddings
    narrative(view.input_intro(len(tokens), d))
    charts = shared.block_input_charts(seed, norm, tuple(enc.ids), tuple(enc.segments), tuple(tokens), parts)
    keys = ("emb_token", "emb_position", "emb_segment")
    show_chart_row([charts[key] for key in keys], keys)
    if norm_open:  # the worked half: the sum the LayerNorm reads
        show_chart(charts["emb_sum"], "emb_sum")
    predict_then_see(norm_question, norm_context, answer=lambda: row.std_after, reveal=lambda _: reveal_norm(charts))
    show_code(Embeddings.parts)


def reveal_norm(charts) -> None:
    show_chart_row([charts["emb_sum"], charts["emb_norm"]], ("emb_sum", "emb_norm"))
    affine = core.norm_affine(model.embeddings.LayerNorm)
    narrative(view.norm_row_note(row, affine, tokens[row.position], walk.sqrt_d))


def render_positions() -> None:
    pos = core.position_tables(model, N_POSITIONS_SHOWN)
    cap = core.length_cap(model, tokenizer, sentence)
    narrative(view.POSITIONS_INTRO)
    show_chart_row((view.sinusoid_chart(pos), view.sinusoid_similarity_chart(pos)), ("pos_sinusoid", "pos_similarity"))
    if pos.learned_similarity is not None:
        show_chart(view.learned_similarity_chart(pos), "pos_learned_similarity")
    st.markdown(f"**The {cap.max_positions}-position cap.** A learned table has exactly {cap.max_positions} rows.")
    c1, c2, c3 = st.columns(3)
    c1.metric("This sentence repeated: tokens", cap.n_tokens)
    c2.metric("Kept by the tokenizer (truncate=True)", cap.kept)
    c3.metric("Cut from the end", cap.truncated)
    st.markdown("Handed to the encoder uncut, the same input is refused before any computation, with this message:")
    st.code(cap.refusal, language=None)
    narrative(view.POSITIONS_CAP)
    show_code(sinusoidal_table, core.length_cap)


def render_stage() -> None:
    stats, size = walk.stats[step], core.summarize(walk.trace[step])
    i = walk.stages.index(step)
    norm_held = norm_open and step in core.normalised_stages(norm, layer)
    ffn_held = shape_open and step in core.FFN_STAGES
    st.markdown(f"**Stage {i} (of 0–{len(walk.stages) - 1}): {view.STAGE_LABELS[step]}** — layer {layer}, {norm}-norm")
    st.latex(core.stage_formula(norm, step, shape=not ffn_held))
    if not ffn_held:
        code = core.stage_code(step, norm)
        st.caption(f"The code of this stage: {code.qualname} in {code.path}, line {code.first_line} (as it runs):")
        st.code(code.source, language="python")
    profile = view.stage_profile_chart(walk.stages, core.mean_norm_per_stage(walk), i)
    if norm_held or ffn_held:
        wait(None if ffn_held else "Input", view.HELD_FFN if ffn_held else view.HELD_NORM)
    else:
        narrative(view.stage_note(walk, step))
        show_chart(view.stage_chart(walk, step, tokens, size), "stage_tensor")
    if norm_held:
        show_chart(profile, "stage_profile")
    else:
        show_chart_row((view.stage_stats_chart(stats, tokens), profile), ("stage_stats", "stage_profile"))
    hidden = walk.trace["ffn_hidden"]
    predict_then_see(
        shape_question,
        shape_context,
        answer=lambda: core.shape_choice(hidden.shape, len(tokens), d, d_ff),
        reveal=lambda _: reveal_ffn_shape(hidden),
    )


def reveal_ffn_shape(hidden) -> None:
    narrative(view.ffn_shape_note(*hidden.shape, d))
    show_chart(view.stage_chart(walk, "ffn_hidden", tokens, core.summarize(hidden)), "stage_ffn_hidden")
    show_code(EncoderBlock)


def render_trained() -> None:
    trained = trained_ffn(sentence)
    if not has_trained(trained):
        return
    narrative(view.trained_intro(trained.model_name))
    choice = core.ffn_token_choice(trained.norms, trained.tokens)
    if choice is None:
        st.info(view.no_clear_ffn_note(core.FFN_TOKEN_MARGIN, core.FFN_TOKEN_MIN_WORDS))
        return
    predict_then_see(
        questions.ffn_token(choice, list(trained.tokens), trained.model_name, core.FFN_TOKEN_MARGIN),
        fingerprint(trained.model_name, trained.tokens),
        answer=lambda: choice.answer,
        reveal=lambda _: reveal_trained(choice, trained),
    )


def reveal_trained(choice: core.FfnTokenChoice, trained: core.FfnNorms) -> None:
    st.markdown(view.ffn_token_text(choice, trained.tokens, trained.model_name))
    show_chart(view.ffn_token_chart(choice, trained.tokens, trained.model_name), "ffn_token_norms")
    show_code(core.ffn_output_norms, core.ffn_token_choice)


def render_activations() -> None:
    curves = core.activation_curves()
    narrative(view.ACTIVATIONS_INTRO)
    show_chart(view.activation_chart(curves), "activations")
    if shape_open:
        wait("Inside the block", view.HELD_WIDTH)
        return
    units = core.active_units(walk.trace["ffn_hidden"])
    st.markdown(view.active_units_lead(layer, units.total, len(tokens), d_ff))
    show_metrics(view.active_units_metrics(units))
    st.caption(f"GELU's most negative output on this input: {units.gelu_min:.4f}.")
    show_table(view.active_units_table(units, tokens), hide_index=True)
    show_code(core.active_units)


def render_norms() -> None:
    other = "pre" if norm == "post" else "post"
    match = core.compare_weights(small_model(seed, norm), small_model(seed, other))
    st.markdown(view.same_weights_note(match, seed))
    depth = int(value(P.block_depth))
    init = value(P.block_init)
    study = deep_stack(tuple(enc.ids), tuple(enc.segments), depth, seed, core.init_std_for(init, CONFIG.d_model))
    narrative(view.deep_stack_setup(study))
    if not core.growth_clear(study):  # no coin toss: neither answer would be clearly right
        st.info(view.GROWTH_TOO_CLOSE)
        reveal_deep_stack(study, init)
        return
    predict_then_see(
        questions.deep_growth(study),
        fingerprint(seed, enc.ids, depth, init),
        answer=lambda: core.GROWTH_OUTCOMES.index(core.growth_outcome(study)),
        reveal=lambda _: reveal_deep_stack(study, init),
    )
    show_code(core.deep_stack_study)


def reveal_deep_stack(study: core.DeepStackStudy, init: str) -> None:
    st.markdown(
        f"After {study.depth} blocks the post-norm stream is ×{study.post.growth:.2f} its starting length, the "
        f"pre-norm stream ×{study.pre.growth:.2f} (grown means ×{core.GROWTH_VISIBLE:g} or more)."
    )
    show_chart_row(view.deep_stack_charts(study), ("deep_residual", "deep_grad"))
    narrative(view.deep_stack_reading(study, width_scaled=init == "width"))


def render_equivalence() -> None:
    check = core.check_against_pytorch(model.encoder.layer[layer], walk.trace["input"])
    diff, tolerance = check.max_abs_diff, view.short_sci(check.tolerance)
    flag = "norm_first=False" if norm == "post" else "norm_first=True"
    narrative(view.equivalence_intro(flag))
    st.metric(f"Largest |ours − PyTorch's| over layer {layer}'s output", f"{diff:.2e}")
    if check.agrees:
        st.success(f"The two agree to {diff:.2e}, within float32 rounding (tolerance {tolerance}).")
    else:
        st.error(f"The two differ by {diff:.2e}, more than the {tolerance} tolerance.")
    show_code(to_torch_layer, block_equivalence)


def render_params() -> None:
    counts = {name: param_counts(name) for name in (("bert-base",) if shape_open else ("small", "bert-base"))}
    localized = dict.fromkeys(view.PARAM_COUNT_COLUMNS, st.column_config.NumberColumn(format="localized"))
    show_table(view.param_table(counts), hide_index=True, column_config=localized)
    if shape_open:  # this lesson's block counted part by part gives its FFN's width away
        wait("Inside the block", "this lesson's own block joins the table then")
    narrative(view.param_note(counts))
    show_code(core.block_params)


sections = [
    Section(
        "Input: three embeddings, summed and normalised",
        "A token's vector is word + position + segment, then LayerNorm: what spread does each row leave with?",
        render_input,
        tab="Input",
    ),
    Section(
        "Positions: a learned table or sine waves",
        "Sine waves make neighbours similar by design; a learned table caps the length.",
        render_positions,
        tab="Positions",
    ),
    Section(
        "Inside the block, one stage at a time",
        "Every intermediate tensor of one layer, with its formula and the function that computed it.",
        render_stage,
        tab="Inside the block",
    ),
    Section(
        "A trained FFN, token by token",
        "Trained weights: the FFN adds a vector to each token on its own. Which token gets the longest?",
        render_trained,
        tab="Trained FFN",
    ),
    Section(
        "GELU next to ReLU",
        "Both keep the same units active; only GELU lets small negatives through.",
        render_activations,
        tab="GELU vs ReLU",
    ),
    Section(
        "Post-norm or pre-norm, on the same weights",
        "The same weights with the LayerNorm moved: whose residual stream grows through a deep stack?",
        render_norms,
        tab="Post- vs pre-norm",
    ),
    Section(
        "Checked against PyTorch",
        "PyTorch's own encoder layer with the same weights gives the same output.",
        render_equivalence,
        tab="Against PyTorch",
    ),
    Section(
        "Counting the block's parameters",
        "4d² + 4d for attention, 2·d·d_ff + d_ff + d for the FFN, 4d for the norms.",
        render_params,
        tab="Parameters",
    ),
]
sections.append(check_yourself_section("block"))
render_sections(sections, P)
finish(P)
