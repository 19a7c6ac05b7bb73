"""Positions: sine waves against a learned table, and what happens past the table's length."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.model import Encoder, sinusoidal_table
from ...model.tokenizer import WordPieceTokenizer


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """(P, D) -> (P, P): cos of the angle between every pair of rows."""
    unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


@dataclass
class PositionTables:
    n_positions: int
    sinusoid: torch.Tensor  # (P, D)
    sinusoid_similarity: torch.Tensor  # (P, P)
    learned: torch.Tensor | None  # (P, D): the model's learned table (random before training)
    learned_similarity: torch.Tensor | None  # (P, P)

    def learned_off_diagonal(self) -> torch.Tensor | None:
        """The learned table's similarities between different positions."""
        if self.learned_similarity is None:
            return None
        return self.learned_similarity[~torch.eye(self.n_positions, dtype=torch.bool)]

    @property
    def neighbour_cosine(self) -> float:
        """Sinusoid cos(position 0, position 1)."""
        return float(self.sinusoid_similarity[0, 1])

    @property
    def farthest_cosine(self) -> float:
        """Sinusoid cos(position 0, the last position shown)."""
        return float(self.sinusoid_similarity[0, -1])

    @property
    def learned_off_diagonal_mean(self) -> float | None:
        off = self.learned_off_diagonal()
        return None if off is None else float(off.mean())

    @property
    def learned_off_diagonal_largest(self) -> float | None:
        """The largest |cos| between two different learned positions."""
        off = self.learned_off_diagonal()
        return None if off is None else float(off.abs().max())


def position_tables(model: Encoder, n_positions: int) -> PositionTables:
    cfg = model.config
    n_positions = max(1, min(n_positions, cfg.max_positions))
    sinusoid = sinusoidal_table(n_positions, cfg.d_model)
    learned = None
    with torch.inference_mode():
        if cfg.position == "learned":
            learned = model.embeddings.position_embeddings.weight[:n_positions].detach().clone()
    return PositionTables(
        n_positions,
        sinusoid,
        cosine_similarity_matrix(sinusoid),
        learned,
        cosine_similarity_matrix(learned) if learned is not None else None,
    )


@dataclass
class LengthCap:
    max_positions: int
    n_tokens: int  # the long input's length before any cut
    kept: int  # after the tokenizer's truncation
    truncated: int
    refusal: str  # the Encoder's own error message for the uncut input


def length_cap(model: Encoder, tokenizer: WordPieceTokenizer, sentence: str) -> LengthCap:
    """Repeat the sentence past the position table and show both ways a long input is handled."""
    cap = model.config.max_positions
    words = max(1, len(tokenizer.split(sentence)))
    text = " ".join([sentence] * (cap // words + 2))
    full = tokenizer.encode(text, max_length=None)
    cut = tokenizer.encode(text, max_length=cap, truncate=True)
    ids = torch.tensor([full.ids])
    refusal = ""
    try:
        with torch.inference_mode():
            model(ids)
    except ValueError as err:
        refusal = str(err)
    return LengthCap(cap, len(full), len(cut), cut.truncated, refusal)
