"""The masked-language-modelling lesson: one draw of BERT's corruption, the model's pass over it,
where the loss lives, and a fill-mask query built from a chosen word.

Everything here is computed with encoder_core's own masking (mask_tokens), loss (loss_breakdown)
and model; the page only lays it out.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..data.corpus import nsp_pairs
from ..data.lexicon import SPECIAL_TOKENS
from ..model.config import EncoderConfig
from ..model.output_heads import MaskedLanguageModel
from ..model.tokenizer import MASK, WordPieceTokenizer
from ..objectives.loss import LossBreakdown, loss_breakdown
from ..objectives.mlm_masking import (
    IGNORE_INDEX,
    KEPT,
    MASKED,
    NOT_CHOSEN,
    RANDOM,
    MaskCounts,
    MaskingResult,
    exact_counts,
    mask_tokens,
)

# Seed 004's counting example: "the cat went home" is six positions with [CLS] and [SEP];
# hiding "cat" and "went" leaves two positions that carry a loss.
COUNT_EXAMPLE_TEXT = "the cat went home"
COUNT_EXAMPLE_HIDDEN = (2, 3)


# What can happen to a position in a draw, as codes (the view words them), in the order the view colours them.
FATES = ("never_eligible", "not_chosen", "masked", "random", "kept")
ACTION_FATES = {NOT_CHOSEN: "not_chosen", MASKED: "masked", RANDOM: "random", KEPT: "kept"}
CHOSEN_FATES = frozenset(("masked", "random", "kept"))
# Why a position can never be chosen: [CLS], [SEP] or [PAD]; a word outside the vocabulary; a [MASK] typed in.
REASONS = ("special", "unknown", "typed_mask")


@dataclass(frozen=True)
class DrawPosition:
    """One position of a draw: what it held, what happened to it, what the model receives and its label."""

    position: int
    token: str  # the original token
    original_id: int
    fate: str  # one of FATES
    reason: str | None  # one of REASONS when the fate is never_eligible, else None
    input_token: str  # what the model receives
    input_id: int
    label: int  # the original id where chosen, -100 elsewhere

    @property
    def chosen(self) -> bool:
        return self.fate in CHOSEN_FATES


def never_eligible_reason(tokenizer: WordPieceTokenizer, token_id: int) -> str:
    if token_id == tokenizer.unk_id:
        return "unknown"
    if token_id == tokenizer.mask_id:
        return "typed_mask"
    return "special"


@dataclass
class MaskingDraw:
    """One draw of the MLM corruption over one sentence (batch of 1)."""

    tokens: list[str]  # the original tokens, [CLS] ... [SEP]
    ids: torch.Tensor  # (1, T) original ids
    result: MaskingResult  # inputs, labels, actions, eligible, each (1, T)
    input_tokens: list[str]  # what the model receives, as tokens
    rate: float
    exact: bool
    seed: int
    positions: list[DrawPosition]  # the draw position by position, with each one's fate

    @property
    def counts(self) -> MaskCounts:
        return self.result.counts()

    @property
    def rule(self) -> MaskCounts:
        """What the exact rule gives for this many eligible tokens (the coin flip matches it only on average)."""
        return exact_counts(self.counts.eligible, self.rate)

    @property
    def follows_rule(self) -> bool:
        return self.counts == self.rule

    @property
    def expected_chosen(self) -> float:
        """Coin-flip mode: the average number chosen, rate x eligible."""
        return self.rate * self.counts.eligible

    @property
    def chosen_spread(self) -> float:
        """Coin-flip mode: the standard deviation of the number chosen (binomial)."""
        n = self.counts.eligible
        return math.sqrt(n * self.rate * (1.0 - self.rate))


def draw_positions(
    tokenizer: WordPieceTokenizer, ids: torch.Tensor, result: MaskingResult, tokens: list[str], input_tokens: list[str]
) -> list[DrawPosition]:
    """Row 0 of a masking result, one DrawPosition per position: exactly one fate each."""
    out = []
    for t, token in enumerate(tokens):
        token_id = int(ids[0, t])
        eligible = bool(result.eligible[0, t])
        out.append(
            DrawPosition(
                position=t,
                token=token,
                original_id=token_id,
                fate=ACTION_FATES[int(result.actions[0, t])] if eligible else "never_eligible",
                reason=None if eligible else never_eligible_reason(tokenizer, token_id),
                input_token=input_tokens[t],
                input_id=int(result.inputs[0, t]),
                label=int(result.labels[0, t]),
            )
        )
    return out


def draw_masks(tokenizer: WordPieceTokenizer, ids: list[int], *, rate: float, exact: bool, seed: int) -> MaskingDraw:
    """Corrupt one encoded sentence with mask_tokens, seeded by an explicit generator.

    Every special id is left alone: [CLS], [SEP] and [PAD] as in BERT, and here also [UNK] and a
    typed [MASK], which hold no real word to recover.
    """
    ids_t = torch.tensor([ids], dtype=torch.long)
    generator = torch.Generator().manual_seed(int(seed))
    result = mask_tokens(
        ids_t,
        mask_id=tokenizer.mask_id,
        special_ids=tokenizer.special_ids,
        vocab_size=tokenizer.vocab_size,
        rate=float(rate),
        exact=bool(exact),
        generator=generator,
    )
    tokens, input_tokens = tokenizer.decode(ids_t[0]), tokenizer.decode(result.inputs[0])
    return MaskingDraw(
        tokens=tokens,
        ids=ids_t,
        result=result,
        input_tokens=input_tokens,
        rate=float(rate),
        exact=bool(exact),
        seed=int(seed),
        positions=draw_positions(tokenizer, ids_t, result, tokens, input_tokens),
    )


# The tensors of one MLM pass, in order: ids (B, T), hidden (B, T, D), logits (B, T, V), chosen rows (n, V).
SHAPE_STEPS = ("ids", "hidden", "logits", "chosen_logits")


@dataclass
class MLMForward:
    """The model's pass over a corrupted batch, with every tensor a student is shown."""

    inputs: torch.Tensor  # (B, T) ids the model receives
    hidden: torch.Tensor  # (B, T, D) the encoder's last layer
    logits: torch.Tensor  # (B, T, V) a score for every vocabulary entry at every position
    labels: torch.Tensor  # (B, T) original id where chosen, -100 elsewhere
    selected_logits: torch.Tensor  # (n_chosen, V) the rows the loss reads
    breakdown: LossBreakdown
    pytorch_loss: float  # F.cross_entropy(..., ignore_index=-100); nan when nothing was chosen
    top_guess_tokens: list[list[str]] | None = None  # (B, T) top_guess decoded, when run with a tokenizer

    @property
    def label_probability(self) -> torch.Tensor:
        """(B, T) the probability the model gives the original token; 0 where nothing is asked."""
        return torch.exp(-self.breakdown.per_position) * self.breakdown.counted

    @property
    def top_guess(self) -> torch.Tensor:
        """(B, T) the model's most likely token id at every position."""
        return self.logits.argmax(dim=-1)

    def shape_steps(self) -> list[tuple[str, tuple[int, ...]]]:
        """(SHAPE_STEPS code, shape) as read from the actual tensors, in the order they are produced."""
        tensors = (self.inputs, self.hidden, self.logits, self.selected_logits)
        return [(name, tuple(tensor.shape)) for name, tensor in zip(SHAPE_STEPS, tensors)]


