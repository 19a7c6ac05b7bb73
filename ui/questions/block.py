"""The block lesson's predictions: what the student is asked, and the wrong idea behind each wrong answer.

Each names the quiz generator that practises its idea (`concept`) and that idea (`idea`, as the generator's
@generator(..., idea=...) names it). A wrong option's text that quotes this input's numbers takes them from
encoder_core's result, and a test recomputes them.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from encoder_core.lessons import block as core
from encoder_core.lessons.block import (
    BERT_BASE_LOUDNESS,
    GROWTH_OUTCOMES,
    SHAPE_CHOICES,
    DeepStackStudy,
    FfnTokenChoice,
)
from ui.frame.predict import Option, Prediction, Trap, percent, tolerance_for
from ui.room.numbers import number_choice
from ui.room.registry import CannotAsk, Run, lesson_questions, run_key
from ui.views import block as view

LESSON = "block"

NORM_STD_TOLERANCE = 0.1  # a spread within 10 % of the model's: the LayerNorm's own eps and γ move it less
# What a student holding each misconception of encoder_core.lessons.block.norm_std_traps would type, and why.
NORM_TRAPS = {
    "length": "√d is the row's length, not its spread: LayerNorm divides each row by its own spread, so the spread "
    "comes out as 1 (times the gain γ), and the length as √d.",
    "kept": "LayerNorm does not keep or shrink a row's spread: it divides the row by it, so the spread comes out as "
    "1 (times the gain γ), whatever it came in with.",
}


def layernorm_std(
    token: str, position: int, std_before: float, std_after: float, traps: dict[str, float]
) -> Prediction:
    """The embeddings' LayerNorm, asked about one row whose spread before it the page quotes. std_after: the model's
    answer (only to state the tolerance: the prompt never shows it); traps: core.norm_std_traps of that row."""
    q = Prediction(
        LESSON,
        "norm-std",
        f"Before the LayerNorm, the row of “{token}” (position {position}) has a standard deviation of "
        f"{std_before:.3f} over its features. What is its standard deviation after the LayerNorm?",
        concept="block_layernorm_output",
        idea="layernorm-output",
        tolerance=NORM_STD_TOLERANCE,
        traps=tuple(Trap(value, NORM_TRAPS[name]) for name, value in traps.items()),
        too_high=NORM_TRAPS["length"],
        too_low=NORM_TRAPS["kept"],
    )
    return replace(q, prompt=f"{q.prompt} (Right within {percent(tolerance_for(q, std_after))}.)")


SHAPE_SYMBOLS = {"T x d": "T × d", "T x d_ff": "T × 4d", "T x T": "T × T", "d x d_ff": "d × 4d"}
SHAPE_MISTAKES = {
    "T x d": "The FFN widens each token first: W₁ maps its d features to 4d units, and only W₂ brings them back to d.",
    "T x d_ff": "Only the FFN's inside is 4d wide; what it hands back to the residual sum is d wide.",
    "T x T": "A T × T grid is attention's, token against token; the FFN works on each token alone.",
    "d x d_ff": "d × 4d is the weight W₁, not what it produces: the output keeps one row per token.",
}


def ffn_shape(n_tokens: int, d_model: int, d_ff: int) -> Prediction:
    """The shape of the FFN's hidden layer on this sentence; options in the order of core.SHAPE_CHOICES."""
    sizes = {
        "T x d": (n_tokens, d_model),
        "T x d_ff": (n_tokens, d_ff),
        "T x T": (n_tokens, n_tokens),
        "d x d_ff": (d_model, d_ff),
    }
    return Prediction(
        LESSON,
        "ffn-shape",
        f"Your sentence has T = {n_tokens} tokens and the block is d = {d_model} wide. What shape is the FFN's "
        "hidden layer u = h·W₁ + b₁?",
        tuple(Option(f"{SHAPE_SYMBOLS[c]} = {sizes[c]}", SHAPE_MISTAKES[c]) for c in SHAPE_CHOICES),
        concept="block_stage_shape",
        idea="stage-shape",
    )


