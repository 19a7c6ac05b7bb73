"""Looking inside: which explanation of a masked-language model can a student trust?

The ground truth is an intervention on the model itself. For one sentence with one [MASK], the model's
top answer there has a log-probability f. Knocking out a head (its output zeroed before W_O) or an input
token (no query may attend to it, in any layer) changes f; that change is what the part really did.
Five explanations claim to say the same without intervening: raw attention, attention rollout,
norm-based attention, gradient x input and integrated gradients. Each is scored by its rank correlation
with the token knockouts. The logit lens reads the answer off the stream after every layer.

Every run here is read only: the shared model is never changed, and gradients are taken with respect to
the input vectors alone (torch.autograd.grad), so no parameter's .grad is touched.
Shapes: B batch, T positions, D = d_model, L layers, H heads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from ..data.cloze import CLOZE_SENTENCES  # noqa: F401  (the lesson's fixed set, read from here)
from ..model.output_heads import MaskedLanguageModel
from ..model.tokenizer import MASK, SPECIAL_TOKENS
from .masking import mask_word

MAX_TOKENS = 64  # word pieces, [CLS] and [SEP] included: knockouts cost one forward per token
DEFAULT_SENTENCE = "the cat sat on the [MASK] because it was tired"  # 12 tokens with [CLS] and [SEP]
BASELINES = ("[PAD]", "[MASK]", "zeros")  # what integrated gradients starts from
DEFAULT_STEPS = 64
METHODS = {
    "raw": "raw attention",
    "rollout": "attention rollout",
    "norm": "norm-based ‖α·f(x)‖",
    "grad_input": "gradient × input",
    "integrated": "integrated gradients",
}


# ---- the input: one sentence, one [MASK] --------------------------------------------------------------


@dataclass
class Cloze:
    """What the lesson runs on: the sentence's ids, and which [MASK] is asked about."""

    text: str  # the text encoded (a word hidden when none was typed)
    ids: list[int]
    tokens: list[str]
    position: int  # the [MASK] asked about, an index into tokens
    notices: list[str]  # what was changed, in the student's terms
    fallback: bool = False  # True: the input could not be used, this is DEFAULT_SENTENCE


def maskable_words(tokenizer, text: str) -> list[str]:
    """The words of text as the tokenizer splits them (a [MASK] typed counts as a word)."""
    return tokenizer.split(text)


def default_word_to_hide(tokenizer, text: str) -> int:
    """Which word to hide when no [MASK] was typed (1-based, as masking.mask_word counts): the last word that
    is one whole vocabulary entry of letters, the likeliest to be a content word; else the last word."""
    words = maskable_words(tokenizer, text)
    for k in range(len(words), 0, -1):
        w = words[k - 1].lower()
        if w.isalpha() and w in tokenizer.token_to_id and w.upper() not in SPECIAL_TOKENS:
            return k
    return len(words)


def prepare_cloze(tokenizer, text: str, hide: int = 0, max_tokens: int = MAX_TOKENS) -> Cloze:
    """The sentence made usable: exactly one [MASK] asked about, at most max_tokens tokens, a word to knock out.

    hide: with no [MASK] typed, the word (1-based) to hide; 0 picks default_word_to_hide. Input that cannot be
    used (no word at all, the [MASK] cut off, nothing but special tokens) gives DEFAULT_SENTENCE with a notice.
    """
    notices: list[str] = []
    words = maskable_words(tokenizer, text)
    if not words:
        return _fallback(tokenizer, "The sentence has no words", max_tokens)
    if MASK not in [w.upper() for w in words]:
        k = hide if 1 <= hide <= len(words) else default_word_to_hide(tokenizer, text)
        notices.append(f"There was no [MASK], so word {k} (“{words[k - 1]}”) is hidden and the model asked for it.")
        text = mask_word(tokenizer, text, k)
    enc = tokenizer.encode(text, max_length=max_tokens, truncate=True)
    masks = [i for i, t in enumerate(enc.tokens) if t == MASK]
    if enc.truncated:
        notices.append(f"The sentence was cut to its first {max_tokens} tokens ({enc.truncated} cut).")
    if not masks:
        return _fallback(tokenizer, f"The [MASK] falls after the first {max_tokens} tokens", max_tokens)
    if len(masks) > 1:
        notices.append(
            f"The sentence has {len(masks)} [MASK]s: the lesson asks about the first (token {masks[0]}); "
            "the others stay hidden from the model."
        )
    words_left = [i for i, t in enumerate(enc.tokens) if t not in SPECIAL_TOKENS]
    if not words_left:
        why = "The sentence holds only special tokens, so there is no word to knock out"
        return _fallback(tokenizer, why, max_tokens)
    return Cloze(text, list(enc.ids), list(enc.tokens), masks[0], notices)