def mlm_forward(
    model,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    segments: torch.Tensor | None = None,
    tokenizer: WordPieceTokenizer | None = None,
) -> MLMForward:
    """Run a MaskedLanguageModel (read-only) and break its loss down per position.

    With the model's tokenizer, its top guess at every position is decoded too.
    """
    with torch.inference_mode():
        logits, out = model(inputs, segments, need_weights=False)
    chosen = labels != IGNORE_INDEX
    selected = logits[chosen]  # (n_chosen, V)
    if int(chosen.sum()):
        reference = float(F.cross_entropy(logits.transpose(1, 2), labels, ignore_index=IGNORE_INDEX))
    else:
        reference = float("nan")  # no target to average: PyTorch would give nan too
    breakdown = loss_breakdown(logits, labels)
    guesses = [tokenizer.decode(row) for row in logits.argmax(dim=-1)] if tokenizer is not None else None
    return MLMForward(inputs, out.hidden, logits, labels, selected, breakdown, reference, guesses)


@dataclass
class CountExample:
    """Seed 004's counting rule on the trained model: six positions, two hidden, the mean is over two."""

    tokens: list[str]
    input_tokens: list[str]
    forward: MLMForward

    @property
    def n_positions(self) -> int:
        return self.forward.breakdown.n_positions

    @property
    def n_counted(self) -> int:
        return self.forward.breakdown.n_counted

    @property
    def losses(self) -> list[float]:
        return [float(v) for v in self.forward.breakdown.per_position[0]]