def growth_options(study: DeepStackStudy) -> dict[str, Option]:
    """The deep-stack question's options, by core.GROWTH_OUTCOMES; each misconception quotes this study's numbers
    (the pre-norm one says how loud these blocks are next to BERT-base's, as the reading below the chart does)."""
    pre, post, depth = study.pre.growth, study.post.growth, study.depth
    if study.loudness < BERT_BASE_LOUDNESS:
        quiet = (
            f"These blocks start quiet: std × √d = {study.loudness:.2f}, {BERT_BASE_LOUDNESS / study.loudness:.1f} "
            f"times quieter than BERT-base's {BERT_BASE_LOUDNESS:.2f}, so {depth} of them grow it only ×{pre:.2f}."
        )
    else:
        quiet = f"Over these {depth} blocks it grew only ×{pre:.2f}."
    return {
        "post": Option(
            "post-norm's",
            "A post-norm block ends on a LayerNorm, which brings every token's vector back to length √d, so its "
            f"stream cannot grow (here ×{post:.3f}).",
        ),
        "pre": Option("pre-norm's", f"A pre-norm stream grows only as fast as its blocks add to it. {quiet}"),
        "both": Option(
            "both",
            "Every post-norm block ends on a LayerNorm, which resets the stream to length √d; only the pre-norm "
            "stream is free to grow.",
        ),
        "neither": Option(
            "neither",
            "Nothing rescales a pre-norm stream between blocks: what each block adds stays in it (here "
            f"×{pre:.2f} after {depth} blocks) until the final LayerNorm.",
        ),
    }


def deep_growth(study: DeepStackStudy) -> Prediction:
    options = growth_options(study)
    return Prediction(
        LESSON,
        "deep-growth",
        "Both stacks start from the same embeddings, each token's vector of length √d. After the last block, whose "
        "residual stream has grown by a tenth or more?",
        tuple(options[o] for o in GROWTH_OUTCOMES),
        concept="block_final_norm",
        idea="prenorm-raw-stream",
    )


def token_option(position: int, token: str) -> str:
    """A token as the charts label it: its position, then the token (a word twice in a sentence stays two)."""
    return f"{position} {token}"


def ffn_token(choice: FfnTokenChoice, tokens: list[str], model_name: str, margin: float) -> Prediction:
    """Which word gets the longest FFN output in a trained model's layer (core.ffn_token_choice's options)."""
    best, norms = choice.best, choice.norms
    options = tuple(
        Option(
            token_option(i, tokens[i]),
            f"The FFN adds a vector of length {norms[i]:.2f} to “{tokens[i]}”, against {norms[best]:.2f} for "
            f"“{tokens[best]}”. It reads each token's row alone, and how much it writes there was learned in "
            "training: it is not set by how much the word seems to mean.",
        )
        for i in choice.positions
    )
    passed = (
        f" (Layer {choice.preferred} has no word whose FFN output is {percent(margin - 1)} longer than every "
        f"other's on your sentence, so this asks about layer {choice.layer}.)"
        if choice.passed_over
        else ""
    )
    return Prediction(
        LESSON,
        "ffn-token",
        f"In {model_name}, layer {choice.layer}: the FFN reads each token's row on its own and adds a vector f to it. "
        f"To which of these tokens does it add the longest f?{passed}",
        options,
        concept="block_ffn_per_token",
        idea="ffn-per-token",
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON, "block_sentence")

STAGE_STEP = 2  # "Inside the block, one stage at a time" is the block lesson's third section


def _ffn_hidden(run: Run):
    """The lesson's walk through layer 0 on this sentence: (the walk, the FFN's hidden layer u)."""
    enc = run.tokenizer.encode(run.proof["sentence"], max_length=run.model.config.max_positions, truncate=True)
    walk = core.walk_block(run.model, enc.ids, enc.segments, 0)
    return walk, walk.trace["ffn_hidden"]


def _ffn_question(run: Run) -> tuple[Prediction, int]:
    walk, hidden = _ffn_hidden(run)
    asked = ffn_shape(len(run.tokens), walk.d_model, walk.d_ff)
    return asked, core.shape_choice(hidden.shape, len(run.tokens), walk.d_model, walk.d_ff)


def _ffn_chart(run: Run):
    walk, hidden = _ffn_hidden(run)
    return view.stage_chart(walk, "ffn_hidden", run.tokens, core.summarize(hidden))


register(
    "block-ffn-shape",
    "The block: what shape is the FFN's hidden layer?",
    ask=_ffn_question,
    step=STAGE_STEP,
    charts=lambda run: [_ffn_chart(run)],
    block=True,
    lead=lambda run: "Layer 0 of the block lesson's small model. ",
)


