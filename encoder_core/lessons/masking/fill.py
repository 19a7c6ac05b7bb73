"""Fill in the blank: which word to hide, and the trained model's ranking of its vocabulary."""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from ...data.lexicon import SPECIAL_TOKENS
from ...model.tokenizer import MASK, WordPieceTokenizer


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