def count_example(
    model, tokenizer: WordPieceTokenizer, text: str = COUNT_EXAMPLE_TEXT, hidden: tuple[int, ...] = COUNT_EXAMPLE_HIDDEN
) -> CountExample:
    """Hide the given positions with [MASK], label only them, run the model."""
    enc = tokenizer.encode(text)
    ids = torch.tensor([enc.ids], dtype=torch.long)
    if any(not 0 < p < len(enc.ids) - 1 for p in hidden):
        raise ValueError(f"positions {hidden} must be inside the sentence (1..{len(enc.ids) - 2})")
    inputs = ids.clone()
    labels = torch.full_like(ids, IGNORE_INDEX)
    for p in hidden:
        inputs[0, p] = tokenizer.mask_id
        labels[0, p] = ids[0, p]
    return CountExample(
        enc.tokens, tokenizer.decode(inputs[0]), mlm_forward(model, inputs, labels, tokenizer=tokenizer)
    )


def mask_word(tokenizer: WordPieceTokenizer, text: str, position: int) -> str:
    """The sentence with its position-th word (1-based, as the tokenizer splits it) replaced by [MASK].

    position 0 leaves the text as typed. The words are re-joined with single spaces, which the
    tokenizer splits back into the same words.
    """
    words = tokenizer.split(text)
    if position == 0:
        return text
    if not 1 <= position <= len(words):
        raise ValueError(f"position must be in 1..{len(words)}, got {position}")
    words[position - 1] = MASK
    return " ".join(words)


# Seed 004's "try it": eight sequences of 20 tokens, width 48, 1,000 words, 12 masked positions.
EXERCISE_SHAPE = {"batch": 8, "length": 20, "d_model": 48, "vocab_size": 1000, "n_masked": 12}


def shape_exercise(
    batch: int = 8, length: int = 20, d_model: int = 48, vocab_size: int = 1000, n_masked: int = 12, seed: int = 0
) -> MLMForward:
    """Build a throwaway model of the exercise's size and run it, so the answer's shapes are read, not typed."""
    if not 0 <= n_masked <= batch * length:
        raise ValueError(f"n_masked must be in 0..{batch * length}, got {n_masked}")
    config = EncoderConfig(vocab_size=vocab_size, max_positions=length, d_model=d_model, n_heads=4, n_layers=1)
    with torch.random.fork_rng():  # the page's other draws keep their own random stream
        torch.manual_seed(seed)
        model = MaskedLanguageModel(config).eval()
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab_size, (batch, length), generator=g)
    labels = torch.full_like(ids, IGNORE_INDEX)
    flat = torch.randperm(batch * length, generator=g)[:n_masked]
    labels.view(-1)[flat] = ids.view(-1)[flat]
    return mlm_forward(model, ids, labels)


@dataclass
class NSPExample:
    """One next-sentence-prediction pair as BERT would feed it: [CLS] A [SEP] B [SEP], segments 0 then 1."""

    sentence_a: str
    sentence_b: str
    is_next: bool
    tokens: list[str]
    segments: list[int]


def nsp_examples(tokenizer: WordPieceTokenizer, n: int = 6, seed: int = 0) -> list[NSPExample]:
    """n pairs from the corpus's NSP builder (half real continuations, half random), encoded as a pair."""
    out = []
    for pair in nsp_pairs(n, seed=seed):
        enc = tokenizer.encode(pair.sentence_a, pair.sentence_b)
        out.append(NSPExample(pair.sentence_a, pair.sentence_b, pair.is_next, enc.tokens, enc.segments))
    return out


@dataclass
class MaskPrediction:
    position: int  # index in the encoded sequence
    top: list[tuple[str, float]]  # the top-k (token, probability), most likely first
    hidden_word: str | None  # the word the student hid (fill_position), if any
    hidden_rank: int | None  # its rank among all vocabulary entries (1 = first choice)
    hidden_probability: float | None
    rest: float = 0.0  # the probability of every entry outside the top-k, summed over the whole vocabulary

    @property
    def pieces(self) -> list[bool]:
        """For each of the top-k: True when it is a word piece that continues a word ("##ing"), not a word."""
        return [is_piece(word) for word, _ in self.top]

    @property
    def words(self) -> list[str]:
        return [word for word, _ in self.top]

    @property
    def probabilities(self) -> list[float]:
        return [p for _, p in self.top]


