"""The heads lesson: multi-head attention taken apart on one block, and what the heads of a real
pretrained encoder do on a sentence.

Mechanics: each head's Q, K, V are a slice of the block's projections; every head runs its own
softmax; the head outputs are concatenated and mixed by W_O. head_mechanics recomputes all of
that from the weight matrices, independently of the model's forward pass, and checks the
result against the block's recorded "attention" stage.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby

import torch
import torch.nn.functional as F

from ..model.head_patterns import NEIGHBOUR_PATTERNS, HeadLabel
from ..model.model import Encoder
from ..model.output_heads import cls_pool, mean_pool
from ..model.tokenizer import Encoding

SPECIALS = ("[CLS]", "[SEP]", "[PAD]", "[MASK]")
# The tokens an encoding puts around the text. A [MASK] typed by hand is part of the text.
FRAMING = ("[CLS]", "[SEP]", "[PAD]")
# Recomputing a block's attention head by head agrees with the block up to float32 rounding.
MECHANICS_TOLERANCE = 1e-6

# The "bank" sentences of the home page, and a sentence that uses "bank" in the same sense as the first.
BANK_RIVER = "she sat on the bank of the river"
BANK_MONEY = "she sat on the bank and counted the money"
BANK_RIVER_AGAIN = "she sat on the bank of the stream"  # the same words up to and including "bank"
BANK_WORD = "bank"
# Sentences to compare as whole-sentence vectors: a paraphrase pair, a related one, an unrelated one.
SENTENCE_EXAMPLES = (
    "the cat sat on the mat",
    "a cat was sitting on the rug",
    "the dog played in the garden",
    "interest rates rose again this quarter",
)


@dataclass
class AttentionRun:
    """One sequence through an encoder, with every layer's attention kept."""

    tokens: list[str]
    segments: list[int]
    attentions: torch.Tensor  # (L, H, T, T), one sequence
    hidden_states: torch.Tensor  # (L + 1, T, D): the embeddings, then each layer's output
    truncated: int  # tokens cut to fit the model
    unknown: list[str]  # typed words the tokenizer turned into [UNK]
    split_words: list[tuple[str, list[str]]] = field(default_factory=list)  # as Encoding.split_words


@torch.inference_mode()
def run_encoder(model: Encoder, enc: Encoding) -> AttentionRun:
    """Run one encoded sentence (or pair) and keep all attention maps and hidden states."""
    ids = torch.tensor([enc.ids], dtype=torch.long)
    segments = torch.tensor([enc.segments], dtype=torch.long)
    out = model(ids, segments, need_weights=True)
    attentions = torch.stack([w[0] for w in out.attentions])  # (L, H, T, T)
    hidden = torch.stack([h[0] for h in out.hidden_states])  # (L + 1, T, D)
    return AttentionRun(
        list(enc.tokens), list(enc.segments), attentions, hidden, enc.truncated, list(enc.unknown), enc.split_words
    )