def _fallback(tokenizer, why: str, max_tokens: int) -> Cloze:
    enc = tokenizer.encode(DEFAULT_SENTENCE, max_length=max_tokens, truncate=True)
    notice = f"{why}: the lesson shows the example “{DEFAULT_SENTENCE}” instead."
    return Cloze(DEFAULT_SENTENCE, list(enc.ids), list(enc.tokens), enc.tokens.index(MASK), [notice], True)


# ---- one forward pass with the interventions ----------------------------------------------------------


def word_vectors(model: MaskedLanguageModel, ids: torch.Tensor) -> torch.Tensor:
    """The token embeddings alone (before position, segment and LayerNorm): the "input" the gradients
    are taken with respect to.  (B, T) -> (B, T, D)."""
    return model.bert.embeddings.word_embeddings(ids)


def _block(block, x, head_mask, key_drop, need_weights):
    """One layer, its stages in the block's own order, with each head's output scaled by head_mask before
    W_O (0 knocks it out) and the keys in key_drop hidden from every query."""
    cfg = block.config

    def attend(h):
        heads, w = block.attention.self(h, key_padding_mask=key_drop, need_weights=need_weights)  # (B, T, D)
        if head_mask is not None:
            B, T, D = heads.shape
            heads = (heads.view(B, T, cfg.n_heads, cfg.d_head) * head_mask[:, None, :, None]).reshape(B, T, D)
        return block.attention.output.dense(heads), w

    if cfg.norm == "post":
        a, w = attend(x)
        n1 = block._norm_1(block._residual_1(x, a))
        return block._norm_2(block._residual_2(n1, block._ffn(n1)[-1])), w
    a, w = attend(block._norm_1(x))
    r1 = block._residual_1(x, a)
    return block._residual_2(r1, block._ffn(block._norm_2(r1))[-1]), w


def stream(
    model: MaskedLanguageModel,
    ids: torch.Tensor,
    *,
    head_mask: torch.Tensor | None = None,
    key_drop: torch.Tensor | None = None,
    words: torch.Tensor | None = None,
    need_weights: bool = False,
) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
    """The residual stream after the embeddings and after every layer, ([L + 1] x (B, T, D)), and each
    layer's attention ((B, H, T, T), or None without need_weights).

    head_mask (B, L, H): 1 keeps a head, 0 knocks it out. key_drop (B, T) bool: True hides that token as a
    key in every layer. words (B, T, D): token embeddings to use in place of the ids' (for gradients)."""
    emb = model.bert.embeddings
    if words is None:
        words = word_vectors(model, ids)
    T = ids.shape[1]
    x = emb.LayerNorm(words + emb.position_vectors(T) + emb.token_type_embeddings(torch.zeros_like(ids)))
    states, attentions = [x], []
    for i, block in enumerate(model.bert.encoder.layer):
        x, w = _block(block, x, None if head_mask is None else head_mask[:, i], key_drop, need_weights)
        states.append(x)
        attentions.append(w)
    if model.config.norm == "pre":
        states[-1] = model.bert.encoder.final_norm(x)
    return states, attentions


def answer_log_probs(model: MaskedLanguageModel, hidden: torch.Tensor, position: int) -> torch.Tensor:
    """log-softmax of the MLM head at one position, for every row of the batch.  (B, T, D) -> (B, V)."""
    return torch.log_softmax(model.cls.predictions(hidden[:, position]), dim=-1)


# ---- the ground truth: knockouts ------------------------------------------------------------------------