def is_piece(token: str) -> bool:
    """A WordPiece continuation ("##ing"): the end of a word, glued to the piece before it, not a word."""
    return token.startswith("##") and len(token) > 2


def rate_showing_every_fate(n_eligible: int, step: float = 0.01) -> float | None:
    """The smallest masking rate (a multiple of step, as the page's slider moves) at which the exact count
    gives at least one [MASK], one random token and one kept token; None if no rate does."""
    for k in range(round(1 / step) + 1):
        counts = exact_counts(n_eligible, round(k * step, 10))
        if counts.masked and counts.random and counts.kept:
            return round(k * step, 10)
    return None


def fill_query(tokenizer: WordPieceTokenizer, text: str, position: int, max_positions: int):
    """The Encoding the model receives for fill-mask: the text with its position-th word hidden (mask_word),
    cut to max_positions."""
    return tokenizer.encode(mask_word(tokenizer, text, position), max_length=max_positions, truncate=True)


# Blanks computed per query: each is a softmax over the whole vocabulary and a chart on the page, so a
# text of 200 [MASK]s costs no more than one of six; the page says how many it left out.
MAX_BLANKS = 6

# What the page must say about a typed fill-mask text, beyond the text itself (see plan_fill).
FILL_FALLBACKS = ("last_word", "example")


@dataclass(frozen=True)
class FillPlan:
    """What fill-mask runs on for a typed text, and what about that text the page has to say."""

    text: str  # the sentence used: as typed, or the example when nothing in it can be hidden
    position: int  # the word hidden (1-based), or 0: the [MASK]s typed
    query: str  # the text sent to the model, [MASK] where a word is asked for
    n_blanks: int  # [MASK]s the model receives (after cutting to its positions)
    n_computed: int  # the first min(n_blanks, max_blanks) of them are ranked and shown
    fallback: str | None  # one of FILL_FALLBACKS, or None when the text had a blank to fill
    hidden: str | None  # the word hidden by the "last_word" fallback
    glued: tuple[str, ...]  # what was typed with [MASK] against a letter or digit ("cat[MASK]"), as typed
    only_masks: bool  # every position between [CLS] and [SEP] is a [MASK]: no word to read
    blanks_cut: int  # [MASK]s lost with the end of a text longer than the model's positions
    encoding: object = None  # the tokenizer's Encoding of the query, as the model receives it
    max_positions: int = 0  # the model's positions, which the query was cut to

    @property
    def n_skipped(self) -> int:
        return self.n_blanks - self.n_computed


GLUED = re.compile(r"\S*(?:[^\W_]\[mask\]|\[mask\][^\W_])\S*", re.IGNORECASE)


def last_hideable_word(tokenizer: WordPieceTokenizer, text: str) -> int:
    """The 1-based position of the last word that is a single vocabulary entry made of letters, or 0."""
    words = tokenizer.split_words(text)
    for k in range(len(words), 0, -1):
        word, pieces = words[k - 1]
        if len(pieces) == 1 and word.isalpha() and pieces[0] in tokenizer.token_to_id and not is_piece(pieces[0]):
            if pieces[0].upper() not in SPECIAL_TOKENS:
                return k
    return 0


