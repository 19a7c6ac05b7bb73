"""The logit lens: the MLM head read off the stream after the embeddings and after every layer."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.output_heads import MaskedLanguageModel
from .cloze import Cloze
from .forward import answer_log_probs, stream


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
    if model.config.norm == "pre":  # states end on the final LayerNorm's own output, the last layer's through it
        states = [model.bert.encoder.final_norm(s) for s in states[:-1]]
    logp = torch.cat([answer_log_probs(model, s, cloze.position) for s in states])  # (L + 1, V)
    answer = int(logp[-1].argmax())
    rank = (logp > logp[:, answer : answer + 1]).sum(-1) + 1
    top = [tokenizer.vocab[int(i)] for i in logp.argmax(-1)]
    return LogitLens(tokenizer.vocab[answer], rank.tolist(), logp[:, answer].exp().tolist(), top)
