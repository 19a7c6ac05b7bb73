"""The attention lesson: bidirectional vs causal attention, and what the missing mask costs.

Every function takes a model and token ids, runs it under torch.inference_mode, and returns
a small dataclass. Nothing here changes the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..data.examples import SeedExample, seed001_example
from ..model.head_patterns import PATTERNS, pattern_masses
from ..model.hooks import HookPoints
from ..model.model import Encoder, EncoderBlock

# Two runs of different lengths that must agree mathematically (a causal token cannot see what comes
# after it) agree to float32 rounding, not always bit for bit: a vectorised CPU kernel may add up a
# longer row in another order. Seen: up to 5e-6 with AVX-512, exactly 0 elsewhere.
ROUNDING = 1e-5


def _as_batch(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    return ids[None] if ids.dim() == 1 else ids


def layer_attention(block: EncoderBlock, x: torch.Tensor, *, causal: bool) -> torch.Tensor:
    """One block's attention weights (B, H, T, T) for the block input x (B, T, D), read at its hook point
    attn.pattern: the block itself decides what its attention reads (post-norm x, pre-norm LN1(x))."""
    hooks = HookPoints(["attn.pattern"])
    block(x, causal=causal, need_weights=False, hook=hooks)
    return hooks.cache["attn.pattern"]


@dataclass
class MaskComparison:
    layer: int
    head: int
    layer_input: torch.Tensor  # (T, D): the bidirectional run's input to this layer, fed to both masks
    bidirectional: torch.Tensor  # (T, T) query rows, key columns
    causal: torch.Tensor  # (T, T)
    row_sums_bidirectional: list[float]
    row_sums_causal: list[float]
    last_row_max_diff: float  # max |bidirectional[-1] - causal[-1]|, same input: exactly 0
    causal_upper_max: float  # largest causal weight above the diagonal: exactly 0
    last_row_diff_own_runs: float  # the same difference when each run feeds its own layer input

    @property
    def max_row_sum_error(self) -> float:
        """Largest |row sum - 1| over both grids: float rounding only."""
        return max(abs(s - 1.0) for s in self.row_sums_bidirectional + self.row_sums_causal)


def compare_masks(model: Encoder, ids, layer: int, head: int) -> MaskComparison:
    """Both masks on the SAME layer input, so the two grids differ only by the mask.

    At layer > 0 a fully causal model would feed this layer a different input than the
    bidirectional one; last_row_diff_own_runs measures that too, for honesty's sake.
    """
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in [0, {cfg.n_layers - 1}], got {layer}")
    if not 0 <= head < cfg.n_heads:
        raise ValueError(f"head must be in [0, {cfg.n_heads - 1}], got {head}")
    ids = _as_batch(ids)
    block = model.encoder.layer[layer]
    with torch.inference_mode():
        bi_run = model(ids)
        causal_run = model(ids, causal=True)
        x = bi_run.hidden_states[layer]  # (1, T, D)
        w_bi = layer_attention(block, x, causal=False)[0, head]
        w_causal = layer_attention(block, x, causal=True)[0, head]
        own_causal_last = causal_run.attentions[layer][0, head, -1]
    upper = torch.ones_like(w_causal, dtype=torch.bool).triu(1)
    return MaskComparison(
        layer=layer,
        head=head,
        layer_input=x[0],
        bidirectional=w_bi,
        causal=w_causal,
        row_sums_bidirectional=w_bi.sum(-1).tolist(),
        row_sums_causal=w_causal.sum(-1).tolist(),
        last_row_max_diff=float((w_bi[-1] - w_causal[-1]).abs().max()),
        causal_upper_max=float(w_causal[upper].abs().max()) if bool(upper.any()) else 0.0,
        last_row_diff_own_runs=float((w_bi[-1] - own_causal_last).abs().max()),
    )


@dataclass
class DropLastResult:
    positions: int  # how many earlier tokens are compared: the dropped token's index
    shift_causal: list[float]  # per earlier token: L2 norm of its final vector's change
    shift_bidirectional: list[float]
    max_causal: float
    max_bidirectional: float


def drop_token(model: Encoder, ids, position: int) -> DropLastResult:
    """Run the input, then the input without the token at position; compare the final vector of each
    token before it (their positions do not change, so under the causal mask nothing they see does)."""
    ids = _as_batch(ids)
    if not 1 <= position < ids.shape[1]:
        raise ValueError(f"position must be in [1, {ids.shape[1] - 1}] so that a token comes before it, got {position}")
    shorter = torch.cat([ids[:, :position], ids[:, position + 1 :]], dim=1)
    shifts = {}
    with torch.inference_mode():
        for causal in (True, False):
            full = model(ids, causal=causal, need_weights=False).hidden[0, :position]
            short = model(shorter, causal=causal, need_weights=False).hidden[0, :position]
            shifts[causal] = (full - short).norm(dim=-1)
    return DropLastResult(positions=position, **shift_fields(shifts))


def shift_fields(shifts: dict[bool, torch.Tensor]) -> dict:
    """Per-token shifts under the causal mask (True) and without it (False), and their largest, as fields."""
    return {
        "shift_causal": shifts[True].tolist(),
        "shift_bidirectional": shifts[False].tolist(),
        "max_causal": float(shifts[True].max()),
        "max_bidirectional": float(shifts[False].max()),
    }


# ---- what a student is asked to predict (ui.frame.predict asks; these compute the model's answer) ----

# Dropping a token: under which masks do the vectors of the tokens before it move?
DROP_OUTCOMES = ("causal", "bidirectional", "both", "neither")


# A shift counts as a move above float rounding; the question is asked only where every run is clearly one
# or the other: at or below rounding, or at least MOVE_MARGIN (a hundred times rounding), never in between.
MOVE_MARGIN = 1e-3


def drop_outcome(result: DropLastResult, rounding: float = ROUNDING) -> str:
    """Which runs moved the earlier tokens' vectors by more than float rounding: one of DROP_OUTCOMES."""
    moved = (result.max_causal > rounding, result.max_bidirectional > rounding)
    return {(True, False): "causal", (False, True): "bidirectional", (True, True): "both"}.get(moved, "neither")