@dataclass
class HeadMechanics:
    """One block's multi-head attention, recomputed head by head from its weight matrices."""

    layer: int
    head: int
    tokens: list[str]
    block_input: torch.Tensor  # (T, D): what the attention sublayer reads
    q: torch.Tensor  # (T, d_head): the chosen head's queries
    k: torch.Tensor  # (T, d_head)
    v: torch.Tensor  # (T, d_head)
    weights: torch.Tensor  # (T, T): the chosen head's softmax(q k^T / sqrt(d_head))
    all_weights: torch.Tensor  # (H, T, T)
    head_outputs: torch.Tensor  # (H, T, d_head): each head's weights @ v
    concat: torch.Tensor  # (T, D): the head outputs side by side
    w_o: torch.Tensor  # (D, D) as nn.Linear stores it: (out, in)
    b_o: torch.Tensor  # (D,)
    projected: torch.Tensor  # (T, D) = concat @ W_O^T + b
    block_attention: torch.Tensor  # (T, D): the block's own "attention" stage from its trace
    max_abs_error: float  # max |projected - block_attention|
    weights_error: float  # max |all_weights - the weights the model returned|
    tolerance: float = MECHANICS_TOLERANCE  # the largest max_abs_error that still counts as agreement

    @property
    def agrees(self) -> bool:
        """True when the recomputation gives the block's own attention output (within the tolerance)."""
        return self.max_abs_error <= self.tolerance

    @property
    def n_heads(self) -> int:
        return self.all_weights.shape[0]

    @property
    def d_head(self) -> int:
        return self.q.shape[1]

    @property
    def n_weights(self) -> int:
        """Attention weights this layer computes on the sentence: one per head, query and key (H x T x T)."""
        return self.all_weights.numel()

    def weight_count_traps(self, n_layers: int) -> dict[str, int]:
        """What a student holding each named misconception would count instead of H x T x T: "layers", every layer's
        weights; "width", one weight per feature too (x d); "one head", a single T x T grid; "per token", one weight
        per head and token (H x T)."""
        H, T, _ = self.all_weights.shape
        d = self.w_o.shape[0]
        return {"layers": n_layers * self.n_weights, "width": self.n_weights * d, "one head": T * T, "per token": H * T}

    def slices(self) -> dict[str, torch.Tensor]:
        """The chosen head's Q, K and V, by name."""
        return {"Q": self.q, "K": self.k, "V": self.v}

    def strongest_key(self, query: int) -> tuple[int, float]:
        """(key position, weight) of the largest weight in the chosen head's row for this query."""
        row = self.weights[query]
        return int(row.argmax()), float(row.max())

    def shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """The tensors of the lesson with their real shapes, in the order they are computed."""
        return [
            ("block input x", tuple(self.block_input.shape)),
            ("W_Q, W_K, W_V (each)", (self.w_o.shape[0], self.w_o.shape[1])),
            (f"Q, K, V of head {self.head}", tuple(self.q.shape)),
            (f"weights of head {self.head}", tuple(self.weights.shape)),
            ("weights of all heads", tuple(self.all_weights.shape)),
            ("head outputs", tuple(self.head_outputs.shape)),
            ("concatenation", tuple(self.concat.shape)),
            ("W_O", tuple(self.w_o.shape)),
            ("output", tuple(self.projected.shape)),
        ]


@torch.inference_mode()
def head_mechanics(model: Encoder, enc: Encoding, layer: int, head: int) -> HeadMechanics:
    """Split the block's d_model into H heads of d_head, run each, concatenate, apply W_O.

    Computed from the weights (not from the model's attention code) and compared with the
    block's traced "attention" stage, which is W_O applied to the model's own concatenation.
    """
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in 0..{cfg.n_layers - 1}, got {layer}")
    if not 0 <= head < cfg.n_heads:
        raise ValueError(f"head must be in 0..{cfg.n_heads - 1}, got {head}")
    ids = torch.tensor([enc.ids], dtype=torch.long)
    segments = torch.tensor([enc.segments], dtype=torch.long)
    out = model(ids, segments, need_weights=True, return_trace=True)
    trace = out.traces[layer]
    # Post-norm attends over the block input; pre-norm over its LayerNorm.
    x = (trace["input"] if cfg.norm == "post" else trace["norm_1"])[0]  # (T, D)
    sub = model.encoder.layer[layer].attention
    H, dh = cfg.n_heads, cfg.d_head

    def per_head(linear: torch.nn.Linear) -> torch.Tensor:
        # Rows h*dh .. (h+1)*dh of the (out, in) weight produce head h's columns.
        w = linear.weight.view(H, dh, cfg.d_model)  # (H, d_head, D)
        b = linear.bias.view(H, 1, dh)  # (H, 1, d_head)
        return torch.einsum("td,hkd->htk", x, w) + b  # (H, T, d_head)

    q, k, v = per_head(sub.self.query), per_head(sub.self.key), per_head(sub.self.value)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)  # (H, T, T)
    head_outputs = weights @ v  # (H, T, d_head)
    concat = torch.cat(list(head_outputs), dim=-1)  # (T, H * d_head) = (T, D)
    w_o, b_o = sub.output.dense.weight, sub.output.dense.bias
    projected = concat @ w_o.T + b_o
    block_attention = trace["attention"][0]
    return HeadMechanics(
        layer=layer,
        head=head,
        tokens=list(enc.tokens),
        block_input=x.clone(),
        q=q[head].clone(),
        k=k[head].clone(),
        v=v[head].clone(),
        weights=weights[head].clone(),
        all_weights=weights.clone(),
        head_outputs=head_outputs.clone(),
        concat=concat.clone(),
        w_o=w_o.detach().clone(),
        b_o=b_o.detach().clone(),
        projected=projected.clone(),
        block_attention=block_attention.clone(),
        max_abs_error=float((projected - block_attention).abs().max()),
        weights_error=float((weights - out.attentions[layer][0]).abs().max()),
    )


