"""What sits on top of the encoder: BERT's MLM head, task heads, and pooling."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .config import EncoderConfig
from .model import Encoder, EncoderOutput


class PredictionTransform(nn.Module):
    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_model)
        self.LayerNorm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(F.gelu(self.dense(h)))


class MLMHead(nn.Module):
    """dense + GELU + LayerNorm, then a decoder whose weight IS the token embedding table (tied)."""

    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.transform = PredictionTransform(config)
        self.decoder = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.decoder.weight = word_embeddings.weight  # tied: one table read in, one read out
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.transform(hidden)) + self.bias  # (B, T, V)


class MLMPredictions(nn.Module):
    def __init__(self, config: EncoderConfig, word_embeddings: nn.Embedding):
        super().__init__()
        self.predictions = MLMHead(config, word_embeddings)


class MaskedLanguageModel(nn.Module):
    """Encoder + MLM head. Names follow BertForMaskedLM: bert.*, cls.predictions.*."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.bert = Encoder(config)
        self.cls = MLMPredictions(config, self.bert.embeddings.word_embeddings)

    def forward(self, ids, segments=None, key_padding_mask=None, **kwargs) -> tuple[torch.Tensor, EncoderOutput]:
        out = self.bert(ids, segments, key_padding_mask, **kwargs)
        return self.cls.predictions(out.hidden), out  # logits (B, T, V)


class SequenceClassifier(nn.Module):
    """A label for the whole input, read from the [CLS] vector."""

    def __init__(self, d_model: int, n_labels: int):
        super().__init__()
        self.classifier = nn.Linear(d_model, n_labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.classifier(cls_pool(hidden))  # (B, n_labels)


class TokenClassifier(nn.Module):
    """A label for every token (tagging: names, parts of speech)."""

    def __init__(self, d_model: int, n_labels: int):
        super().__init__()
        self.classifier = nn.Linear(d_model, n_labels)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.classifier(hidden)  # (B, T, n_labels)


class SpanHead(nn.Module):
    """Extractive QA: a start score and an end score for every token."""

    def __init__(self, d_model: int):
        super().__init__()
        self.qa_outputs = nn.Linear(d_model, 2)

    def forward(self, hidden: torch.Tensor, key_padding_mask: torch.Tensor | None = None):
        start, end = self.qa_outputs(hidden).unbind(-1)  # (B, T) each
        if key_padding_mask is not None:  # a pad can never be an answer boundary
            start = start.masked_fill(key_padding_mask, float("-inf"))
            end = end.masked_fill(key_padding_mask, float("-inf"))
        return start, end


def cls_pool(hidden: torch.Tensor) -> torch.Tensor:
    """The [CLS] vector: position 0.  (B, T, D) -> (B, D)."""
    return hidden[:, 0]


def mean_pool(hidden: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
    """Mean over real (non-pad) tokens only.  (B, T, D) -> (B, D)."""
    if key_padding_mask is None:
        return hidden.mean(dim=1)
    keep = (~key_padding_mask).to(hidden.dtype)[..., None]  # (B, T, 1)
    return (hidden * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
