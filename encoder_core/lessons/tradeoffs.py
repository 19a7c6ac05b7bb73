"""Trade-offs and pitfalls: every cost of an encoder measured on the student's sentence.

Functions take a model (read only: run in eval mode under torch.inference_mode, never changed)
and token ids, and return small dataclasses. FLOPs are counted from a real run's shapes
(encoder_core.model.costs) and checked against closed forms by the tests; wall times are measured
only when asked (time_lengths, append_costs' seconds) and never asserted on.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import torch

from ..model.config import EncoderConfig
from ..model.costs import (
    CausalCache,
    FlopCounter,
    Windows,
    append_flops_closed_form,
    fastest_seconds,
    fitted_exponent,
    layer_flops,
    split_windows,
)
from ..model.hooks import run_with_cache
from ..model.model import Encoder
from ..model.output_heads import MaskedLanguageModel
from ..model.self_attention import attention
from ..model.tokenizer import WordPieceTokenizer
from ..objectives.loss import LossBreakdown, loss_breakdown
from ..objectives.mlm_masking import NOT_CHOSEN, exact_counts, mask_tokens, tokenizer_mask
from .attention import shift_fields

MAX_SENTENCE_TOKENS = 64  # the lesson reads at most this many tokens of the sentence
TIMING_LENGTHS = (16, 32, 64, 128, 256, 512)
WINDOW_OVERLAP = 128  # tokens two neighbouring windows share (Hugging Face's usual stride for QA)
BYTES_PER_WEIGHT = 4  # float32
OBJECTIVES = ("masked LM", "next token", "replaced token detection")
CASES = ("masked", "random", "kept")  # what the chosen position holds: BERT's 80 / 10 / 10


def _ids(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    return ids[None] if ids.dim() == 1 else ids


# ---- 1. no reuse of earlier work ------------------------------------------------------------


@dataclass
class AppendReuse:
    n_earlier: int  # positions that were there before the append
    shift_causal: list[float]  # per earlier position: L2 change of its final vector when one token is appended
    shift_bidirectional: list[float]
    max_causal: float
    max_bidirectional: float
    layer_input_shift_causal: float  # largest change of any earlier layer input: keys and values are made from these
    layer_input_shift_bidirectional: float
    cached_vs_full: float  # the new token's vector from the cached step vs a full causal run


def append_one_token(model: Encoder, ids, new_id: int) -> AppendReuse:
    """Run ids, then ids + [new_id], both ways; measure how far every earlier vector moved."""
    ids = _ids(ids)
    longer = torch.cat([ids, torch.tensor([[int(new_id)]])], dim=1)
    n = ids.shape[1]
    shifts, inputs = {}, {}
    with torch.inference_mode():
        for causal in (True, False):
            a = model(ids, causal=causal, need_weights=False)
            b = model(longer, causal=causal, need_weights=False)
            shifts[causal] = (b.hidden[0, :n] - a.hidden[0]).norm(dim=-1)
            inputs[causal] = max(
                float((hb[0, :n] - ha[0]).abs().max()) for ha, hb in zip(a.hidden_states, b.hidden_states)
            )
            if causal:
                full_last = b.hidden[0, -1]
        cache = CausalCache(model)
        for token in longer[0].tolist():
            last = cache.step(token)
    return AppendReuse(
        n_earlier=n,
        **shift_fields(shifts),
        layer_input_shift_causal=inputs[True],
        layer_input_shift_bidirectional=inputs[False],
        cached_vs_full=float((last - full_last).abs().max()),
    )


@dataclass
class AppendCosts:
    prefix: int  # tokens before the first append
    n: int  # tokens appended, one at a time
    flops_bidirectional: list[int]  # cumulative after 0..n appends: every step reruns the whole sequence
    flops_cached: list[int]  # cumulative: every step runs the one new row against the cached keys and values
    closed_form: tuple[int, int]  # (bidirectional, cached) after n appends, from append_flops_closed_form
    seconds_bidirectional: list[float]  # cumulative wall time (this machine, this run)
    seconds_cached: list[float]

    @property
    def ratio(self) -> float:
        """How many times more the bidirectional appends cost (nan for n = 0)."""
        return self.flops_bidirectional[-1] / self.flops_cached[-1] if self.n else float("nan")


def appended_ids(ids, n: int) -> list[int]:
    """The n tokens to append: the sentence's own tokens between [CLS] and [SEP], over and over."""
    ids = _ids(ids)[0].tolist()
    body = ids[1:-1] or ids
    return [body[i % len(body)] for i in range(n)]