@dataclass
class Knockouts:
    answer_id: int  # the model's top answer at the [MASK], unperturbed
    answer: str
    log_prob: float  # f: its log-probability, unperturbed
    heads: torch.Tensor  # (L, H): f with that head knocked out, minus f (negative: the head helped)
    tokens: torch.Tensor  # (T,): f with that token hidden as a key, minus f; 0 at the [MASK] itself (not run)

    @property
    def probability(self) -> float:
        return math.exp(self.log_prob)

    def most_important_head(self) -> tuple[int, int]:
        """The head whose knockout lowers the answer's log-probability most."""
        i = int(torch.argmin(self.heads))
        return divmod(i, self.heads.shape[1])


@torch.inference_mode()
def head_knockouts(model: MaskedLanguageModel, cloze: Cloze) -> tuple[int, float, torch.Tensor]:
    """(answer id, f, (L, H) changes): every head knocked out alone. A knockout in layer l leaves layers
    below l as they were, so each layer's H knockouts start from the clean stream there, in one batch."""
    L, H = model.config.n_layers, model.config.n_heads
    ids = torch.tensor([cloze.ids])
    states, _ = stream(model, ids)
    logp = answer_log_probs(model, states[-1], cloze.position)[0]
    answer = int(logp.argmax())
    f = float(logp[answer])
    changes = torch.empty(L, H, dtype=torch.float64)
    for layer in range(L):
        x = states[layer].expand(H, -1, -1)
        mask = 1.0 - torch.eye(H)  # row h knocks out head h
        for i, block in enumerate(model.bert.encoder.layer[layer:]):
            x, _ = _block(block, x, mask if i == 0 else None, None, False)
        if model.config.norm == "pre":
            x = model.bert.encoder.final_norm(x)
        changes[layer] = answer_log_probs(model, x, cloze.position)[:, answer].double() - f
    return answer, f, changes


@torch.inference_mode()
def token_knockouts(model: MaskedLanguageModel, cloze: Cloze, answer: int, log_prob: float) -> torch.Tensor:
    """(T,): f with each token hidden as a key from every query in every layer, minus f. The [MASK] asked
    about is the query itself and is not hidden (0 there)."""
    T = len(cloze.ids)
    drop = torch.eye(T, dtype=torch.bool)
    drop[cloze.position, cloze.position] = False  # that row runs unperturbed
    states, _ = stream(model, torch.tensor([cloze.ids]).expand(T, -1), key_drop=drop)
    f = answer_log_probs(model, states[-1], cloze.position)[:, answer].double()
    change = f - log_prob
    change[cloze.position] = 0.0
    return change


def knockouts(model: MaskedLanguageModel, tokenizer, cloze: Cloze) -> Knockouts:
    answer, f, heads = head_knockouts(model, cloze)
    tokens = token_knockouts(model, cloze, answer, f)
    return Knockouts(answer, tokenizer.vocab[answer], f, heads, tokens)


# ---- the explanations ------------------------------------------------------------------------------------


def attention_rollout(attentions: torch.Tensor) -> torch.Tensor:
    """Abnar & Zuidema (2020): per layer the heads' mean A, with the residual as 0.5·A + 0.5·I, each row
    renormalised, multiplied from the first layer up. attentions (L, H, T, T) -> (T, T)."""
    T = attentions.shape[-1]
    rollout = torch.eye(T, dtype=torch.float64)
    for layer in attentions.double():
        a = 0.5 * layer.mean(0) + 0.5 * torch.eye(T, dtype=torch.float64)
        rollout = (a / a.sum(-1, keepdim=True)) @ rollout
    return rollout


