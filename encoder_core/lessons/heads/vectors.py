"""Sentence vectors: pooled sentences compared, and one word's vector in two senses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...model.model import Encoder
from ...model.output_heads import cls_pool, mean_pool
from ...model.tokenizer import Encoding
from .pieces import word_index
from .run import AttentionRun, run_encoder

# The "bank" sentences of the home page, and a sentence that uses "bank" in the same sense as the first.
BANK_RIVER = "she sat on the bank of the river"
BANK_MONEY = "she sat on the bank and counted the money"
BANK_RIVER_AGAIN = "she sat on the bank of the stream"  # the same words up to and including "bank"
BANK_WORD = "bank"
# Sentences to compare as whole-sentence vectors: a paraphrase pair, a related one, an unrelated one.
SENTENCE_EXAMPLES = (
    "the cat sat on the mat",
    "a cat was sitting on the rug",
    "the dog played in the garden",
    "interest rates rose again this quarter",
)


@dataclass
class Similarities:
    texts: list[str]
    mean: torch.Tensor  # (N, N) cosine similarity of mean-pooled vectors
    cls: torch.Tensor  # (N, N) cosine similarity of [CLS] vectors

    def pair_range(self, pooling: str) -> tuple[float, float]:
        """(lowest, highest) cosine over pairs of different sentences."""
        m = self.mean if pooling == "mean" else self.cls
        off = m[~torch.eye(m.shape[0], dtype=torch.bool)]
        if off.numel() == 0:
            raise ValueError("one sentence has no pairs")
        return float(off.min()), float(off.max())


def cosine_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """(N, D) -> (N, N) cosine similarities."""
    unit = F.normalize(vectors.float(), p=2, dim=-1)
    return unit @ unit.T


@torch.inference_mode()
def similarities(pretrained, texts: Sequence[str]) -> Similarities:
    """Sentence vectors by mean pooling (over real tokens, [CLS] and [SEP] included, as the model
    was trained) and by the [CLS] vector, from one forward pass of the batch."""
    from ...pretrained.minilm import SENTENCE_MAX_LENGTH

    texts = list(texts)
    if not texts:
        raise ValueError("no sentences to compare")
    tok = pretrained.tokenizer
    batch = tok.pad([tok.encode(t, max_length=SENTENCE_MAX_LENGTH) for t in texts])
    hidden = pretrained.model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False).hidden
    mean = cosine_matrix(mean_pool(hidden, batch.key_padding_mask))
    cls = cosine_matrix(cls_pool(hidden))
    return Similarities(texts, mean, cls)


@dataclass
class WordVectorCosines:
    word: str
    pair: tuple[str, str]
    pieces: list[str]  # the word's pieces in the first sentence
    per_layer: torch.Tensor  # (L + 1,): cosine at the embeddings, then after each layer

    @property
    def final(self) -> float:
        return float(self.per_layer[-1])


def word_vector(run: AttentionRun, enc: Encoding, word: str) -> torch.Tensor:
    """(L + 1, D): the vectors of the first occurrence of `word`, averaged over its pieces."""
    positions = [i for i, w in enumerate(enc.words) if w.lower() == word.lower()]
    if not positions:
        raise ValueError(f"{word!r} is not a word of {' '.join(enc.tokens)!r}")
    groups = word_index(enc.tokens)
    first = [i for i in positions if groups[i] == groups[positions[0]]]
    return run.hidden_states[:, first].mean(dim=1)


def word_vector_cosines(model: Encoder, tokenizer, sentence_a: str, sentence_b: str, word: str) -> WordVectorCosines:
    """Cosine between the vectors of the same word in two sentences, at every depth of the model."""
    encs = [tokenizer.encode(s) for s in (sentence_a, sentence_b)]
    vecs = [word_vector(run_encoder(model, e), e, word) for e in encs]
    per_layer = F.cosine_similarity(vecs[0], vecs[1], dim=-1)
    pieces = [t for t, w in zip(encs[0].tokens, encs[0].words) if w.lower() == word.lower()]
    return WordVectorCosines(word, (sentence_a, sentence_b), pieces, per_layer)