@dataclass
class SinkSummary:
    """Where the heads park attention they do not need: [CLS] or [SEP]."""

    n_heads: int
    n_cls: int  # heads labelled [CLS]
    n_sep: int  # heads labelled [SEP]
    mean_cls: float  # [CLS] mass averaged over every head
    mean_sep: float  # [SEP] mass averaged over every head
    n_more_cls: int  # heads that put more weight on [CLS] than on [SEP]
    counts: dict[str, int]  # heads per label, most frequent first


def sink_summary(labels: Sequence[HeadLabel]) -> SinkSummary:
    if not labels:
        raise ValueError("no heads to summarise")
    n = len(labels)
    return SinkSummary(
        n_heads=n,
        n_cls=sum(lab.pattern == "[CLS]" for lab in labels),
        n_sep=sum(lab.pattern == "[SEP]" for lab in labels),
        mean_cls=sum(lab.masses["[CLS]"] for lab in labels) / n,
        mean_sep=sum(lab.masses["[SEP]"] for lab in labels) / n,
        n_more_cls=sum(lab.masses["[CLS]"] > lab.masses["[SEP]"] for lab in labels),
        counts=dict(Counter(lab.pattern for lab in labels).most_common()),
    )


# The pattern a head is asked about, and the patterns its rivals in the question are picked for (in this order).
PREVIOUS = "previous token"
RIVAL_PATTERNS = ("next token", "[SEP]", "[CLS]", "self")
# No coin toss: a rival's previous-token mass is at least this far below the answer's (a tenth of a row's weight,
# on average over the rows). A head closer to the winner than that is left out of the options, and the page
# names it. On random weights no head leads by so much, and the question is not asked.
PREVIOUS_MARGIN = 0.1
MIN_OPTIONS = 3


@dataclass(frozen=True)
class HeadChoice:
    """A few heads of the grid, one of which (the answer) puts the most weight on the previous token."""

    candidates: tuple[tuple[int, int], ...]  # (layer, head), in grid order
    answer: int  # index into candidates of the head with the largest previous-token mass of all heads
    previous: tuple[float, ...]  # each candidate's previous-token mass
    too_close: tuple[tuple[int, int, float], ...] = ()  # (layer, head, mass) of heads left out: within the margin
    margin: float = PREVIOUS_MARGIN