def drop_is_clear(result: DropLastResult, rounding: float = ROUNDING, margin: float = MOVE_MARGIN) -> bool:
    """Is each run's largest shift clearly rounding (at most `rounding`) or clearly a move (at least `margin`)?"""
    return all(s <= rounding or s >= margin for s in (result.max_causal, result.max_bidirectional))


def moved_count(result: DropLastResult, rounding: float = ROUNDING) -> int:
    """How many of the earlier tokens' vectors moved by more than rounding without the mask."""
    return sum(s > rounding for s in result.shift_bidirectional)


# The two grids of one head: which query rows are the same under both masks?
ROW_OUTCOMES = ("first", "last", "every", "none")
# The question is asked only where it has one clear answer: no row but the last is the same to rounding, and
# the first row changes by at least ROW_MARGIN (a hundred times rounding), so neither "the first row" nor
# "every row" is nearly right. A head that already looks (almost) only backwards is shown, not asked about.
ROW_MARGIN = 1e-3


def unchanged_rows(cmp: MaskComparison, rounding: float = ROUNDING) -> list[int]:
    """The query rows whose weights differ by at most float rounding between the two masks."""
    diff = (cmp.bidirectional - cmp.causal).abs().amax(dim=-1)  # (T,)
    return [i for i, d in enumerate(diff.tolist()) if d <= rounding]


def row_outcome(cmp: MaskComparison, rounding: float = ROUNDING) -> str:
    """unchanged_rows as one of ROW_OUTCOMES ("last" whenever the last row is among a few, as it always is)."""
    rows, n = unchanged_rows(cmp, rounding), cmp.bidirectional.shape[0]
    if len(rows) == n:
        return "every"
    if n - 1 in rows:
        return "last"
    return "first" if rows == [0] else "none"


@dataclass(frozen=True)
class RowFacts:
    """What the causal mask takes from each query row of one head: the facts its feedback states."""

    future: list[float]  # per query row: bidirectional weight on the keys after it (what the causal mask removes)
    change: list[float]  # per query row: largest |bidirectional - causal| weight
    unchanged: list[int]  # the rows the same to float rounding

    @property
    def busiest(self) -> int:
        """The row, the last left out, that gives the most weight to later tokens (the first such on a tie)."""
        rows = self.future[:-1] or self.future
        return max(range(len(rows)), key=rows.__getitem__)

    @property
    def askable(self) -> bool:
        """One clear answer: only the last row unchanged, and the first row changed by at least ROW_MARGIN."""
        return self.unchanged == [len(self.future) - 1] and len(self.future) > 1 and self.change[0] >= ROW_MARGIN


def row_facts(cmp: MaskComparison, rounding: float = ROUNDING) -> RowFacts:
    """Per query row: the weight the causal mask takes away, how far the row changes, and which rows stay."""
    future = cmp.bidirectional.triu(1).sum(-1)
    change = (cmp.bidirectional - cmp.causal).abs().amax(dim=-1)
    return RowFacts(future.tolist(), change.tolist(), unchanged_rows(cmp, rounding))


