"""The padding lesson's predictions: what a student is asked before the model answers.

The answers come from encoder_core.lessons.padding (pad_count, mean_pad_share, leak_trend); the options of
LEAK_TREND are in the order of its LEAK_TRENDS. Feedback that states a fact about this input is built from
that input's numbers (a test recomputes them); none of it is shown before the commit.
"""

from __future__ import annotations

from encoder_core.lessons import padding as core
from encoder_core.lessons.padding import (
    LEAK_TRENDS,
    PAD_SHARE_TOLERANCE,
    PadCount,
    PadLeak,
    accepted_trends,
    even_is_far,
    leak_ends,
)
from ui.frame.predict import Option, Prediction, Trap, Verdict, judge, percent
from ui.room.numbers import number_choice
from ui.room.registry import CannotAsk, Run, lesson_questions
from ui.views import padding as view

LESSON = "padding"

N_COUNT_OPTIONS = 4
COUNT_AGAIN = (
    "Count each row's tokens: [CLS], every word piece, and a [SEP] after each sentence. The shorter row is "
    "filled up to the longer one, and the extra pads go on every row."
)


def miscount_text(name: str, count: PadCount, extra: int) -> str:
    """Why a student holding this misconception gets its count (facts about this batch where it names them)."""
    if name == "one_sep":
        return "A pair gets a [SEP] after each of its sentences: [CLS] A [SEP] B [SEP], three special tokens in all."
    if name == "cls_each":
        return "A pair has one [CLS], at the very start; it is the [SEP] that comes twice."
    if name == "words":
        word, pieces = count.split
        return (
            f"The model counts word pieces, not words: “{word}” is {len(pieces)} tokens here "
            f"({' '.join(pieces)}), and any other word the vocabulary lacks whole is cut into pieces too."
        )
    return f"The {extra} extra pads go on every row, the single sentence's too."


def pad_count(count: PadCount, extra: int) -> Prediction:
    """A choice: how many [PAD]s the single sentence's row gets (answer: the option labelled count.answer)."""
    options = {count.answer: Option(str(count.answer))}
    by_count: dict[int, list[str]] = {}  # two misconceptions may give the same count: both are named
    for name, n in count.miscounts.items():
        by_count.setdefault(n, []).append(miscount_text(name, count, extra))
    for n, texts in list(by_count.items())[: N_COUNT_OPTIONS - 1]:
        options[n] = Option(str(n), " Or: ".join(texts))
    step = 1
    while len(options) < N_COUNT_OPTIONS:  # filled with the nearest counts left, never below 0
        for n in (count.answer + step, count.answer - step):
            if n >= 0 and n not in options and len(options) < N_COUNT_OPTIONS:
                options[n] = Option(str(n), COUNT_AGAIN)
        step += 1
    more = f", then {extra} extra pads on every row" if extra else ""
    return Prediction(
        LESSON,
        "pad-count",
        "The pair and the single sentence go into one batch: each is tokenized ([CLS] first, a [SEP] after each "
        f"sentence), the shorter filled up with [PAD] to the longer one's length{more}. How many [PAD]s does the "
        "single sentence's row get?",
        tuple(options[n] for n in sorted(options)),
        concept="padding_pad_count",
        idea="pad-count",
    )


def pad_count_answer(q: Prediction, count: PadCount) -> int:
    """The index of the right option in q (built by pad_count)."""
    return [o.label for o in q.options].index(str(count.answer))