def previous_token_choice(
    labels: Sequence[HeadLabel], n: int = 4, margin: float = PREVIOUS_MARGIN
) -> HeadChoice | None:
    """The head with the largest previous-token mass (the first on a tie), and up to n - 1 rivals at least `margin`
    below it: the one that looks back most among them; then, for each of RIVAL_PATTERNS in turn, the head that shows
    it most among the heads it describes best; then the heads that look back least. Heads within the margin of the
    answer are left out (listed in too_close). None when fewer than MIN_OPTIONS heads can be offered."""
    if not labels:
        raise ValueError("no heads to choose from")
    prev = {(lab.layer, lab.head): lab.masses[PREVIOUS] for lab in labels}
    best = max(prev, key=lambda k: (prev[k], -k[0], -k[1]))  # the largest; the first in grid order on a tie
    eligible = [lab for lab in labels if prev[(lab.layer, lab.head)] <= prev[best] - margin]
    too_close = tuple(
        (lab.layer, lab.head, prev[(lab.layer, lab.head)])
        for lab in sorted(labels, key=lambda lab: -prev[(lab.layer, lab.head)])
        if (lab.layer, lab.head) != best and prev[(lab.layer, lab.head)] > prev[best] - margin
    )
    picks = sorted(eligible, key=lambda lab: -lab.masses[PREVIOUS])[:1]  # the closest rival that still counts
    for pattern in RIVAL_PATTERNS:  # the head that shows this pattern most, among those it describes best
        shows = [lab for lab in eligible if lab.masses[pattern] == max(lab.masses.values())]
        if shows:
            picks.append(max(shows, key=lambda lab, p=pattern: lab.masses[p]))
    picks += sorted(eligible, key=lambda lab: lab.masses[PREVIOUS])
    chosen = [best]
    for lab in picks:
        if len(chosen) >= n:
            break
        if (lab.layer, lab.head) not in chosen:
            chosen.append((lab.layer, lab.head))
    if len(chosen) < MIN_OPTIONS:
        return None
    candidates = tuple(sorted(chosen))  # the page shows them in an order drawn per visit
    return HeadChoice(candidates, candidates.index(best), tuple(prev[c] for c in candidates), too_close, margin)


# The word question of the heads lesson: where one word of the sentence puts its weight in a trained head.
# all-MiniLM-L6-v2's layer 1, head 4 is asked first: on ordinary sentences a small word there looks to the content
# word it belongs with (on -> mat, she -> sat, in -> london), while content words park their weight on [CLS].
PREFERRED_HEAD = (1, 4)
# No coin toss: the asked word's largest weight beats its second largest by a fifth of the row (rows sum to 1).
TOP_KEY_MARGIN = 0.2


def positional_heads(labels: Sequence[HeadLabel]) -> frozenset[tuple[int, int]]:
    """(layer, head) of every head labelled previous or next token: its label alone says where a word looks."""
    return frozenset((lab.layer, lab.head) for lab in labels if lab.pattern in NEIGHBOUR_PATTERNS)


@dataclass(frozen=True)
class TopKeyChoice:
    """One word of the sentence, one head, and a few keys, one of which (the answer) gets the word's largest weight."""

    layer: int
    head: int
    query: int  # the position of the word asked about
    positions: tuple[int, ...]  # the options: key positions, in sentence order
    answer: int  # index into positions of the key with the largest weight
    weights: tuple[float, ...]  # the query's row: its weight on every key
    preferred: tuple[int, int]  # the head tried first
    margin: float = TOP_KEY_MARGIN

    @property
    def best(self) -> int:
        return self.positions[self.answer]

    @property
    def passed_over(self) -> bool:
        """True when the preferred head had no word with so clear a favourite, and another head is asked."""
        return (self.layer, self.head) != self.preferred


def top_key_choice(
    attentions: torch.Tensor,
    tokens: Sequence[str],
    preferred: tuple[int, int] = PREFERRED_HEAD,
    skip: frozenset[tuple[int, int]] = frozenset(),
    margin: float = TOP_KEY_MARGIN,
    n: int = 4,
) -> TopKeyChoice | None:
    """attentions (L, H, T, T) of one sentence. Heads are tried in turn, the preferred one first, then the others in
    grid order (not those in `skip`: heads whose label would give the answer away); in each, the words in reading
    order. The first word whose largest weight goes to another word (not itself, not a special token) and beats its
    second largest by `margin` is asked. Its options: that key, the runner-up, the next token, [CLS] and the word
    itself (then the other keys by weight), the first n that differ. None when no head and word qualify."""
    n_layers, n_heads, T, _ = attentions.shape
    is_word = torch.tensor([t not in SPECIALS and t != "[UNK]" for t in tokens])
    order = [preferred] if preferred[0] < n_layers and preferred[1] < n_heads else []
    order += [(layer, head) for layer in range(n_layers) for head in range(n_heads) if (layer, head) != preferred]
    best2 = torch.topk(attentions.float(), 2, dim=-1)  # every row's two largest weights at once
    for layer, head in (h for h in order if h not in skip):
        values, keys = best2.values[layer, head], best2.indices[layer, head]  # (T, 2) each
        top = keys[:, 0]
        asked = is_word & is_word[top] & (top != torch.arange(T)) & (values[:, 0] - values[:, 1] >= margin)
        if not bool(asked.any()):
            continue
        q = int(asked.nonzero()[0])  # the first such word in reading order
        row = attentions[layer, head, q]
        ranked = [int(i) for i in torch.argsort(row, descending=True, stable=True)]
        extra = [ranked[1], q + 1 if q + 1 < T else None, 0 if tokens[0] == "[CLS]" else None, q, *ranked[2:]]
        picks = list(dict.fromkeys([ranked[0]] + [i for i in extra if i is not None]))[:n]
        positions = tuple(sorted(picks))
        weights = tuple(float(w) for w in row)
        return TopKeyChoice(layer, head, q, positions, positions.index(ranked[0]), weights, preferred, margin)
    return None


