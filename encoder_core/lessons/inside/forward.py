"""One forward pass with the interventions, through the model's own hook points (encoder_core.model.hooks):
a head mask, tokens hidden as keys, word vectors put in place of the ids' (for gradients), a run started at
a layer. Nothing here re-implements a layer."""

from __future__ import annotations

import torch

from ...model.hooks import run_with_cache
from ...model.output_heads import MaskedLanguageModel
from .cloze import Cloze


def word_vectors(model: MaskedLanguageModel, ids: torch.Tensor) -> torch.Tensor:
    """The token embeddings alone (before position, segment and LayerNorm): the "input" the gradients
    are taken with respect to.  (B, T) -> (B, T, D)."""
    return model.bert.embeddings.word_embeddings(ids)


def stream(
    model: MaskedLanguageModel,
    ids: torch.Tensor,
    *,
    head_mask: torch.Tensor | None = None,
    key_drop: torch.Tensor | None = None,
    words: torch.Tensor | None = None,
    need_weights: bool = False,
) -> tuple[list[torch.Tensor], list[torch.Tensor | None]]:
    """The model's own hidden states: the stream after the embeddings and after every layer, then on a
    pre-norm model the final LayerNorm's (L + 1 x (B, T, D) post-norm, L + 2 pre-norm; the last is what the
    MLM head reads), and each layer's attention ((B, H, T, T), or None without need_weights).

    head_mask (B, L, H): 1 keeps a head, 0 knocks it out. key_drop (B, T) bool: True hides that token as a
    key in every layer. words (B, T, D): token embeddings to use in place of the ids' (for gradients)."""
    replace = None if words is None else {"embed.token": lambda _: words}  # the hook point the word vectors pass
    out, _ = run_with_cache(
        model.bert, ids, names=(), replace=replace, head_mask=head_mask, key_mask=key_drop, need_weights=need_weights
    )
    return out.hidden_states, out.attentions or [None] * model.config.n_layers


def answer_log_probs(model: MaskedLanguageModel, hidden: torch.Tensor, position: int) -> torch.Tensor:
    """log-softmax of the MLM head at one position, for every row of the batch.  (B, T, D) -> (B, V)."""
    return torch.log_softmax(model.cls.predictions(hidden[:, position]), dim=-1)


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
