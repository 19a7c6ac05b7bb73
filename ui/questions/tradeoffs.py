"""The trade-offs lesson's predictions: the questions and the wrong ideas behind each wrong answer."""

from __future__ import annotations

from dataclasses import replace

from encoder_core.lessons import tradeoffs as core
from encoder_core.lessons.tradeoffs import CASES, FirstCut, cache_traps
from ui.frame.predict import Option, Question, Trap
from ui.room.registry import CannotAsk, Run, middle_word, register_room_question
from ui.views import tradeoffs as figs

LESSON = "tradeoffs"

CACHE_TRAPS = {  # the wrong idea behind each value encoder_core's cache_traps gives
    "appends": (
        "The saving is not the number of appends: each append reruns the whole sequence, about T rows, where the "
        "cache runs one row."
    ),
    "length": (
        "T is the length before the first append: each append makes the sequence one longer, so the later reruns "
        "cost more than T rows each."
    ),
    "final": (
        "T + N is the length after the last append: the earlier reruns were shorter, so the encoder's average "
        "rerun is shorter than that."
    ),
    "square": (
        "Squaring T takes attention for the whole cost: most of a step's work is the projections and the FFN, "
        "which grow with the rows, not with their square."
    ),
}


def cache_question(prefix: int, n: int) -> Question:
    return Question(
        LESSON,
        "cache-saving",
        f"Now append N = {n} tokens to your T = {prefix}-token sentence, one at a time. After each one the encoder "
        "reruns the whole sequence; a causal model with a KV cache runs only the new token's row against the "
        "cached keys and values. How many times more FLOPs does the encoder spend on the N appends?",
        tolerance=0.25,
        traps=tuple(Trap(value, CACHE_TRAPS[name]) for name, value in cache_traps(prefix, n).items()),
        too_high=(
            "The saving is about the sequence's length, not its square: most of a step's work is the projections "
            "and the FFN, which the encoder reruns once per row, about T rows against the cache's one."
        ),
        too_low=(
            "A cache saves more than the attention: without one, every append sends every earlier row through every "
            "layer again, so each step costs about T times the cached one."
        ),
        concept="tradeoffs_append_flops",
        idea="cache-saving",
    )


CUT_MISCONCEPTIONS = {
    "right": "",
    "specials": "[CLS] and [SEP] take two of the positions: only the cap less two of the text's pieces fit.",
    "sep": "Truncation cuts the text, then still closes it with [SEP]: that last position is not the text's.",
    "last": "That is the last piece the model still sees: the first one it never sees comes right after it.",
    "words": "The cap counts word pieces, not words: a word the vocabulary cuts in two takes two positions.",
}


def cut_question(cut: FirstCut, copies: int, escape) -> Question:
    """cut: encoder_core's first_cut on the student's sentence; escape: for the pieces, as the page shows them."""
    names = {i: name for name, i in cut.misread.items()} | {cut.index: "right"}
    return Question(
        LESSON,
        "first-cut",
        f"Your sentence, {len(cut.pieces)} word pieces, written {copies} times in a row is longer than the model's "
        f"{cut.cap} positions, so the tokenizer truncates it: [CLS], as many of its pieces as fit, [SEP]. Which "
        "piece of your sentence (counted from 0) is the first one the model never sees?",
        tuple(Option(f"piece {i}: “{escape(cut.pieces[i])}”", CUT_MISCONCEPTIONS[names[i]]) for i in cut.options),
        concept="tradeoffs_first_cut",
        idea="truncation-cap",
    )


CASE_LABELS = {"masked": "[MASK] in its place", "random": "a random word in its place", "kept": "the word itself"}
CASE_MISCONCEPTIONS = {
    "masked": (
        "Seeing [MASK] most in training does not make it the best clue: a visible word is stronger, and the 10% "
        "kept case taught the model to use it."
    ),
    "random": (
        "A random word in its place is no clue to the word that belongs there: the model is left with the "
        "context around it, as under [MASK], and has learnt that a visible word may be a wrong one."
    ),
    "kept": (
        "The model does not simply copy what it sees: the 10% random case taught it that a visible word can be "
        "wrong, so its context can outweigh the word."
    ),
}


def mismatch_question(position: int, word: str) -> Question:
    """word: the original word at the position, as the page shows it (escaped for markdown)."""
    return Question(
        LESSON,
        "mask-mismatch",
        f"The trained MLM reads your sentence three times, with position {position} (“{word}”) holding [MASK], a "
        f"random word, or “{word}” itself. Under which input does it give “{word}” the highest probability there?",
        tuple(Option(CASE_LABELS[c], CASE_MISCONCEPTIONS[c]) for c in CASES),
        concept="tradeoffs_mask_mismatch",
        idea="mask-mismatch",
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

MISMATCH_STEP = 4  # "The [MASK] mismatch" is the lesson's fifth section


def _mismatch(run: Run):
    return core.mask_mismatch(run.model, run.tokenizer, run.ids, run.proof["position"], 0)


def _mismatch_position(run: Run) -> int:
    """The lesson's rule: a word in the middle, asked only if its likeliest input wins clearly."""
    middle = middle_word(run)
    clear = core.clear_position(_mismatch(replace(run, proof={**run.proof, "position": middle})), middle)
    if clear is None:
        raise CannotAsk("On this sentence no word's likeliest input wins clearly: try another sentence.")
    return clear


register_room_question(
    "tradeoffs",
    "tradeoffs-mismatch",
    "Trade-offs: [MASK], a random word or the word itself: under which is it likeliest?",
    ask=lambda run: mismatch_question(run.proof["position"], run.tokens[run.proof["position"]]),
    step=MISMATCH_STEP,
    answer=lambda run: core.CASES.index(core.likeliest_case(_mismatch(run))),
    charts=lambda run: [figs.mismatch_chart(_mismatch(run))],
    trained=True,
    position=_mismatch_position,
    link=lambda proof: {"sentence": proof["sentence"], "word": proof["position"]},  # the lesson's "Position to hide"
)
