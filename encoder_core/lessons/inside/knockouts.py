"""The ground truth: knockouts of each head and of each token, and what each did to the answer."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...model.output_heads import MaskedLanguageModel
from .cloze import Cloze
from .forward import answer_log_probs, stream


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
        mask = torch.ones(H, L, H)
        mask[:, layer] = 1.0 - torch.eye(H)  # row h knocks out head h of this layer
        x = states[layer].expand(H, -1, -1)  # the clean stream entering this layer
        run = model.bert(ids.expand(H, -1), head_mask=mask, start_at=layer, resid=x, need_weights=False)
        changes[layer] = answer_log_probs(model, run.hidden, cloze.position)[:, answer].double() - f
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