def drop_last_token(model: Encoder, ids) -> DropLastResult:
    """Run the input, then the input without its last token; compare each earlier token's final vector."""
    ids = _as_batch(ids)
    if ids.shape[1] < 2:
        raise ValueError("need at least two tokens to drop the last one")
    return drop_token(model, ids, ids.shape[1] - 1)


def last_word_position(tokens: list[str]) -> int:
    """The last token that is not [SEP] (the sentence's last word piece); the last token if none is."""
    for i in range(len(tokens) - 1, 0, -1):
        if tokens[i] != "[SEP]":
            return i
    return len(tokens) - 1


@dataclass
class WordContrast:
    word: str
    position: int  # the word's index in both token sequences
    # index 0: the embeddings output; index l: after layer l. Distance between the two sentences' vectors.
    distance_causal: list[float]
    distance_bidirectional: list[float]
    cosine_causal: float  # final layer
    cosine_bidirectional: float

    @property
    def final_distance_causal(self) -> float:
        return self.distance_causal[-1]

    @property
    def final_distance_bidirectional(self) -> float:
        return self.distance_bidirectional[-1]


def shared_prefix_word(tokens_a: list[str], tokens_b: list[str], word: str) -> int:
    """The word's first index, checked to lie inside the part the two token lists share."""
    if word not in tokens_a:
        raise ValueError(f"{word!r} is not among the tokens {tokens_a}")
    position = tokens_a.index(word)
    if tokens_a[: position + 1] != tokens_b[: position + 1]:
        raise ValueError(f"the two sentences must be identical up to and including {word!r}")
    return position


def contrast_word(model: Encoder, ids_a, ids_b, tokens_a: list[str], tokens_b: list[str], word: str) -> WordContrast:
    """The same word, the same left context, different words after it: how far apart are its vectors?"""
    position = shared_prefix_word(tokens_a, tokens_b, word)
    ids_a, ids_b = _as_batch(ids_a), _as_batch(ids_b)
    dist, cos = {}, {}
    with torch.inference_mode():
        for causal in (True, False):
            run_a = model(ids_a, causal=causal, need_weights=False)
            run_b = model(ids_b, causal=causal, need_weights=False)
            va = [h[0, position] for h in run_a.hidden_states]
            vb = [h[0, position] for h in run_b.hidden_states]
            dist[causal] = [float((a - b).norm()) for a, b in zip(va, vb)]
            cos[causal] = float(F.cosine_similarity(va[-1], vb[-1], dim=0))
    return WordContrast(word, position, dist[True], dist[False], cos[True], cos[False])


@dataclass
class SeedReading:
    example: SeedExample
    top_key: int  # the key row 0 attends to most
    top_weight: float  # rounded to 3 places
    self_weight: float  # row 0's weight on itself, rounded to 3 places
    last_row_max_diff: float  # bidirectional vs causal last row: the last row is the same in both


def seed001_reading() -> SeedReading:
    """The published worked example, recomputed, with the facts a reader should take from row 0."""
    ex = seed001_example()
    row0 = ex.weights_bidirectional[0]
    top = int(row0.argmax())
    return SeedReading(
        example=ex,
        top_key=top,
        top_weight=round(float(row0[top]), 3),
        self_weight=round(float(row0[0]), 3),
        last_row_max_diff=float((ex.weights_bidirectional[-1] - ex.weights_causal[-1]).abs().max()),
    )


# ---- a trained head that looks ahead: which token does a word attend to most? ----

# The sentences a trained head is first shown on; the page shows the one that shares fewest tokens with the
# student's sentence. The head itself is picked on the first, so it is the same head for every sentence.
LOOK_EXAMPLES = ("she sat on the bank of the river", "my sister bought a red bicycle at the market")
# Asked about a word only where the option it attends to most leads the runner-up among the options by at least
# LOOK_MARGIN of its attention; otherwise the next word is tried (from the middle of the sentence outwards), and
# with none the question is not asked.
LOOK_MARGIN = 0.2
LOOK_ROLES = ("before", "itself", "after", "further")  # the options, by where they sit from the word
NOT_A_WORD = ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")
NEXT_TOKEN = PATTERNS.index("next token")


def all_attention(model: Encoder, ids) -> torch.Tensor:
    """Every layer's and head's attention weights (L, H, T, T) for one sequence, no mask."""
    with torch.inference_mode():
        out = model(_as_batch(ids), need_weights=True)
    return torch.stack([w[0] for w in out.attentions])


