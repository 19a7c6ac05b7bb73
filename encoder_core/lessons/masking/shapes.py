"""Follow the shapes: the model's pass over a draw, from ids to the logits the loss reads."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...model.config import EncoderConfig
from ...model.output_heads import MaskedLanguageModel
from ...model.tokenizer import WordPieceTokenizer
from ...objectives.loss import LossBreakdown, loss_breakdown
from ...objectives.mlm_masking import IGNORE_INDEX

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