def plan_fill(
    tokenizer: WordPieceTokenizer,
    text: str,
    position: int,
    max_positions: int,
    example: str,
    max_blanks: int = MAX_BLANKS,
) -> FillPlan:
    """Decide what fill-mask runs on, whatever was typed.

    No [MASK] and no word chosen: the last word that can be hidden is hidden ("last_word"); a text with
    nothing to hide (emoji only, say) gives way to the example ("example"), as does a text whose every
    [MASK] lies past the model's positions. Many [MASK]s: only the first max_blanks are computed.
    """
    fallback, hidden = None, None
    typed = sum(1 for w in tokenizer.split(text) if w.upper() == MASK)
    if position == 0 and typed == 0:
        k = last_hideable_word(tokenizer, text)
        if k:
            position, fallback, hidden = k, "last_word", tokenizer.split(text)[k - 1].lower()
        else:
            text, fallback = example, "example"
    query = mask_word(tokenizer, text, position)
    enc = tokenizer.encode(query, max_length=max_positions, truncate=True)
    n_blanks = enc.tokens.count(MASK)
    in_query = sum(1 for w in tokenizer.split(query) if w.upper() == MASK)
    cut = in_query - n_blanks
    if n_blanks == 0 and fallback is None:  # every blank was past the model's positions
        text, position, fallback = example, 0, "example"
        query = example
        enc = tokenizer.encode(query, max_length=max_positions, truncate=True)
        n_blanks = enc.tokens.count(MASK)
    inner = enc.tokens[1:-1]
    return FillPlan(
        text=text,
        position=position,
        query=query,
        n_blanks=n_blanks,
        n_computed=min(n_blanks, max_blanks),
        fallback=fallback,
        hidden=hidden,
        glued=tuple(dict.fromkeys(GLUED.findall(text))),
        only_masks=bool(inner) and all(t == MASK for t in inner),
        blanks_cut=cut,
        encoding=enc,
        max_positions=max_positions,
    )


@dataclass
class FillMaskView:
    query: str  # the text sent to the model, with [MASK] where a word is asked for
    tokens: list[str]  # as the model sees it
    predictions: list[MaskPrediction]  # one per computed [MASK] (the first max_blanks), left to right
    unknown: list[str]  # typed words outside the vocabulary (they became [UNK])
    truncated: int
    first_probabilities: torch.Tensor | None = None  # (V,) the softmax at the first [MASK]; None without one
    n_blanks: int = 0  # every [MASK] the model received, computed or not


def rank_in(probabilities: torch.Tensor, token_id: int) -> int:
    """1 + how many vocabulary entries the model gives a higher probability than this one (1: its first choice)."""
    return 1 + int((probabilities > probabilities[token_id]).sum())


def fill_mask_view(
    model,
    tokenizer: WordPieceTokenizer,
    text: str,
    position: int = 0,
    top_k: int = 5,
    max_blanks: int = MAX_BLANKS,
) -> FillMaskView:
    """The model's top_k at each of the first max_blanks [MASK]s, after hiding the text's position-th word
    (0: use the [MASK]s typed). One pass over the text; then a softmax and torch.topk per computed blank,
    so the cost does not grow with the number of blanks typed.

    For a hidden word, the rank and probability the model gives the original are reported too.
    """
    query = mask_word(tokenizer, text, position)
    enc = fill_query(tokenizer, text, position, model.config.max_positions)
    positions = [i for i, t in enumerate(enc.tokens) if t == MASK]
    words = tokenizer.split_words(text)
    hidden_word = words[position - 1][0].lower() if position else None
    # Only a word that is one piece of the vocabulary has a rank: one [MASK] cannot stand for
    # "door ##mat", and hiding a typed [MASK] or [SEP] asks for no real word.
    if hidden_word is not None and (hidden_word.upper() in SPECIAL_TOKENS or hidden_word not in tokenizer.token_to_id):
        hidden_word = None
    # Word k (1-based) sits after [CLS] and the pieces of the words before it.
    hidden_at = 1 + sum(len(pieces) for _, pieces in words[: position - 1]) if position else None
    computed = positions[:max_blanks]
    predictions, first = [], None
    if computed:
        ids = torch.tensor([enc.ids])
        with torch.inference_mode():
            logits, _ = model(ids, torch.tensor([enc.segments]), need_weights=False)
        probs = torch.softmax(logits[0, computed].float(), dim=-1)  # (n_computed, V)
        top = probs.topk(min(top_k, probs.shape[-1]), dim=-1)
        first = probs[0]
        for row, pos in enumerate(computed):
            rank = prob = None
            word = hidden_word if pos == hidden_at else None
            if word is not None:
                i = tokenizer.token_to_id[word]
                rank, prob = rank_in(probs[row], i), float(probs[row, i])
            pairs = [(tokenizer.vocab[int(i)], float(p)) for p, i in zip(top.values[row], top.indices[row])]
            rest = float(probs[row].double().sum() - top.values[row].double().sum())
            predictions.append(MaskPrediction(pos, pairs, word, rank, prob, max(rest, 0.0)))
    return FillMaskView(query, enc.tokens, predictions, enc.unknown, enc.truncated, first, len(positions))