def norm_based(model: MaskedLanguageModel, x: torch.Tensor, weights: torch.Tensor, query: int) -> torch.Tensor:
    """Kobayashi et al. (2020): ‖Σ_h α_h(q, j) f_h(x_j)‖ for every key j of the last layer, where
    f_h(x) = (x W_V^h + b_V^h) W_O^h is what head h would add from x_j at weight 1.
    x (T, D): the layer's input; weights (H, T, T): its attention.  -> (T,)."""
    block = model.bert.encoder.layer[-1]
    cfg = block.config
    H, dh = cfg.n_heads, cfg.d_head
    v = block.attention.self.value(x).view(-1, H, dh).transpose(0, 1)  # (H, T, dh)
    w_o = block.attention.output.dense.weight.view(cfg.d_model, H, dh).permute(1, 2, 0)  # (H, dh, D)
    f = v @ w_o  # (H, T, D)
    weighted = (weights[:, query, :, None] * f).sum(0)  # (T, D)
    return weighted.norm(dim=-1).double()


@dataclass
class Attributions:
    scores: torch.Tensor  # (T,): each position's attribution to f
    total: float  # their sum over the positions that moved
    gap: float  # f(x) − f(baseline): what completeness says the sum should be
    baseline: str
    steps: int

    @property
    def completeness_error(self) -> float:
        """|sum − gap| relative to |gap| (a sum of 0 for a gap of 0 is exact)."""
        return abs(self.total - self.gap) / abs(self.gap) if self.gap else abs(self.total)


def baseline_vectors(model: MaskedLanguageModel, tokenizer, baseline: str, like: torch.Tensor) -> torch.Tensor:
    """The word vector integrated gradients starts from at every moving position, shaped like `like` (T, D)."""
    table = model.bert.embeddings.word_embeddings.weight
    if baseline == "zeros":
        return torch.zeros_like(like)
    if baseline == "[PAD]":
        return table[tokenizer.pad_id].detach().expand_as(like)
    if baseline == "[MASK]":
        return table[tokenizer.mask_id].detach().expand_as(like)
    raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")


def _answer_and_grad(model, ids, words, position, answer) -> tuple[torch.Tensor, torch.Tensor]:
    """f for each row, and df/dwords, with gradients for the input only."""
    with torch.enable_grad():
        words = words.detach().requires_grad_(True)
        states, _ = stream(model, ids, words=words)
        f = answer_log_probs(model, states[-1], position)[:, answer]
        (grad,) = torch.autograd.grad(f.sum(), words)
    return f.detach(), grad


def gradient_x_input(model: MaskedLanguageModel, cloze: Cloze, answer: int) -> torch.Tensor:
    """Σ_d x_d ∂f/∂x_d for every position's word vector x.  -> (T,)."""
    ids = torch.tensor([cloze.ids])
    x = word_vectors(model, ids).detach()
    _, grad = _answer_and_grad(model, ids, x, cloze.position, answer)
    return (x * grad).sum(-1)[0].double()


def integrated_gradients(
    model: MaskedLanguageModel, tokenizer, cloze: Cloze, answer: int, baseline: str = "[PAD]", steps: int = 64
) -> Attributions:
    """Sundararajan et al. (2017): (x − x')·mean over the path of ∂f/∂x, the path x' + α(x − x') sampled at the
    midpoints α = (k + ½)/steps, all steps in one batch. Every position but the [MASK] moves from the baseline
    (the [MASK] is the question, kept as asked). Completeness: the attributions sum to f(x) − f(x')."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    ids = torch.tensor([cloze.ids])
    x = word_vectors(model, ids).detach()[0]  # (T, D)
    start = baseline_vectors(model, tokenizer, baseline, x).clone()
    start[cloze.position] = x[cloze.position]
    alphas = (torch.arange(steps, dtype=x.dtype) + 0.5) / steps
    path = start + alphas[:, None, None] * (x - start)  # (steps, T, D)
    grads = torch.zeros_like(x)
    for chunk in torch.split(torch.arange(steps), 32):  # bounded memory on long sentences
        _, g = _answer_and_grad(model, ids.expand(len(chunk), -1), path[chunk], cloze.position, answer)
        grads += g.sum(0)
    scores = ((x - start) * grads / steps).sum(-1).double()
    ends, _ = _answer_and_grad(model, ids.expand(2, -1), torch.stack([x, start]), cloze.position, answer)
    return Attributions(scores, float(scores.sum()), float(ends[0] - ends[1]), baseline, steps)


@dataclass
class Explanations:
    raw: torch.Tensor  # (T,): last layer's attention from the [MASK], mean of heads
    rollout: torch.Tensor  # (T,): the rollout's [MASK] row
    norm: torch.Tensor  # (T,): norm-based, last layer, from the [MASK]
    grad_input: torch.Tensor  # (T,)
    integrated: Attributions

    def by_method(self) -> dict[str, torch.Tensor]:
        """Every explanation's scores under its METHODS key."""
        return {
            "raw": self.raw,
            "rollout": self.rollout,
            "norm": self.norm,
            "grad_input": self.grad_input,
            "integrated": self.integrated.scores,
        }


