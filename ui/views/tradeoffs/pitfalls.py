"""What the three pitfall sections share: each pitfall's title, diagnosis and one-line fix."""

from __future__ import annotations

PITFALL_TITLES = {
    1: "**1. Forgetting the key padding mask.**",
    2: "**2. Reading the pads' outputs.**",
    3: "**3. Labelling unmasked positions, or leaving the answer visible.**",
    4: "**4. Averaging the loss over every position.**",
    5: "**5. The raw [CLS] vector of a model never trained for it, as a sentence embedding.**",
    6: "**6. Truncation that silently cuts the answer out of a QA passage.**",
}
PITFALL_FIX = {
    1: "out = model(batch.ids, key_padding_mask=batch.key_padding_mask)  # True = ignore",
    2: "sentence = (hidden * ~mask[..., None]).sum(1) / (~mask).sum(1, keepdim=True)  # pads left out",
    3: "inputs[chosen] = mask_id; labels[~chosen] = -100  # hide what is scored (80/10/10), score only that",
    4: "loss = F.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100)",
    5: "sentence = mean_pool(hidden, key_padding_mask)  # what all-MiniLM-L6-v2 was trained with",
    6: "enc = tok(question, passage, truncation='only_second', max_length=384, stride=128, "
    "return_overflowing_tokens=True)",
}
PITFALL_TEXT = {
    1: (
        "**Symptom:** the same sentence gets different vectors depending on how long its batch-mates were, and "
        "nothing crashes. **Diagnosis:** without the key padding mask the pads are ordinary keys and take a share "
        "of every real token's attention; with it, the gap is float rounding."
    ),
    2: (
        "**Symptom:** a pooled vector or a loss that shifts with padding. **Diagnosis:** a pad's output is some "
        "vector, not zero and not meaningful, and PyTorch's own encoder even fills it with zeros in eval mode "
        "(its fast path) but not in training: leave pads out of pooling and out of the loss."
    ),
    3: (
        "**Symptom:** training accuracy near 100% within a few dozen steps, fill-mask on new text no better than "
        "a guess. **Diagnosis:** the scored positions still show their answer, so the model learns to copy."
    ),
    4: (
        "**Symptom:** a loss that looks several times smaller than it is, and slower learning. **Diagnosis:** "
        "the sum over the chosen positions is divided by every "
        "position, so the loss and its gradient shrink by the chosen share, which changes from batch to batch."
    ),
    5: (
        "**Symptom:** every pair of sentences looks alike: with the raw [CLS], even unrelated sentences get a high "
        "cosine, so a paraphrase barely stands out. **Diagnosis:** nothing trained this model's [CLS] output to "
        "stand for the sentence; it was trained with mean pooling, so use what it was trained with, or fine-tune "
        "[CLS] for the task."
    ),
    6: (
        "**Symptom:** a QA model that answers confidently, and wrongly, on long passages. **Diagnosis:** "
        "truncation cut the passage's end, answer and all, without a word: the model can only point at what is left."
    ),
}
