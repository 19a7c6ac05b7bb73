"""The trade-offs lesson's predictions: the questions and the wrong ideas behind each wrong answer."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from encoder_core.lessons import tradeoffs as core
from encoder_core.lessons.tradeoffs import CASES, FirstCut, cache_traps
from ui.frame.predict import Option, Prediction, Trap
from ui.room.numbers import number_choice
from ui.room.registry import CannotAsk, Run, lesson_questions, middle_word
from ui.views import tradeoffs as view

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


def cache_question(prefix: int, n: int) -> Prediction:
    return Prediction(
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


def cut_question(cut: FirstCut, copies: int, escape) -> Prediction:
    """cut: encoder_core's first_cut on the student's sentence; escape: for the pieces, as the page shows them."""
    names = {i: name for name, i in cut.misread.items()} | {cut.index: "right"}
    return Prediction(
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


def mismatch_question(position: int, word: str) -> Prediction:
    """word: the original word at the position, as the page shows it (escaped for markdown)."""
    return Prediction(
        LESSON,
        "mask-mismatch",
        f"The trained MLM reads your sentence three times, with position {position} (“{word}”) holding [MASK], a "
        f"random word, or “{word}” itself. Under which input does it give “{word}” the highest probability there?",
        tuple(Option(CASE_LABELS[c], CASE_MISCONCEPTIONS[c]) for c in CASES),
        concept="tradeoffs_mask_mismatch",
        idea="mask-mismatch",
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON)

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


def _mismatch_question(run: Run) -> tuple[Prediction, int]:
    position = run.proof["position"]
    asked = mismatch_question(position, run.tokens[position])
    return asked, core.CASES.index(core.likeliest_case(_mismatch(run)))


register(
    "tradeoffs-mismatch",
    "Trade-offs: [MASK], a random word or the word itself: under which is it likeliest?",
    ask=_mismatch_question,
    step=MISMATCH_STEP,
    charts=lambda run: [view.mismatch_chart(_mismatch(run))],
    trained=True,
    position=_mismatch_position,
    link=lambda proof: {"sentence": proof["sentence"], "word": proof["position"]},  # the lesson's "Position to hide"
)


REUSE_STEP, LENGTH_STEP = 0, 1  # "No reuse" asks the cache's saving, "Length: a hard cap" the first piece cut
ROOM_APPENDS = 16  # N, as the lesson's own default
ROOM_COPIES = 100  # the sentence written this many times, as the lesson's own default


def _costs(run: Run):
    """N tokens appended to the lecturer's sentence one at a time, both ways (the lesson's count of FLOPs)."""
    if len(run.ids) + ROOM_APPENDS > run.model.config.max_positions:
        raise CannotAsk(
            f"{len(run.ids)} + {ROOM_APPENDS} tokens pass the model's {run.model.config.max_positions} positions: "
            "type a shorter sentence."
        )
    return _append_costs(run.model, tuple(run.ids))


@lru_cache(maxsize=8)
def _append_costs(model, ids: tuple[int, ...]):
    """Once per model and sentence: the question, its answer and its chart all read it (on MiniLM it takes seconds)."""
    return core.append_costs(model, list(ids), ROOM_APPENDS)


def _cache_choice(run: Run):
    return number_choice(cache_question(len(run.ids), ROOM_APPENDS), _costs(run).ratio, shown=lambda v: f"{v:,.1f}×")


def _cut(run: Run):
    """The lecturer's sentence written ROOM_COPIES times, truncated to the model's positions (the lesson's cut)."""
    text, limit = run.proof["sentence"], run.model.config.max_positions
    cap = core.length_cap(run.tokenizer, " ".join([text] * ROOM_COPIES), limit)
    cut = core.first_cut(run.tokenizer, text, ROOM_COPIES, cap.cap)
    if cut is None:
        raise CannotAsk(
            f"Written {ROOM_COPIES} times, this sentence fits the model's {limit} positions, or it is one word piece "
            "(where every wrong idea would cut it): nothing to ask. Type a longer sentence."
        )
    return cap, cut


def _cut_question(run: Run) -> tuple[Prediction, int]:
    _, cut = _cut(run)
    return cut_question(cut, ROOM_COPIES, lambda text: text), cut.options.index(cut.index)  # options shown as text


register(
    "tradeoffs-cache-saving",
    "Trade-offs: how many times the cached FLOPs does the encoder spend on N appends?",
    ask=_cache_choice,
    step=REUSE_STEP,
    charts=lambda run: [view.append_flops_chart(_costs(run))],
)
register(
    "tradeoffs-first-cut",
    "Trade-offs: the sentence repeated past the cap; which piece is cut first?",
    ask=_cut_question,
    step=LENGTH_STEP,
    charts=lambda run: [view.cap_chart(_cut(run)[0])],
)