def explanations(
    model: MaskedLanguageModel, tokenizer, cloze: Cloze, answer: int, baseline: str = "[PAD]", steps: int = 64
) -> Explanations:
    with torch.inference_mode():
        states, attentions = stream(model, torch.tensor([cloze.ids]), need_weights=True)
        stacked = torch.stack([a[0] for a in attentions])  # (L, H, T, T)
        q = cloze.position
        raw = stacked[-1, :, q].mean(0).double()
        rollout = attention_rollout(stacked)[q]
        norm = norm_based(model, states[-2][0], stacked[-1], q)
    grad_input = gradient_x_input(model, cloze, answer)
    integrated = integrated_gradients(model, tokenizer, cloze, answer, baseline, steps)
    return Explanations(raw, rollout, norm, grad_input, integrated)


# ---- scoring the explanations against the knockouts ----------------------------------------------------


def ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (as Spearman's rho needs)."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation: the Pearson correlation of the ranks. NaN when either side is constant."""
    ra, rb = ranks(a), ranks(b)
    if len(ra) != len(rb):
        raise ValueError("both sides need the same number of values")
    da, db = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / denominator) if denominator else float("nan")


def scored_positions(cloze: Cloze) -> list[int]:
    """The tokens an explanation is scored on: every one but the [MASK] asked about."""
    return [i for i in range(len(cloze.ids)) if i != cloze.position]


def agreement(expl: Explanations, knock: Knockouts, cloze: Cloze) -> dict[str, float]:
    """Spearman's rho of each explanation with the token knockouts' importance (how much f drops when the
    token is hidden: −change), over scored_positions. 1: the same order; 0: unrelated; −1: reversed."""
    keep = scored_positions(cloze)
    importance = (-knock.tokens[keep]).tolist()
    return {name: spearman(scores[keep].tolist(), importance) for name, scores in expl.by_method().items()}


def best_method(scores: dict[str, float]) -> str:
    """The method with the highest rank correlation (an undefined one counts as lowest)."""
    return max(scores, key=lambda m: -math.inf if math.isnan(scores[m]) else scores[m])


@dataclass
class Sweep:
    sentences: list[str]
    rho: np.ndarray  # (N, methods): each sentence's rank correlation per method, in METHODS order
    baseline: str
    steps: int

    @property
    def mean(self) -> dict[str, float]:
        """The mean over the sentences where the correlation is defined."""
        return {m: float(np.nanmean(self.rho[:, i])) for i, m in enumerate(METHODS)}

    @property
    def wins(self) -> dict[str, int]:
        """On how many sentences each method agrees best."""
        best = [best_method(dict(zip(METHODS, row, strict=True))) for row in self.rho]
        return {m: best.count(m) for m in METHODS}