def append_costs(model: Encoder, ids, n: int) -> AppendCosts:
    """Append n tokens one at a time, both ways, counting FLOPs from the shapes and timing each step."""
    ids = _ids(ids)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    prefix = ids.shape[1]
    if prefix + n > model.config.max_positions:
        raise ValueError(f"{prefix} + {n} tokens exceed max_positions={model.config.max_positions}")
    extra = appended_ids(ids, n)
    full = torch.cat([ids, torch.tensor([extra], dtype=torch.long)], dim=1)
    bi, cached = FlopCounter(), FlopCounter()
    flops_bi, flops_c, sec_bi, sec_c = [0], [0], [0.0], [0.0]
    with torch.inference_mode():
        cache = CausalCache(model, cached)
        for token in ids[0].tolist():
            cache.step(token)  # the prefix is read once either way: not part of the comparison
        cached.flops = 0
        for k in range(1, n + 1):
            t0 = time.perf_counter()
            with bi.counting(model):
                model(full[:, : prefix + k], need_weights=False)
            t1 = time.perf_counter()
            cache.step(extra[k - 1])
            t2 = time.perf_counter()
            flops_bi.append(bi.flops)
            flops_c.append(cached.flops)
            sec_bi.append(sec_bi[-1] + t1 - t0)
            sec_c.append(sec_c[-1] + t2 - t1)
    return AppendCosts(prefix, n, flops_bi, flops_c, append_flops_closed_form(model.config, prefix, n), sec_bi, sec_c)


def cache_traps(prefix: int, n: int) -> dict[str, float]:
    """What a student holding each named wrong idea answers to "how many times the cached FLOPs does the encoder
    spend on n appends to a prefix of `prefix` tokens": the number of appends; the prefix's length T (every
    step as long as the first); the final length T + N (every step as long as the last); T squared (the whole
    cost taken to be attention's)."""
    return {"appends": float(n), "length": float(prefix), "final": float(prefix + n), "square": float(prefix**2)}


# ---- 2. length: the cap, truncation, windows ----------------------------------------------------


@dataclass
class LengthCap:
    n_tokens: int  # the whole document's tokens, [CLS] and [SEP] included
    cap: int  # the position table's size
    cut: int  # tokens truncation drops
    before_cut: list[str]  # the last tokens kept
    after_cut: list[str]  # the first tokens dropped
    windows: Windows  # over the content tokens (the cap minus [CLS] and [SEP])


def length_cap(tokenizer: WordPieceTokenizer, text: str, cap: int, *, overlap: int = WINDOW_OVERLAP) -> LengthCap:
    """What a cap of `cap` positions does to the text: how much truncation cuts, and the windows that would fit it."""
    whole = tokenizer.encode(text, max_length=None)
    cut_enc = tokenizer.encode(text, max_length=cap, truncate=True)
    content = whole.tokens[1:-1]
    kept = cap - 2
    return LengthCap(
        n_tokens=len(whole),
        cap=cap,
        cut=cut_enc.truncated,
        before_cut=content[max(0, kept - 6) : kept],
        after_cut=content[kept : kept + 6],
        windows=split_windows(len(content), kept, min(overlap, kept - 1)),
    )