def pad_share(n_real: int, n_pads: int, layer: int, head: int, share: float, even: float) -> Prediction:
    """A number: without the mask, the share of a real token's attention that goes to the pads.

    share: the model's answer, even: an even spread's (both known before the commit, shown only after it): the
    feedback states them, and the even share is named as a trap where it lies far enough from the answer."""
    traps = [Trap(0.0, "Without the mask nothing marks a [PAD] as empty: it takes its share like any key.")]
    if even_is_far(share, even):
        traps.append(
            Trap(
                even,
                "Attention is not shared out evenly: a head weighs each key by how well it matches the query. "
                f"{n_pads} of the {n_real + n_pads} keys are pads, an even {even:.3f}, but this head gives them "
                f"{share:.3f}.",
            )
        )
    return Prediction(
        LESSON,
        "pad-share",
        f"Suppose nobody passes the mask. At layer {layer}, head {head}, what share of its attention does a real "
        f"token of the single sentence give its {n_pads} [PAD]s, on average over its {n_real} real tokens? "
        f"(0 is none, 1 is all of it; right within {percent(PAD_SHARE_TOLERANCE)})",
        concept="padding_pad_weight",
        idea="unmasked-pads-take-attention",
        tolerance=PAD_SHARE_TOLERANCE,
        traps=tuple(traps),
        too_high="Each [PAD] is weighed like any other key, by how well it matches the query: here the real tokens "
        f"keep {1 - share:.3f} of their attention for one another.",
        too_low="Without the mask nothing marks a [PAD] as empty: each one is a key with an embedding and a "
        f"position, and takes its share of every softmax row. Here the {n_pads} pads take {share:.3f} together.",
    )


LEAK_TREND_OPTIONS = {
    "grows": Option(
        "They move, further with more pads",
        "More pads need not mean a bigger move: each pad sits at its own position, so their pulls do not simply "
        "add up.",
    ),
    "same": Option(
        "They move by the same, however many",
        "Each extra pad is one more key taking a share of the softmax rows, so the pull on the real tokens "
        "changes with the number of pads.",
    ),
    "still": Option(
        "They stay put: a [PAD] changes nothing",
        "Without the mask a [PAD] is a token like any other: it takes attention, and every later layer passes "
        "the change on.",
    ),
    "shrinks": Option(
        "They move less as more pads are added",
        "Extra pads do not cancel each other out: each is one more key in every softmax row.",
    ),
}


def leak_trend(most_pads: int) -> Prediction:
    """A choice: without the mask, how the real outputs move as pads are appended (answer: leak_trend)."""
    return Prediction(
        LESSON,
        "leak-trend",
        f"Mask off. Append [PAD]s after the single sentence, 1 of them, then more, up to {most_pads}. "
        "Compared with the sentence run alone, what happens to its real tokens' final vectors?",
        tuple(LEAK_TREND_OPTIONS[code] for code in LEAK_TRENDS),
        concept="padding_leak_trend",
        idea="unmasked-leak-with-more-pads",
    )


def leak_fact(leak: PadLeak) -> str:
    (few, first), (most, last) = leak_ends(leak)
    return f" Here the gap is {first:.3g} with {few} pad{'s' if few != 1 else ''} and {last:.3g} with {most}."


def leak_verdict(q: Prediction, leak: PadLeak, guess: int, answer: int) -> Verdict:
    """Score a trend guess: right if it is among accepted_trends (a neighbour counts where the ratio sits on the
    edge between two trends); a wrong guess's misconception is followed by this sentence's gaps."""
    accepted = accepted_trends(leak)
    if LEAK_TRENDS[int(guess)] in accepted:
        if int(guess) == int(answer):
            return Verdict(True, "Right.", "")
        said = f"Right: the gap's change sits on the edge between “{q.options[int(answer)].label}” and this."
        return Verdict(True, said + leak_fact(leak), "")
    verdict = judge(q, guess, answer)
    return Verdict(False, verdict.said, verdict.misconception + leak_fact(leak))


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON, "single")

LEAK_STEP = 2  # "The pad-leak gap" is the padding lesson's third section


def _leak(run: Run):
    """The sentence alone, then with 1 up to LEAK_MIN_PADS [PAD]s appended and no mask (the lesson's curve)."""
    room = run.model.config.max_positions - core.LEAK_MIN_PADS  # the pads must fit too
    batch = run.tokenizer.pad([run.tokenizer.encode(run.proof["sentence"], max_length=room, truncate=True)])
    return core.pad_leak(run.model, batch, 0, min_pads=core.LEAK_MIN_PADS)