@dataclass
class WordSplit:
    word: str  # as typed
    pieces: list[str]  # what the tokenizer made of it

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)


def fragmentation(tokenizer, text: str) -> list[WordSplit]:
    """How each typed word splits into word pieces (WordPieceTokenizer.split_words)."""
    return [WordSplit(word, list(pieces)) for word, pieces in tokenizer.split_words(text)]


@dataclass
class SentenceSplits:
    """How the words of one or more named sentences split into word pieces, in reading order."""

    splits: list[tuple[str, WordSplit]]  # (the sentence's name, one word's split)

    @property
    def n_words(self) -> int:
        return len(self.splits)

    @property
    def n_pieces(self) -> int:
        return sum(split.n_pieces for _, split in self.splits)

    @property
    def n_split_words(self) -> int:
        """Words cut into two or more pieces."""
        return sum(split.n_pieces > 1 for _, split in self.splits)


def sentence_splits(tokenizer, sentences: Sequence[tuple[str, str | None]]) -> SentenceSplits:
    """fragmentation of each (name, text); a text of None (no second sentence) is left out."""
    return SentenceSplits(
        [(name, split) for name, text in sentences if text is not None for split in fragmentation(tokenizer, text)]
    )


def all_unknown(tokens: Sequence[str]) -> bool:
    """True when the text became nothing but [UNK]: the model sees no word it knows."""
    content = [t for t in tokens if t not in FRAMING]
    return bool(content) and all(t == "[UNK]" for t in content)


def word_index(tokens: Sequence[str]) -> list[int]:
    """Which word each token belongs to (-1 for special tokens). A WordPiece token starting with
    '##' continues the word before it; any other token starts a new word."""
    out, current = [], -1
    for tok in tokens:
        if tok in SPECIALS:
            out.append(-1)
        elif tok.startswith("##") and current >= 0 and out and out[-1] == current:
            out.append(current)
        else:
            current += 1
            out.append(current)
    return out