@dataclass(frozen=True)
class FirstCut:
    """The sentence repeated into a document longer than the cap: which of its pieces is the first one cut."""

    pieces: list[str]  # one copy of the sentence as word pieces ([CLS] and [SEP] left out)
    cap: int
    kept: int  # the document's pieces truncation keeps: the cap less [CLS] and [SEP]
    index: int  # into pieces: the first piece the model never sees
    misread: dict[str, int]  # a wrong idea -> the index it leads to (only those that differ from `index`)

    @property
    def options(self) -> list[int]:
        """The pieces to offer: the right one, then each wrong idea's, each once, in the sentence's order."""
        return sorted({self.index, *self.misread.values()})


def first_cut(tokenizer: WordPieceTokenizer, text: str, copies: int, cap: int) -> FirstCut | None:
    """Truncate `copies` copies of text (joined by spaces) to `cap` positions; None when nothing is cut or the
    sentence is a single piece (every wrong idea would then land on the right piece)."""
    pieces = tokenizer.encode(text, max_length=None).tokens[1:-1]
    enc = tokenizer.encode(" ".join([text] * copies), max_length=cap, truncate=True)
    if not enc.truncated or len(pieces) < 2:
        return None
    k, kept = len(pieces), len(enc) - 2
    words = [p for _, p in tokenizer.split_words(text)]
    by_words = sum(len(p) for p in words[: kept % len(words)])  # counting words: that word's first piece
    wrong = {"specials": (kept + 2) % k, "sep": (kept + 1) % k, "last": (kept - 1) % k, "words": by_words}
    misread: dict[str, int] = {}
    for name, i in wrong.items():  # each wrong piece once, under the first idea that leads to it
        if i != kept % k and i not in misread.values():
            misread[name] = i
    return FirstCut(pieces, cap, kept, kept % k, misread)


@dataclass
class AttentionScaling:
    lengths: list[int]
    weights_bytes: list[int]  # every layer's (1, H, T, T) float32 weights, from the shapes
    flops_linear: list[int]  # projections and FFN, all layers: grows like T
    flops_attention: list[int]  # scores and mixing, all layers: grows like T^2
    crossover: int  # the length at which the two are equal: 2 D + d_ff


def attention_scaling(config: EncoderConfig, lengths=TIMING_LENGTHS) -> AttentionScaling:
    layers, h = config.n_layers, config.n_heads
    lin = [layers * layer_flops(config, t, 0) for t in lengths]
    full = [layers * layer_flops(config, t, t) for t in lengths]
    return AttentionScaling(
        list(lengths),
        [layers * h * t * t * BYTES_PER_WEIGHT for t in lengths],
        lin,
        [f - g for f, g in zip(full, lin)],
        2 * config.d_model + config.d_ff,
    )


@dataclass
class LengthTimings:
    lengths: list[int]
    attention_seconds: list[float]  # softmax(q k^T / sqrt(d)) v of every layer, the fastest of a few runs
    forward_seconds: list[float]  # the whole forward pass
    weights_bytes: list[int]  # the (1, H, T, T) tensors a real run returned, summed over the layers
    exponent_attention: float  # fitted slope of log time against log T
    exponent_forward: float


def length_ids(ids, length: int) -> torch.Tensor:
    """[CLS], then the sentence's tokens over and over, to exactly `length` tokens: (1, length)."""
    ids = _ids(ids)[0].tolist()
    body = ids[1:-1] or ids
    return torch.tensor([[ids[0]] + [body[i % len(body)] for i in range(length - 1)]])