# ---- what a student is asked to predict (ui.frame.predict asks; these compute the model's answer) ----

# Which positions of a draw carry a loss: every one; the chosen ones ([MASK], random and kept); only the
# [MASK]s; every word but [CLS] and [SEP]. In the order the question offers them.
LOSS_SETS = ("every", "chosen", "masked", "words")


def loss_positions(draw: MaskingDraw) -> list[int]:
    """The positions whose label is not -100: the only ones the loss reads."""
    return [p.position for p in draw.positions if p.label != IGNORE_INDEX]


def loss_set_positions(draw: MaskingDraw) -> dict[str, list[int]]:
    """The positions each of LOSS_SETS names, in this draw."""
    ps = draw.positions
    return {
        "every": [p.position for p in ps],
        "chosen": [p.position for p in ps if p.chosen],
        "masked": [p.position for p in ps if p.fate == "masked"],
        "words": [p.position for p in ps if p.reason != "special"],  # all but [CLS], [SEP] (and [PAD])
    }


def matching_loss_sets(draw: MaskingDraw) -> list[str]:
    """The LOSS_SETS whose positions are exactly the labelled ones. More than one when this draw cannot tell
    them apart: when every chosen position became [MASK], "chosen" and "masked" are the same positions."""
    labelled = loss_positions(draw)
    return [name for name, positions in loss_set_positions(draw).items() if positions == labelled]


def loss_outcome(draw: MaskingDraw) -> str:
    """Which of LOSS_SETS the labelled positions are: "chosen" whenever it fits (the rule), else the one that does."""
    matches = matching_loss_sets(draw)
    if not matches:
        raise ValueError(f"the labelled positions {loss_positions(draw)} are none of {LOSS_SETS}")
    return "chosen" if "chosen" in matches else matches[0]


# Which chosen position carries the largest loss, −log p(original word), under a trained MLM. A coin toss is
# not a question: the largest must lead every other position offered by LOSS_MARGIN nats (there the model
# finds its original word at least e^0.5 ≈ 1.65 times less likely), and an option that comes within the
# margin of the largest counts as right too.
LOSS_MARGIN = 0.5
MAX_LOSS_OPTIONS = 6  # positions offered at most: the largest, and others drawn with the draw's own seed


@dataclass(frozen=True)
class HardestChoice:
    """The chosen positions a student picks the largest loss from, and the model's answer."""

    positions: tuple[int, ...]  # the chosen positions offered, in sentence order
    losses: tuple[float, ...]  # the cross-entropy at each: −log p(original word), in nats
    answer: int  # index into positions of the largest loss
    right: tuple[int, ...]  # indices within LOSS_MARGIN of the largest: each counts as right
    n_chosen: int  # positions chosen in the draw (more than offered when over MAX_LOSS_OPTIONS)

    @property
    def asked(self) -> bool:
        """Two positions or more offered, and at least one of them outside the margin of the largest."""
        return len(self.positions) >= 2 and len(self.right) < len(self.positions)

    def probability(self, i: int) -> float:
        """The probability the model gives the original word at the i-th position offered."""
        return math.exp(-self.losses[i])


def hardest_choice(draw: MaskingDraw, forward: MLMForward) -> HardestChoice:
    """The draw's chosen positions with their losses under the model's pass (mlm_forward over the draw)."""
    per_position = forward.breakdown.per_position[0]
    chosen = [p.position for p in draw.positions if p.chosen]
    if not chosen:
        return HardestChoice((), (), 0, (), 0)
    loss = {t: float(per_position[t]) for t in chosen}
    top = max(chosen, key=loss.__getitem__)
    others = [t for t in chosen if t != top]
    if len(others) >= MAX_LOSS_OPTIONS:
        others = random.Random(draw.seed).sample(others, MAX_LOSS_OPTIONS - 1)
    offered = tuple(sorted([top, *others]))
    losses = tuple(loss[t] for t in offered)
    right = tuple(i for i, v in enumerate(losses) if v >= loss[top] - LOSS_MARGIN)
    return HardestChoice(offered, losses, offered.index(top), right, len(chosen))


# Why a typed guess has no rank: nothing typed; more than one token (several words, or a word cut into
# pieces); a word outside the vocabulary ([UNK]); a special token.
GUESS_PROBLEMS = ("empty", "several", "unknown", "special")