def piece_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) positions, both included, of every word made of two or more pieces."""
    spans, first = [], 0
    for word, run in groupby(word_index(tokens)):  # a word's pieces are next to each other
        n = len(list(run))
        if word >= 0 and n > 1:
            spans.append((first, first + n - 1))
        first += n
    return spans


@dataclass
class SameWordMass:
    """How much the pieces of split words attend to the other pieces of the same word."""

    mass: torch.Tensor  # (L, H): mean over pieces of split words of the weight on sibling pieces
    uniform: float  # what a head spreading weight evenly over all tokens would give
    n_pieces: int  # pieces that belong to a word of two or more pieces
    n_split_words: int

    @property
    def best_head(self) -> tuple[int, int]:
        """(layer, head) that puts the most weight on sibling pieces (the first one on a tie)."""
        layer, head = divmod(int(self.mass.argmax()), self.mass.shape[1])
        return layer, head

    def at(self, layer: int, head: int) -> float:
        return float(self.mass[layer, head])


def same_word_mass(attentions: torch.Tensor, tokens: Sequence[str]) -> SameWordMass | None:
    """None when no word was split (nothing to measure)."""
    words = torch.tensor(word_index(tokens))
    T = len(tokens)
    if attentions.shape[-1] != T:
        raise ValueError(f"{T} tokens for attention over {attentions.shape[-1]} positions")
    same = (words[:, None] == words[None, :]) & (words[:, None] >= 0)
    same.fill_diagonal_(False)  # sibling pieces only, not the piece itself
    rows = same.any(dim=1).nonzero().flatten()
    if rows.numel() == 0:
        return None
    a = attentions.float()
    mass = (a[..., rows, :] * same[rows].float()).sum(-1).mean(-1)  # (L, H)
    uniform = float(same[rows].sum(-1).float().mean()) / T
    n_split = len({int(w) for w in words[rows]})
    return SameWordMass(mass, uniform, int(rows.numel()), n_split)


@dataclass
class Similarities:
    texts: list[str]
    mean: torch.Tensor  # (N, N) cosine similarity of mean-pooled vectors
    cls: torch.Tensor  # (N, N) cosine similarity of [CLS] vectors

    def pair_range(self, pooling: str) -> tuple[float, float]:
        """(lowest, highest) cosine over pairs of different sentences."""
        m = self.mean if pooling == "mean" else self.cls
        off = m[~torch.eye(m.shape[0], dtype=torch.bool)]
        if off.numel() == 0:
            raise ValueError("one sentence has no pairs")
        return float(off.min()), float(off.max())


def cosine_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """(N, D) -> (N, N) cosine similarities."""
    unit = F.normalize(vectors.float(), p=2, dim=-1)
    return unit @ unit.T


@torch.inference_mode()
def similarities(pretrained, texts: Sequence[str]) -> Similarities:
    """Sentence vectors by mean pooling (over real tokens, [CLS] and [SEP] included, as the model
    was trained) and by the [CLS] vector, from one forward pass of the batch."""
    from ..pretrained.minilm import SENTENCE_MAX_LENGTH

    texts = list(texts)
    if not texts:
        raise ValueError("no sentences to compare")
    tok = pretrained.tokenizer
    batch = tok.pad([tok.encode(t, max_length=SENTENCE_MAX_LENGTH) for t in texts])
    hidden = pretrained.model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False).hidden
    mean = cosine_matrix(mean_pool(hidden, batch.key_padding_mask))
    cls = cosine_matrix(cls_pool(hidden))
    return Similarities(texts, mean, cls)


@dataclass
class WordVectorCosines:
    word: str
    pair: tuple[str, str]
    pieces: list[str]  # the word's pieces in the first sentence
    per_layer: torch.Tensor  # (L + 1,): cosine at the embeddings, then after each layer

    @property
    def final(self) -> float:
        return float(self.per_layer[-1])


def word_vector(run: AttentionRun, enc: Encoding, word: str) -> torch.Tensor:
    """(L + 1, D): the vectors of the first occurrence of `word`, averaged over its pieces."""
    positions = [i for i, w in enumerate(enc.words) if w.lower() == word.lower()]
    if not positions:
        raise ValueError(f"{word!r} is not a word of {' '.join(enc.tokens)!r}")
    groups = word_index(enc.tokens)
    first = [i for i in positions if groups[i] == groups[positions[0]]]
    return run.hidden_states[:, first].mean(dim=1)


def word_vector_cosines(model: Encoder, tokenizer, sentence_a: str, sentence_b: str, word: str) -> WordVectorCosines:
    """Cosine between the vectors of the same word in two sentences, at every depth of the model."""
    encs = [tokenizer.encode(s) for s in (sentence_a, sentence_b)]
    vecs = [word_vector(run_encoder(model, e), e, word) for e in encs]
    per_layer = F.cosine_similarity(vecs[0], vecs[1], dim=-1)
    pieces = [t for t, w in zip(encs[0].tokens, encs[0].words) if w.lower() == word.lower()]
    return WordVectorCosines(word, (sentence_a, sentence_b), pieces, per_layer)