def time_lengths(model: Encoder, ids, lengths=TIMING_LENGTHS, repeats: int = 5) -> LengthTimings:
    """Time the attention of every layer, and the whole forward pass, at each length (slow: on demand only)."""
    att_s, fwd_s, sizes = [], [], []
    with torch.inference_mode():
        for t in lengths:
            x_ids = length_ids(ids, t)
            reads = [f"blocks.{i}.attn.in" for i in range(model.config.n_layers)]  # what each attention reads
            run, cache = run_with_cache(model, x_ids, names=reads)
            sizes.append(sum(w.numel() * w.element_size() for w in run.attentions))
            qkv = []
            for block, name in zip(model.encoder.layer, reads):
                sa = block.attention.self
                qkv.append(tuple(sa.split_heads(p(cache[name])) for p in (sa.query, sa.key, sa.value)))
            att_s.append(fastest_seconds(lambda qkv=qkv: [attention(q, k, v) for q, k, v in qkv], repeats))
            fwd_s.append(fastest_seconds(lambda x_ids=x_ids: model(x_ids, need_weights=False), repeats))
    return LengthTimings(
        list(lengths),
        att_s,
        fwd_s,
        sizes,
        fitted_exponent(lengths, att_s),
        fitted_exponent(lengths, fwd_s),
    )


# ---- 3. sample efficiency: which positions carry a loss ------------------------------------------


@dataclass
class ObjectiveLabels:
    tokens: list[str]  # the sentence as read
    chosen: list[bool]  # MLM's 15% (also where the RTD corruption may put a sample)
    mlm_inputs: list[str]  # what the MLM reads (80/10/10 at the chosen positions)
    next_targets: list[str | None]  # next-token prediction: the token each position must predict (None: the last)
    rtd_inputs: list[str]  # what the discriminator reads: generator samples at the chosen positions
    rtd_replaced: list[bool]  # the discriminator's label at every position: was this token replaced?
    corruption: str  # "generator" (the trained MLM's samples) or "random" (uniform replacements)

    def counts(self) -> dict[str, int]:
        """Positions that carry a loss, per objective."""
        return {
            OBJECTIVES[0]: sum(self.chosen),
            OBJECTIVES[1]: sum(t is not None for t in self.next_targets),
            OBJECTIVES[2]: len(self.rtd_replaced),
        }


def rtd_labels(original: list[int], corrupted: list[int]) -> list[bool]:
    """ELECTRA's rule: a position is 'replaced' when its token differs from the original; a sample that
    happens to equal the original counts as original."""
    if len(original) != len(corrupted):
        raise ValueError("the two sequences must have the same length")
    return [a != b for a, b in zip(original, corrupted)]


def ordinary_word_ids(tokenizer: WordPieceTokenizer) -> torch.Tensor:
    """Ids of whole words made of letters (no ## piece, no special token, no symbol): the random pool."""
    return torch.tensor([i for i, t in enumerate(tokenizer.vocab) if re.fullmatch(r"[a-z]{2,}", t)])


def objective_labels(
    tokenizer: WordPieceTokenizer, ids, seed: int, generator_model: MaskedLanguageModel | None = None
) -> ObjectiveLabels:
    """MLM, next-token and replaced-token-detection labels for one sentence.

    RTD's corruption: every MLM-chosen position becomes [MASK] for the generator (the trained MLM,
    when given), which samples a token there from its softmax; without a generator, a uniform
    random ordinary word. The discriminator then labels every position.
    """
    ids = _ids(ids)
    g = torch.Generator().manual_seed(int(seed))
    pool = ordinary_word_ids(tokenizer)
    m = tokenizer_mask(tokenizer, ids, generator=g, replacement_ids=pool)
    chosen = m.actions[0] != NOT_CHOSEN
    corrupted = ids[0].clone()
    if bool(chosen.any()):
        if generator_model is not None:
            gen_in = ids.clone()
            gen_in[0, chosen] = tokenizer.mask_id
            with torch.inference_mode():
                logits, _ = generator_model(gen_in, need_weights=False)
            logits = logits[0, chosen].clone()
            logits[:, tokenizer.special_ids] = float("-inf")  # a generator never writes [CLS] or [PAD]
            samples = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=g)[:, 0]
        else:
            samples = pool[torch.randint(len(pool), (int(chosen.sum()),), generator=g)]
        corrupted[chosen] = samples
    tokens = tokenizer.decode(ids[0])
    return ObjectiveLabels(
        tokens=tokens,
        chosen=chosen.tolist(),
        mlm_inputs=tokenizer.decode(m.inputs[0]),
        next_targets=tokens[1:] + [None],
        rtd_inputs=tokenizer.decode(corrupted),
        rtd_replaced=rtd_labels(ids[0].tolist(), corrupted.tolist()),
        corruption="generator" if generator_model is not None else "random",
    )