def sweep(
    model: MaskedLanguageModel,
    tokenizer,
    sentences: Sequence[str],
    baseline: str = "[PAD]",
    steps: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Every explanation scored against the token knockouts on each sentence. progress(done, total) after each."""
    rows = []
    for n, text in enumerate(sentences):
        cloze = prepare_cloze(tokenizer, text)
        answer, f = clean_answer(model, cloze)
        knock = Knockouts(answer, "", f, torch.zeros(0), token_knockouts(model, cloze, answer, f))
        scores = agreement(explanations(model, tokenizer, cloze, answer, baseline, steps), knock, cloze)
        rows.append([scores[m] for m in METHODS])
        if progress is not None:
            progress(n + 1, len(sentences))
    return Sweep(list(sentences), np.array(rows, dtype=np.float64), baseline, steps)


@torch.inference_mode()
def clean_answer(model, cloze: Cloze) -> tuple[int, float]:
    """The model's top answer at the [MASK] and its log-probability f, unperturbed."""
    states, _ = stream(model, torch.tensor([cloze.ids]))
    logp = answer_log_probs(model, states[-1], cloze.position)[0]
    answer = int(logp.argmax())
    return answer, float(logp[answer])


@torch.inference_mode()
def attention_maps(model: MaskedLanguageModel, cloze: Cloze) -> torch.Tensor:
    """Every layer's attention on the sentence, unperturbed.  (L, H, T, T)."""
    _, attentions = stream(model, torch.tensor([cloze.ids]), need_weights=True)
    return torch.stack([a[0] for a in attentions])


# ---- the logit lens ---------------------------------------------------------------------------------------


@dataclass
class LogitLens:
    answer: str
    rank: list[int]  # per stage (embeddings, after layer 0, ...): the final answer's rank, 1 = top
    probability: list[float]  # its probability there
    top: list[str]  # the top guess at each stage


@torch.inference_mode()
def logit_lens(model: MaskedLanguageModel, tokenizer, cloze: Cloze) -> LogitLens:
    """The MLM head applied to the [MASK]'s stream after the embeddings and after every layer (on a pre-norm
    model, each through the final LayerNorm first, as the head always reads it)."""
    states, _ = stream(model, torch.tensor([cloze.ids]))
    if model.config.norm == "pre":
        states = [model.bert.encoder.final_norm(s) for s in states[:-1]] + [states[-1]]
    logp = torch.cat([answer_log_probs(model, s, cloze.position) for s in states])  # (L + 1, V)
    answer = int(logp[-1].argmax())
    rank = (logp > logp[:, answer : answer + 1]).sum(-1) + 1
    top = [tokenizer.vocab[int(i)] for i in logp.argmax(-1)]
    return LogitLens(tokenizer.vocab[answer], rank.tolist(), logp[:, answer].exp().tolist(), top)


# ---- the predictions' answers ----------------------------------------------------------------------------

# No coin tosses: a knockout question offers only parts whose knockout changes the answer's log-probability at
# least KNOCKOUT_MARGIN less than the right one's (with it knocked out, the answer is at least e^0.3 ≈ 1.35
# times likelier than with the right one knocked out). A part closer than that is left out, and the reveal
# names it.
KNOCKOUT_MARGIN = 0.3
N_OPTIONS = 4  # parts offered in a knockout question: the right one and up to three tempting ones
# Explanations whose Spearman ρ comes within EXPLANATION_MARGIN of the best one's all count as right: on a
# sentence of a dozen tokens a difference of 0.1 in ρ is about one pair of tokens swapped.
EXPLANATION_MARGIN = 0.1


def _offer(best, pools, apart) -> dict:
    """{part: why it is offered}: best ("answer"), then the first part of each (reason, pool) that is apart
    from the best by the margin and not offered yet, until N_OPTIONS."""
    picked = {best: "answer"}
    for reason, pool in pools:
        if len(picked) == N_OPTIONS:
            break
        c = next((c for c in pool if c not in picked and apart(c)), None)
        if c is not None:
            picked[c] = reason
    return picked


@dataclass
class HeadChoice:
    candidates: list[tuple[int, int]]  # (layer, head), in layer-then-head order
    reasons: list[str]  # why each is offered: "answer", "sharpest", "last layer", "first layer", "runner-up"
    answer: int  # index of the head whose knockout lowers f most
    effects: list[float]  # each candidate's knockout change
    peaks: list[tuple[float, int]] = field(default_factory=list)  # each one's largest weight from the [MASK], and where
    close: list[tuple[int, int]] = field(default_factory=list)  # heads not offered, within the margin of the answer

    @property
    def asked(self) -> bool:
        """At least one head stands apart from the most important one by the margin."""
        return len(self.candidates) >= 2


def head_choice(knock: Knockouts, attentions: torch.Tensor, position: int) -> HeadChoice:
    """The head that matters most, and heads a student might pick for a wrong reason (the sharpest attention
    from the [MASK]; a head of the last layer; a head of the first layer; the next most harmful knockout), each
    at least KNOCKOUT_MARGIN apart from it. attentions (L, H, T, T)."""
    L, H = knock.heads.shape
    best = knock.most_important_head()
    floor = float(knock.heads[best]) + KNOCKOUT_MARGIN
    sharp = attentions[:, :, position].amax(-1)  # (L, H): the largest weight each head puts anywhere
    ordered_sharp = [divmod(int(i), H) for i in torch.argsort(sharp.flatten(), descending=True)]
    picked = _offer(
        best,
        (
            ("sharpest", ordered_sharp),
            ("last layer", [(L - 1, h) for h in torch.argsort(sharp[-1], descending=True).tolist()]),
            ("first layer", [(0, h) for h in torch.argsort(sharp[0], descending=True).tolist()]),
            ("runner-up", [divmod(int(i), H) for i in torch.argsort(knock.heads.flatten())]),
        ),
        lambda c: float(knock.heads[c]) >= floor,
    )
    candidates = sorted(picked)
    every = [divmod(i, H) for i in range(L * H)]
    return HeadChoice(
        candidates,
        [picked[c] for c in candidates],
        candidates.index(best),
        [float(knock.heads[c]) for c in candidates],
        [(float(sharp[c]), int(attentions[c[0], c[1], position].argmax())) for c in candidates],
        [c for c in every if c != best and float(knock.heads[c]) < floor],
    )


@dataclass
class TokenChoice:
    candidates: list[int]  # token positions offered, in sentence order
    reasons: list[str]  # why each is offered: "answer", "attended", "neighbour", "special", "runner-up"
    answer: int  # index of the token whose hiding lowers f most
    changes: list[float]  # each one's knockout change in f (negative: hiding it lowers the answer)
    attention: list[float]  # the last layer's attention from the [MASK] to each, mean of the heads
    close: list[int] = field(default_factory=list)  # tokens not offered, within the margin of the answer

    @property
    def asked(self) -> bool:
        """At least one token stands apart from the most important one by the margin."""
        return len(self.candidates) >= 2


def token_choice(knock: Knockouts, attentions: torch.Tensor, cloze: Cloze) -> TokenChoice:
    """The token whose hiding lowers the answer most, and tokens a student might pick for a wrong reason (the
    one the last layer attends to most from the [MASK]; the nearest to the [MASK]; [CLS] or [SEP]; the next
    largest drop), each at least KNOCKOUT_MARGIN apart from it. attentions (L, H, T, T)."""
    keep = scored_positions(cloze)
    change = knock.tokens
    best = min(keep, key=lambda i: float(change[i]))
    floor = float(change[best]) + KNOCKOUT_MARGIN
    raw = attentions[-1, :, cloze.position].mean(0).double()  # (T,): as Explanations.raw
    attended = sorted(keep, key=lambda i: -float(raw[i]))
    picked = _offer(
        best,
        (
            ("attended", attended),
            ("neighbour", sorted(keep, key=lambda i: (abs(i - cloze.position), i))),
            ("special", [i for i in attended if cloze.tokens[i] in ("[CLS]", "[SEP]")]),
            ("runner-up", sorted(keep, key=lambda i: float(change[i]))),
        ),
        lambda i: float(change[i]) >= floor,
    )
    candidates = sorted(picked)
    return TokenChoice(
        candidates,
        [picked[i] for i in candidates],
        candidates.index(best),
        [float(change[i]) for i in candidates],
        [float(raw[i]) for i in candidates],
        [i for i in keep if i != best and float(change[i]) < floor],
    )


def best_methods(scores: dict[str, float]) -> list[str]:
    """The methods within EXPLANATION_MARGIN of the best rank correlation (none when every one is undefined)."""
    top = scores[best_method(scores)]
    if math.isnan(top):
        return []
    return [m for m in METHODS if not math.isnan(scores[m]) and scores[m] >= top - EXPLANATION_MARGIN]


def explanation_asked(scores: dict[str, float]) -> bool:
    """Worth asking: some method falls outside the margin of the best (and the best is defined)."""
    return 0 < len(best_methods(scores)) < len(METHODS)
