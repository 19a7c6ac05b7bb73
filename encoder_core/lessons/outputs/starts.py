"""Three starting points: a frozen probe, fine-tuned end to end, or random weights."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...finetune.tasks import STARTS, FineTuneRun


@dataclass
class StartComparison:
    task: str
    steps: int
    held_out: dict[str, float]  # start -> held-out score
    early_loss: dict[str, float]  # mean loss over the first tenth of the steps
    final_loss: dict[str, float]  # mean loss over the last tenth
    baseline: float
    n_train: int

    @property
    def pretraining_gain(self) -> float:
        """Held-out score of the pre-trained model fine-tuned end to end, minus the same from random weights."""
        return self.held_out["finetune"] - self.held_out["scratch"]

    @property
    def buys_little(self) -> bool:
        return self.pretraining_gain < 0.05


# Which scores higher on held-out data: the frozen pre-trained encoder with a trained head (a linear
# probe), or the same architecture trained end to end from random weights? Within SAME_MARGIN (2 points
# of accuracy or exact match): about the same. Scores differ slightly between CPUs, so the answer is
# always read from the runs the page just made.
PROBE_OUTCOMES = ("frozen", "scratch", "same")
SAME_MARGIN = 0.02


def probe_or_scratch(cmp: StartComparison, margin: float = SAME_MARGIN) -> str:
    """One of PROBE_OUTCOMES: which of the frozen probe and random weights wins on held-out data."""
    gap = cmp.held_out["frozen"] - cmp.held_out["scratch"]
    if abs(gap) <= margin + 1e-9:  # a gap of exactly the margin, up to float rounding, is within it
        return "same"
    return "frozen" if gap > 0 else "scratch"


def compare_starts(runs: dict[str, FineTuneRun]) -> StartComparison:
    if set(runs) != set(STARTS):
        raise ValueError(f"need one run per starting point {STARTS}, got {sorted(runs)}")
    steps = {r.steps for r in runs.values()} | {r.task for r in runs.values()}
    if len(steps) != 2:
        raise ValueError("the runs must share one task and one number of steps")
    first = next(iter(runs.values()))
    k = max(1, first.steps // 10)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return StartComparison(
        first.task,
        first.steps,
        {s: r.held_out for s, r in runs.items()},
        {s: mean(r.losses[:k]) for s, r in runs.items()},
        {s: mean(r.losses[-k:]) for s, r in runs.items()},
        first.baseline,
        first.n_train,
    )


# ---- a probe on frozen features: pre-trained against random weights -----------------------------------------


@torch.inference_mode()
def word_vectors(encoder, tokenizer, words, template: str = "the {} was there") -> torch.Tensor:
    """Each word's final vector (its first piece's), read in the template sentence: (n, D), unit length."""
    out = []
    for word in words:
        enc = tokenizer.encode(template.format(word))
        first = len(tokenizer.encode(template.split("{}")[0]).ids) - 1  # after [CLS] and the words before it
        out.append(encoder(torch.tensor([enc.ids]), need_weights=False).hidden[0, first])
    return torch.nn.functional.normalize(torch.stack(out), dim=-1)


def centroid_probe(encoder, tokenizer, train: dict[str, str], test: dict[str, str]) -> float:
    """A probe on frozen vectors: the mean vector of each label's training words; a held-out word gets the label
    whose mean is nearest (cosine). Its held-out accuracy, over the test words ({word: label})."""
    labels = sorted(set(train.values()))
    vectors = word_vectors(encoder, tokenizer, list(train))
    means = torch.stack([vectors[[v == lab for v in train.values()]].mean(0) for lab in labels])
    means = torch.nn.functional.normalize(means, dim=-1)
    guessed = (word_vectors(encoder, tokenizer, list(test)) @ means.T).argmax(-1).tolist()
    return sum(labels[g] == lab for g, lab in zip(guessed, test.values())) / len(test)