# ---- 4. the [MASK] mismatch ----------------------------------------------------------------------


@dataclass
class CaseOutcome:
    case: str  # one of CASES
    input_token: str  # what the position held
    top: list[tuple[str, float]]  # the five likeliest tokens there
    p_original: float  # the probability of the original token
    rank: int  # its rank among the whole vocabulary (1 = first choice)


@dataclass
class MaskMismatch:
    position: int
    original: str
    cases: list[CaseOutcome]  # masked, random, kept: at `position`
    mean_p_original: dict[str, float]  # per case, averaged over every word position of the sentence
    n_positions: int  # how many positions that average covers
    positions: list[int] = field(default_factory=list)  # every word position, in order
    p_original_at: dict[str, list[float]] = field(default_factory=dict)  # per case, at each of `positions`


def eligible_positions(tokenizer: WordPieceTokenizer, ids) -> list[int]:
    """Positions MLM may choose: every token that is not [CLS], [SEP], [PAD], [UNK] or [MASK]."""
    special = set(tokenizer.special_ids)
    return [i for i, t in enumerate(_ids(ids)[0].tolist()) if t not in special]


def mask_mismatch(
    mlm: MaskedLanguageModel, tokenizer: WordPieceTokenizer, ids, position: int, seed: int
) -> MaskMismatch:
    """At each word position: put [MASK], a random word, or leave the word; how likely is the original?"""
    ids = _ids(ids)
    positions = eligible_positions(tokenizer, ids)
    if position not in positions:
        raise ValueError(f"position {position} is not a word position; choose one of {positions}")
    pool = ordinary_word_ids(tokenizer)
    g = torch.Generator().manual_seed(int(seed))
    randoms = pool[torch.randint(len(pool), (len(positions),), generator=g)]
    rows = []
    for i, p in enumerate(positions):
        for case in CASES:
            row = ids[0].clone()
            row[p] = {"masked": tokenizer.mask_id, "random": int(randoms[i]), "kept": int(ids[0, p])}[case]
            rows.append(row)
    batch = torch.stack(rows)
    with torch.inference_mode():
        logits, _ = mlm(batch, need_weights=False)
    probs = torch.softmax(logits, dim=-1)  # (3 n, T, V)
    p_orig = {c: [] for c in CASES}
    cases = []
    for i, p in enumerate(positions):
        orig = int(ids[0, p])
        for j, case in enumerate(CASES):
            dist = probs[3 * i + j, p]
            p_orig[case].append(float(dist[orig]))
            if p == position:
                top = dist.topk(5)
                cases.append(
                    CaseOutcome(
                        case,
                        tokenizer.vocab[int(batch[3 * i + j, p])],
                        [(tokenizer.vocab[int(k)], float(v)) for v, k in zip(top.values, top.indices)],
                        float(dist[orig]),
                        int((dist > dist[orig]).sum()) + 1,
                    )
                )
    return MaskMismatch(
        position,
        tokenizer.vocab[int(ids[0, position])],
        cases,
        {c: sum(v) / len(v) for c, v in p_orig.items()},
        len(positions),
        positions,
        p_orig,
    )


def likeliest_case(mm: MaskMismatch) -> str:
    """The one of CASES under which the original word is likeliest at the chosen position."""
    return max(mm.cases, key=lambda c: c.p_original).case


# The likeliest input is asked about only where it beats both others by MISMATCH_MARGIN in probability (a
# tenth: a gap a student can see on the chart); elsewhere the question moves to the nearest word where it does.
MISMATCH_MARGIN = 0.1


