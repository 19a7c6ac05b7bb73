"""Section 6, the other objective: next-sentence prediction, and what RoBERTa changed."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from encoder_core.lessons.masking import NSPExample

NSP_NARRATIVE = (
    "BERT's second pre-training task, **next-sentence prediction**, packs two sentences into one input, "
    "`[CLS] A [SEP] B [SEP]`, with segment 0 for `[CLS]`, A and its `[SEP]` and segment 1 for B and the "
    "last `[SEP]`. In half of the pairs B really followed A; in the other half B is a random sentence. "
    "The final vector at **[CLS]** goes through a two-way classifier, IsNext or NotNext, and that is "
    "what [CLS] was put there for: one position whose vector stands for the whole input. Later work "
    "found the task adds little. **RoBERTa dropped it**, trained on masked tokens alone over longer "
    "stretches of text, and **masked dynamically**: a fresh masking pattern every time a sentence comes "
    "round, instead of one pattern fixed when the data was prepared. The *Draw again* button above is "
    "dynamic masking; the lab's own model was trained that way, without NSP."
)


def nsp_table(examples: Sequence[NSPExample]) -> pd.DataFrame:
    """The pairs as BERT reads them: both sentences, the label, the packed input and its segment ids."""
    return pd.DataFrame(
        [
            {
                "sentence A": ex.sentence_a,
                "sentence B": ex.sentence_b,
                "label": "IsNext" if ex.is_next else "NotNext (random)",
                "model input": " ".join(ex.tokens),
                "segments": "".join(map(str, ex.segments)),
            }
            for ex in examples
        ]
    )


def nsp_text(examples: Sequence[NSPExample], seed: int) -> str:
    n_next = sum(ex.is_next for ex in examples)
    return (
        f"Pairs drawn from the lab's corpus with masking seed {seed}: "
        f"**{n_next} of {len(examples)}** are real continuations, the rest pair A with a random sentence."
    )
