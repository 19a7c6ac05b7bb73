"""3. Sample efficiency: which positions carry a loss under each pre-training objective."""

from __future__ import annotations

import re
from dataclasses import dataclass

import torch

from ...model.output_heads import MaskedLanguageModel
from ...model.tokenizer import WordPieceTokenizer
from ...objectives.mlm_masking import NOT_CHOSEN, tokenizer_mask
from .common import _ids

OBJECTIVES = ("masked LM", "next token", "replaced token detection")


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