def case_margins(mm: MaskMismatch) -> dict[int, float]:
    """Per word position: how far p(original) under the likeliest input is ahead of the next input's."""
    out = {}
    for i, p in enumerate(mm.positions):
        ranked = sorted((mm.p_original_at[c][i] for c in CASES), reverse=True)
        out[p] = ranked[0] - ranked[1]
    return out


def clear_position(mm: MaskMismatch, asked: int, margin: float = MISMATCH_MARGIN) -> int | None:
    """The word position nearest to `asked` (asked itself first, then the left one of two as near) where the
    likeliest input wins by `margin`; None when no word of the sentence has such a winner."""
    clear = [p for p, m in case_margins(mm).items() if m >= margin]
    return min(clear, key=lambda p: (abs(p - asked), p)) if clear else None


# ---- 5. RoBERTa: static vs dynamic masking ---------------------------------------------------------

# Seed 002's list of what RoBERTa changed (no change to the architecture).
ROBERTA_CHANGES = (
    ("Next-sentence prediction", "trained alongside MLM", "dropped: MLM only, on continuous sentences"),
    ("Masking", "static: patterns fixed once, in preprocessing", "dynamic: a new pattern each epoch"),
    ("Batch size", "256 sequences", "8K sequences"),
    ("Training text", "16GB", "160GB"),
    ("Training steps", "100K", "500K"),
)
# BERT's released preprocessing duplicated the data 10 times, each copy with its own static mask.
SCHEDULES = {"static, 1 pattern": 1, "static, 10 copies (BERT)": 10, "dynamic (RoBERTa)": None}


def expected_distinct(n_patterns: int, draws: int) -> float:
    """Expected number of distinct patterns among `draws` independent uniform draws from n_patterns."""
    if draws <= 0:
        return 0.0
    if n_patterns <= 1:
        return 1.0
    return n_patterns * -math.expm1(draws * math.log1p(-1.0 / n_patterns))


@dataclass
class MaskingViews:
    n_eligible: int
    n_chosen: int  # per view (exact mode)
    n_patterns: int  # how many different sets of chosen positions there are: C(n_eligible, n_chosen)
    epochs: list[int]  # 1..E
    distinct: dict[str, list[int]]  # schedule -> distinct views seen after each epoch, drawn
    expected: dict[str, list[float]]  # the same, closed form
    coverage: dict[str, float]  # fraction of positions that carried a loss at least once in E epochs, drawn
    expected_coverage: dict[str, float]


def masking_views(n_eligible: int, epochs: int, seed: int, rate: float = 0.15) -> MaskingViews:
    """Draw the chosen positions epoch by epoch under each schedule, and count the distinct views."""
    if epochs < 1 or n_eligible < 0:
        raise ValueError(f"need epochs >= 1 and n_eligible >= 0, got {epochs}, {n_eligible}")
    k = exact_counts(n_eligible, rate).chosen
    n_patterns = math.comb(n_eligible, k)
    ids = torch.arange(n_eligible)[None] + 1  # id 0 is the only special: never chosen

    def draw(g: torch.Generator) -> frozenset[int]:
        m = mask_tokens(ids, mask_id=0, special_ids=[0], vocab_size=n_eligible + 1, rate=rate, generator=g)
        return frozenset(m.chosen[0].nonzero().flatten().tolist())

    distinct, expected, coverage, exp_cov = {}, {}, {}, {}
    for s, (name, copies) in enumerate(SCHEDULES.items()):
        g = torch.Generator().manual_seed(int(seed) * 7919 + s)
        fixed = [draw(g) for _ in range(copies)] if copies else None
        seen, covered, curve = set(), set(), []
        for e in range(epochs):
            pattern = fixed[e % copies] if fixed else draw(g)
            seen.add(pattern)
            covered |= pattern
            curve.append(len(seen))
        distinct[name] = curve
        m_of = (lambda e, c=copies: min(e, c)) if copies else (lambda e: e)
        expected[name] = [expected_distinct(n_patterns, m_of(e)) for e in range(1, epochs + 1)]
        coverage[name] = len(covered) / n_eligible if n_eligible else 0.0
        exp_cov[name] = 1 - (1 - k / n_eligible) ** m_of(epochs) if n_eligible else 0.0
    return MaskingViews(n_eligible, k, n_patterns, list(range(1, epochs + 1)), distinct, expected, coverage, exp_cov)


