"""A trained FFN, token by token: how long a vector the FFN adds to each token."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ...model.model import Encoder
from ...model.tokenizer import SPECIAL_TOKENS, WordPieceTokenizer
from .walk import _as_batch


@torch.inference_mode()
def ffn_output_norms(model: Encoder, ids, segments) -> torch.Tensor:
    """(L, T): the length of what each layer's FFN adds to each token (its W₂ output, f), from one run."""
    out = model(_as_batch(ids), _as_batch(segments), need_weights=False, return_trace=True)
    return torch.stack([trace["ffn_output"][0].norm(dim=-1) for trace in out.traces])


@dataclass(frozen=True)
class FfnNorms:
    """One sentence through a trained encoder: how long a vector each layer's FFN adds to each token."""

    model_name: str
    tokens: tuple[str, ...]
    norms: torch.Tensor  # (L, T)


def ffn_norms_of(model: Encoder, tokenizer: WordPieceTokenizer, text: str, model_name: str) -> FfnNorms:
    """ffn_output_norms of `text` (cut to the model's positions), with the tokens it became."""
    enc = tokenizer.encode(text, max_length=model.config.max_positions, truncate=True)
    return FfnNorms(model_name, tuple(enc.tokens), ffn_output_norms(model, enc.ids, enc.segments))


# The trained-FFN question is asked on a layer only where the word with the longest FFN output beats every other
# word of the sentence by this factor: a fifth longer shows at a glance on a bar chart. Closer than that the answer
# would hang on small differences, so the next layer is tried (and the page says so).
FFN_TOKEN_MARGIN = 1.2
FFN_TOKEN_OPTIONS = 4
FFN_TOKEN_MIN_WORDS = 3  # fewer words make a question of one or two options


def word_positions(tokens: Sequence[str]) -> list[int]:
    """The positions of the sentence's own tokens (word pieces included): not [CLS], [SEP], [PAD], [MASK], [UNK]."""
    return [i for i, t in enumerate(tokens) if t not in SPECIAL_TOKENS]


def layer_order(n_layers: int, preferred: int) -> list[int]:
    """Every layer, the preferred one first, then the others by their distance from it (the lower on a tie)."""
    return sorted(range(n_layers), key=lambda layer: (abs(layer - preferred), layer))


@dataclass(frozen=True)
class FfnTokenChoice:
    """A few words of a sentence, one of which (the answer) gets the longest FFN output in one layer."""

    layer: int  # the layer asked about
    preferred: int  # the layer tried first
    passed_over: tuple[int, ...]  # layers tried before it, none with a clear winner
    positions: tuple[int, ...]  # the options: token positions, in sentence order
    answer: int  # index into positions of the word whose FFN output is longest
    norms: tuple[float, ...]  # every token's FFN output length in this layer
    words: tuple[int, ...]  # every position the question could have named

    @property
    def best(self) -> int:
        return self.positions[self.answer]

    @property
    def runner_up(self) -> int:
        """The word, among every word of the sentence, with the next longest FFN output."""
        return max((i for i in self.words if i != self.best), key=lambda i: self.norms[i])

    @property
    def lead(self) -> float:
        """The winner's length over the runner-up's."""
        return self.norms[self.best] / self.norms[self.runner_up]


def ffn_token_choice(
    norms: torch.Tensor,
    tokens: Sequence[str],
    preferred: int | None = None,
    margin: float = FFN_TOKEN_MARGIN,
    n: int = FFN_TOKEN_OPTIONS,
) -> FfnTokenChoice | None:
    """norms: ffn_output_norms (L, T). The first layer (the preferred one, by default the last but one, then the
    nearest) whose longest word FFN output is `margin` times every other word's; the options are that word, the
    runner-up, the shortest and one in between. None when no layer has so clear a winner, or the sentence has
    fewer than FFN_TOKEN_MIN_WORDS words."""
    words = word_positions(tokens)
    if len(words) < FFN_TOKEN_MIN_WORDS:
        return None
    n_layers = norms.shape[0]
    preferred = max(0, n_layers - 2) if preferred is None else preferred
    passed: list[int] = []
    for layer in layer_order(n_layers, preferred):
        row = [float(v) for v in norms[layer]]
        ranked = sorted(words, key=lambda i: (-row[i], i))
        best, second = ranked[0], ranked[1]
        if row[best] >= margin * row[second]:
            picks = list(dict.fromkeys([best, second, ranked[-1], ranked[len(ranked) // 2], *ranked]))[:n]
            positions = tuple(sorted(picks))
            return FfnTokenChoice(
                layer, preferred, tuple(passed), positions, positions.index(best), tuple(row), tuple(words)
            )
        passed.append(layer)
    return None