def next_token_mass(attn: torch.Tensor, tokens: list[str]) -> torch.Tensor:
    """(L, H): each head's average weight on the token right after the query (head_patterns' "next token")."""
    return pattern_masses(attn, tokens)[..., NEXT_TOKEN]


def ahead_head(attn: torch.Tensor, tokens: list[str]) -> tuple[int, int]:
    """(layer, head) of the head that puts the most weight on the next token (the first such on a tie)."""
    masses = next_token_mass(attn, tokens)
    layer, head = divmod(int(masses.argmax()), masses.shape[1])
    return layer, head


def fewest_shared(tokens: list[str], examples: list[list[str]]) -> int:
    """The index of the example sharing the fewest distinct tokens with `tokens` (the first such on a tie)."""
    mine = set(tokens) - set(NOT_A_WORD)
    return min(range(len(examples)), key=lambda i: len(mine & set(examples[i])))


@dataclass(frozen=True)
class LookAhead:
    """One word of the sentence, a few tokens it could attend to most in one head, and which it does."""

    layer: int
    head: int
    query: int  # the word's position
    options: tuple[int, ...]  # the key positions offered
    roles: tuple[str, ...]  # where each sits from the word: one of LOOK_ROLES
    weights: tuple[float, ...]  # the word's weight on each option
    row: tuple[float, ...]  # the word's whole row of weights

    @property
    def answer(self) -> int:
        """The option the word attends to most (an index into options)."""
        return max(range(len(self.options)), key=self.weights.__getitem__)

    @property
    def lead(self) -> float:
        """How far the answer's weight is ahead of the runner-up's."""
        ranked = sorted(self.weights, reverse=True)
        return ranked[0] - ranked[1]

    @property
    def winner_role(self) -> str:
        return self.roles[self.answer]


def look_ahead(
    grid: torch.Tensor, tokens: list[str], layer: int, head: int, margin: float = LOOK_MARGIN
) -> LookAhead | None:
    """The question on one head's (T, T) grid: the first word, from the middle of the sentence outwards, with a
    word on each side and a clear favourite among them (a lead of at least `margin`); None if no word has one."""
    words = [i for i, t in enumerate(tokens) if t not in NOT_A_WORD]
    middle = (words[0] + words[-1]) / 2 if words else 0
    for q in sorted(words, key=lambda i: (abs(i - middle), i)):
        if q - 1 not in words or q + 1 not in words:
            continue
        further = q + 2 if q + 2 in words else q - 2 if q - 2 in words else None
        picked = [(r, p) for r, p in zip(LOOK_ROLES, (q - 1, q, q + 1, further)) if p is not None]
        found = LookAhead(
            layer,
            head,
            q,
            tuple(p for _, p in picked),
            tuple(r for r, _ in picked),
            tuple(float(grid[q, p]) for _, p in picked),
            tuple(grid[q].tolist()),
        )
        if found.lead >= margin:
            return found
    return None


@dataclass(frozen=True)
class LookAheadRun:
    """Everything the look-ahead section shows: the head, an example it is first shown on, the student's sentence."""

    layer: int
    head: int
    example_tokens: list[str]
    example_grid: torch.Tensor  # (T_example, T_example): the head on the example
    example_mass: float  # the head's average weight on the next token, on the example
    tokens: list[str]  # the student's sentence
    grid: torch.Tensor  # (T, T): the head on it
    question: LookAhead | None  # None: no word with a clear favourite

    @property
    def mass(self) -> float:
        """The head's average weight on the next token, on the student's sentence."""
        return float(next_token_mass(self.grid[None, None], self.tokens)[0, 0])


def look_ahead_run(model: Encoder, tokenizer, text: str, margin: float = LOOK_MARGIN) -> LookAheadRun:
    """The head that looks most at the next token on LOOK_EXAMPLES[0]; shown on the example that shares fewest
    tokens with `text`, then asked about on `text`."""
    mine = tokenizer.encode(text, max_length=model.config.max_positions, truncate=True)
    examples = [tokenizer.encode(e) for e in LOOK_EXAMPLES]
    layer, head = ahead_head(all_attention(model, examples[0].ids), examples[0].tokens)
    shown = examples[fewest_shared(mine.tokens, [e.tokens for e in examples])]
    shown_attn = all_attention(model, shown.ids)
    grid = all_attention(model, mine.ids)[layer, head]
    return LookAheadRun(
        layer,
        head,
        list(shown.tokens),
        shown_attn[layer, head],
        float(next_token_mass(shown_attn, shown.tokens)[layer, head]),
        list(mine.tokens),
        grid,
        look_ahead(grid, list(mine.tokens), layer, head, margin),
    )