# ---- pitfall 4: the loss averaged over every position ---------------------------------------------


@dataclass
class LossAveraging:
    breakdown: LossBreakdown
    grad_norm_right: float  # |d loss / d logits| for the mean over the chosen positions
    grad_norm_wrong: float  # the same for the mean over every position

    @property
    def scale(self) -> float:
        """wrong / right: the chosen share of the positions, n_counted / n_positions."""
        return self.breakdown.n_counted / self.breakdown.n_positions


def loss_averaging(mlm: MaskedLanguageModel, tokenizer: WordPieceTokenizer, ids, seed: int) -> LossAveraging | None:
    """Mask the sentence (15%, exact), then average its loss both ways. None when nothing was chosen."""
    ids = _ids(ids)
    m = tokenizer_mask(tokenizer, ids, generator=torch.Generator().manual_seed(int(seed)))
    if not bool(m.chosen.any()):
        return None
    with torch.inference_mode():
        logits, _ = mlm(m.inputs, need_weights=False)
    breakdown = loss_breakdown(logits, m.labels)
    norms = []
    for divisor in (breakdown.n_counted, breakdown.n_positions):
        leaf = logits.clone().requires_grad_(True)  # a copy outside inference mode: the model is not touched
        per = torch.nn.functional.cross_entropy(leaf.transpose(1, 2), m.labels.clamp(min=0), reduction="none")
        (per.masked_fill(~breakdown.counted, 0.0).sum() / divisor).backward()
        norms.append(float(leaf.grad.norm()))
    return LossAveraging(breakdown, norms[0], norms[1])


# ---- pitfall 6: truncation that cuts the answer out of a QA passage --------------------------------


@dataclass
class AnswerTruncation:
    lengths: list[int]  # the max_length values tried
    answer_kept: list[int]  # per length: the answer's word pieces still in the input
    answer_pieces: int  # the answer's word pieces in the whole passage
    shortest_keeping: int | None  # the smallest length tried from which on every length keeps the whole answer
    answer_last_index: int  # the answer's last piece, as a position in the untruncated input


def answer_truncation(
    tokenizer: WordPieceTokenizer, question: str, passage: str, answer_words: tuple[int, int], lengths
) -> AnswerTruncation:
    """For each max_length, encode (question, passage) truncated as BERT pipelines do (the longer text is cut first,
    from its end) and count how many of the answer's pieces survive. answer_words: its first and last word in the
    passage, as the tokenizer splits words."""
    words = tokenizer.split_words(passage)
    first, last = answer_words
    if not 0 <= first <= last < len(words):
        raise ValueError(f"answer words {answer_words} are outside the passage's {len(words)} words")
    start = sum(len(p) for _, p in words[:first])  # the answer's first piece, counted within the passage
    end = sum(len(p) for _, p in words[: last + 1])  # one past its last piece
    offset = len(tokenizer.encode(question).ids)  # [CLS] question [SEP] before the passage
    kept = []
    for length in lengths:
        enc = tokenizer.encode(question, passage, max_length=length, truncate=True)
        passage_pieces = sum(enc.segments) - 1  # segment 1 holds the passage and its [SEP]
        kept.append(max(0, min(end, passage_pieces) - start))
    shortest = None  # from here on up every length keeps the whole answer
    for length, k in zip(reversed(list(lengths)), reversed(kept)):
        if k < end - start:
            break
        shortest = length
    return AnswerTruncation(list(lengths), kept, end - start, shortest, offset + end - 1)