INPUT_STEP = 0  # "Input: three embeddings, summed and normalised" asks the spread


def _norm_row(run: Run):
    """The row the lesson asks about (its first word) before and after the embeddings' LayerNorm, and the walk."""
    walk, _ = _ffn_hidden(run)
    row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, core.first_word_position(len(run.tokens)))
    return walk, row


def _norm_choice(run: Run):
    walk, row = _norm_row(run)
    asked = layernorm_std(
        run.tokens[row.position], row.position, row.std_before, row.std_after, core.norm_std_traps(row, walk.d_model)
    )
    return number_choice(asked, row.std_after, shown=lambda v: f"{v:.3f}")


def _norm_charts(run: Run) -> list:
    walk, _ = _norm_row(run)
    parts = walk.embeddings
    charts = view.embedding_charts(parts, run.tokens, core.summarize_parts(parts), core.token_stats(parts.normed))
    return [charts["emb_sum"], charts["emb_norm"]]


register(
    "block-norm-std",
    "The block: a row's spread after the embeddings' LayerNorm?",
    ask=_norm_choice,
    step=INPUT_STEP,
    charts=_norm_charts,
    block=True,
    lead=lambda run: "The block lesson's small model. ",
)


TRAINED_STEP, NORMS_STEP = 3, 5  # "A trained FFN, token by token"; "Post-norm or pre-norm, on the same weights"
ROOM_DEPTH = 12  # the deep stacks' blocks, as the lesson's own default (BERT-base's 12)


def _ffn_token(run: Run):
    """How long a vector each layer's FFN adds to each token, on a trained model (the lesson's choice of words)."""
    if run.proof.get("model") not in ("mlm", "minilm"):
        raise CannotAsk(
            "This question is about what a trained FFN learned: choose the lab's MLM or all-MiniLM-L6-v2 as the "
            "model (the sidebar's, or the deck step's)."
        )
    norms = _ffn_norms_run(run_key(run), run)
    choice = core.ffn_token_choice(norms.norms, norms.tokens)
    if choice is None:
        raise CannotAsk("On this sentence no word's FFN output stands out clearly in any layer: try a longer one.")
    return norms, choice


@st.cache_data(show_spinner=False, max_entries=16)
def _ffn_norms_run(key: tuple, _run: Run):
    """How long a vector each layer's FFN adds to each token, once per model and sentence (key: run_key)."""
    return core.ffn_norms_of(_run.model, _run.tokenizer, _run.proof["sentence"], _run.name)


def _ffn_token_question(run: Run) -> tuple[Prediction, int]:
    norms, choice = _ffn_token(run)
    return ffn_token(choice, list(norms.tokens), "this model", core.FFN_TOKEN_MARGIN), choice.answer


def _ffn_token_chart(run: Run) -> list:
    norms, choice = _ffn_token(run)
    return [view.ffn_token_chart(choice, norms.tokens, run.name)]


def _deep_stack(run: Run):
    """The lesson's two deep stacks (post-norm, pre-norm) of ROOM_DEPTH blocks on this sentence, BERT's init."""
    enc = run.tokenizer.encode(run.proof["sentence"], max_length=run.model.config.max_positions, truncate=True)
    std = core.init_std_for("bert", run.model.config.d_model)
    study = core.deep_stack_study(list(enc.ids), list(enc.segments), ROOM_DEPTH, run.proof["seed"], std)
    if not core.growth_clear(study):
        raise CannotAsk("On this sentence a stream ends too near the “grown” line to call: try another sentence.")
    return study


def _deep_growth_question(run: Run) -> tuple[Prediction, int]:
    study = _deep_stack(run)
    return deep_growth(study), core.GROWTH_OUTCOMES.index(core.growth_outcome(study))


register(
    "block-ffn-token",
    "The block: to which word does a trained FFN add the longest vector?",
    ask=_ffn_token_question,
    step=TRAINED_STEP,
    charts=_ffn_token_chart,
)
register(
    "block-deep-growth",
    "The block: after 12 blocks, whose residual stream has grown?",
    ask=_deep_growth_question,
    step=NORMS_STEP,
    charts=lambda run: list(view.deep_stack_charts(_deep_stack(run))),
    block=True,
    lead=lambda run: f"A post-norm and a pre-norm stack of {ROOM_DEPTH} of the block lesson's blocks, BERT's init. ",
)