def _leak_question(run: Run) -> tuple[Prediction, int]:
    return leak_trend(core.LEAK_MIN_PADS), core.LEAK_TRENDS.index(core.leak_trend(_leak(run)))


register(
    "padding-leak",
    "Padding: mask off, pads appended; how do the real outputs move?",
    ask=_leak_question,
    step=LEAK_STEP,
    charts=lambda run: [view.leak_curve_chart(_leak(run), mask_on=False)],
)


BATCH_STEP = 0  # "The batch"
ROOM_PAIR = ("the cat sat on the mat", "it was happy")  # the lesson's own pair (pages/padding.py's defaults)


def _count(run: Run):
    """The lesson's pair and the lecturer's sentence as the single one, in one batch with no extra pads."""
    limit = run.model.config.max_positions
    pair = run.tokenizer.encode(*ROOM_PAIR, max_length=limit, truncate=True)
    single = run.tokenizer.encode(run.proof["sentence"], max_length=limit, truncate=True)
    return run.tokenizer.pad([pair, single]), core.pad_count(pair, single, 0)


def _count_question(run: Run) -> tuple[Prediction, int]:
    _, count = _count(run)
    asked = pad_count(count, 0)
    return asked, pad_count_answer(asked, count)


register(
    "padding-pad-count",
    "Padding: how many [PAD]s does the single sentence's row get?",
    ask=_count_question,
    step=BATCH_STEP,
    charts=lambda run: [view.batch_chart(_count(run)[0])],
    lead=lambda run: f"The pair is “{ROOM_PAIR[0]}” + “{ROOM_PAIR[1]}”; the single sentence is this one. ",
)


ATTENTION_STEP = 1  # "Attention with and without the mask" asks the pads' share
SHORT_ROW = 1  # the batch is [pair, single]: the single sentence is the one padded


def _pad_attention(run: Run):
    """The single sentence's row at the round's layer and head, with and without the mask (the lesson's grids)."""
    batch, _ = _count(run)
    n_real = batch.lengths[SHORT_ROW]
    n_pads = batch.ids.shape[1] - n_real
    if not n_pads:
        raise CannotAsk(
            f"The sentence is as long as the lesson's pair ({n_real} tokens or more), so it gets no [PAD]: type a "
            "shorter one."
        )
    attn = core.padded_attention(run.model, batch, SHORT_ROW, run.proof["layer"], run.proof["head"])
    share = core.mean_pad_share(attn)
    if share < core.PAD_SHARE_MIN:
        raise CannotAsk(
            f"On this head the pads take only {share:.3f} of the real tokens' attention even without the mask: "
            "too little to ask about. Try another sentence."
        )
    return batch, attn, n_real, n_pads, share


def _share_choice(run: Run):
    _, attn, n_real, n_pads, share = _pad_attention(run)
    layer, head = run.proof["layer"], run.proof["head"]
    asked = pad_share(n_real, n_pads, layer, head, share, core.even_share(attn))
    return number_choice(asked, share, shown=lambda v: f"{v:.3f}", most=1.0)


def _share_charts(run: Run) -> list:
    batch, attn, *_ = _pad_attention(run)
    tokens = batch.tokens[SHORT_ROW]
    return [*view.padded_attention_charts(attn, tokens), view.pad_mass_chart(attn, tokens)]


register(
    "padding-pad-share",
    "Padding: mask off, what share of its attention does a real token give the pads?",
    ask=_share_choice,
    step=ATTENTION_STEP,
    charts=_share_charts,
    # the worked half: with the mask, the pads get nothing
    asked_with=lambda run: list(view.padded_attention_charts(_pad_attention(run)[1], _count(run)[0].tokens[SHORT_ROW]))[
        :1
    ],
    lead=lambda run: f"The pair is “{ROOM_PAIR[0]}” + “{ROOM_PAIR[1]}”; the single sentence is this one. ",
)