@dataclass(frozen=True)
class GuessRank:
    """A student's guess for a [MASK], placed in the model's ranking of its whole vocabulary there."""

    guess: str  # as typed, trimmed
    pieces: list[str]  # the tokens the tokenizer reads it as
    token: str | None  # the vocabulary entry it is, when it is exactly one ordinary token
    problem: str | None  # one of GUESS_PROBLEMS when token is None
    rank: int | None  # 1: the model's first choice
    probability: float | None
    top_k: int
    vocab_size: int

    @property
    def in_top(self) -> bool:
        return self.rank is not None and self.rank <= self.top_k


def rank_guess(
    tokenizer: WordPieceTokenizer, probabilities: torch.Tensor | None, guess: str, top_k: int = 5
) -> GuessRank:
    """Where the guess falls among every vocabulary entry at one [MASK] (probabilities: (V,), the softmax
    there, as FillMaskView.first_probabilities): its rank and probability, or why it has none."""
    text = str(guess).strip()
    pieces = [piece for _, word_pieces in tokenizer.split_words(text) for piece in word_pieces] if text else []
    token, problem = None, None
    if not pieces:
        problem = "empty"
    elif len(pieces) > 1:
        problem = "several"
    elif pieces[0] == tokenizer.vocab[tokenizer.unk_id]:
        problem = "unknown"
    elif pieces[0] in SPECIAL_TOKENS:
        problem = "special"
    else:
        token = pieces[0]
    rank = probability = None
    if token is not None and probabilities is not None:
        i = tokenizer.token_to_id[token]
        rank, probability = rank_in(probabilities, i), float(probabilities[i])
    return GuessRank(text, pieces, token, problem, rank, probability, top_k, tokenizer.vocab_size)


# The two runs of encoder_core.objectives.leakage, in the order they are trained.
LEAKAGE_RUNS = ("correct", "leaky")


def leakage_run_at(step: int, total: int) -> str:
    """Which run a progress step belongs to: leakage_experiment trains correct then leaky, counting over both."""
    return "correct" if step <= total // 2 else "leaky"


def leakage_estimate(seconds_per_step: float | None, steps: int) -> int | None:
    """Whole seconds the two runs should take at the measured speed (at least 1), or None before any run."""
    return max(1, round(seconds_per_step * steps)) if seconds_per_step else None


def running_mean(values: list[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values (fewer at the start): a readable training curve."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    csum = [0.0]
    for v in values:
        csum.append(csum[-1] + float(v))
    return [(csum[i + 1] - csum[max(0, i + 1 - window)]) / min(i + 1, window) for i in range(len(values))]


@dataclass
class LeakageSummary:
    """encoder_core.objectives.leakage's two runs, boiled down to what the page plots and states."""

    steps: list[int]  # 1..n
    window: int
    accuracy: dict[str, list[float]]  # run name -> running mean of training accuracy
    loss: dict[str, list[float]]  # run name -> running mean of training loss
    final_train_accuracy: dict[str, float]  # mean over the last `window` steps
    first_step_at: dict[str, int | None]  # first step whose running accuracy reaches `threshold`
    threshold: float
    held_out_top1: dict[str, float]
    held_out_top5: dict[str, float]
    n_held_out: int
    seconds: dict[str, float]


def summarise_leakage(result, window: int = 20, threshold: float = 0.9) -> LeakageSummary:
    """result: encoder_core.objectives.leakage.LeakageResult (both runs from the same start and the same batches)."""
    runs = {"correct": result.correct, "leaky": result.leaky}
    n = len(result.correct.accuracy)
    window = max(1, min(window, n))
    acc = {name: running_mean(run.accuracy, window) for name, run in runs.items()}
    first = {name: next((i + 1 for i, a in enumerate(curve) if a >= threshold), None) for name, curve in acc.items()}
    return LeakageSummary(
        steps=list(range(1, n + 1)),
        window=window,
        accuracy=acc,
        loss={name: running_mean(run.loss, window) for name, run in runs.items()},
        final_train_accuracy={name: sum(run.accuracy[-window:]) / window for name, run in runs.items()},
        first_step_at=first,
        threshold=threshold,
        held_out_top1={name: run.held_out_top1 for name, run in runs.items()},
        held_out_top5={name: run.held_out_top5 for name, run in runs.items()},
        n_held_out=result.n_held_out,
        seconds={name: run.seconds for name, run in runs.items()},
    )
