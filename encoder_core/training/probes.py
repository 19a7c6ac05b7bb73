"""Twenty fixed fill-mask probes: everyday sentences with one word hidden, and the word expected.

Held fixed so the lab's MLMs can be compared over time; docs/models.md's tables are computed from
them (`make figures`; tests/scripts/test_figures.py checks them). The first three are the quality bar the lab promises:
seed 003's "the [MASK] sat on the mat." should give an animal among the five best guesses,
and both "bank" sentences should give "bank". A probe's expected word may be any of several
("an animal"): its rank is the best rank among them. No probe, filled in with an expected
word, is a training sentence (encoder_core.training.train leaves such sentences out).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

ANIMALS = ("cat", "dog", "horse", "bird", "mouse", "rat", "cow", "sheep", "goat", "pig", "fox", "rabbit", "animal")


@dataclass(frozen=True)
class Probe:
    text: str  # one [MASK]
    expected: tuple[str, ...]  # any of these counts
    label: str  # how the expected answer is described in a table
    required_top: int | None = None  # the rank the lab promises, if any


PROBES: tuple[Probe, ...] = (
    Probe("the [MASK] sat on the mat.", ANIMALS, "an animal", 5),
    Probe("she put her money in the [MASK].", ("bank",), "bank", 5),
    Probe("she sat on the [MASK] of the river.", ("bank",), "bank", 5),
    Probe("the [MASK] barked at the stranger.", ("dog",), "dog"),
    Probe("he drank a cup of hot [MASK].", ("tea", "coffee"), "tea / coffee"),
    Probe("she wrote a long [MASK] to her mother.", ("letter",), "letter"),
    Probe("the children walked to [MASK] in the morning.", ("school",), "school"),
    Probe("he opened the [MASK] and walked into the room.", ("door",), "door"),
    Probe("she cut the bread with a sharp [MASK].", ("knife",), "knife"),
    Probe("the ship sailed across the [MASK].", ("sea", "ocean"), "sea / ocean"),
    Probe("birds can [MASK] high above the trees.", ("fly",), "fly"),
    Probe("the doctor works at the [MASK].", ("hospital",), "hospital"),
    Probe("the king and the [MASK] lived in a castle.", ("queen",), "queen"),
    Probe("it was very cold, so he put on his [MASK].", ("coat", "hat", "jacket"), "coat / hat / jacket"),
    Probe("the [MASK] was shining in the blue sky.", ("sun",), "sun"),
    Probe("she reads a [MASK] every night before bed.", ("book",), "book"),
    Probe("he paid for the car with his [MASK].", ("money", "cash"), "money / cash"),
    Probe("the farmer milked the [MASK] in the barn.", ("cow", "cows", "goat"), "cow / goat"),
    Probe("we heard the sound of [MASK] on the roof.", ("rain",), "rain"),
    Probe("the baby began to [MASK] when she was hungry.", ("cry",), "cry"),
)


def filled(probe: Probe) -> list[str]:
    """The probe's sentence with each expected word in place of [MASK], lower case, no final stop."""
    return [probe.text.replace("[MASK]", word).lower().rstrip(" .") for word in probe.expected]


@dataclass(frozen=True)
class ProbeResult:
    probe: Probe
    rank: int  # 1-based rank of the best expected word among all tokens
    best: str  # which expected word got that rank
    probability: float
    top5: list[tuple[str, float]]

    @property
    def passed(self) -> bool:
        return self.probe.required_top is None or self.rank <= self.probe.required_top


@torch.inference_mode()
def run_probes(model, tokenizer, probes: tuple[Probe, ...] = PROBES) -> list[ProbeResult]:
    """Rank every expected word at each probe's [MASK] (the model's full distribution over the vocabulary)."""
    model.eval()
    results = []
    for probe in probes:
        enc = tokenizer.encode(probe.text)
        if enc.tokens.count("[MASK]") != 1:
            raise ValueError(f"probe {probe.text!r} must hold exactly one [MASK]")
        ids = torch.tensor([enc.ids])
        logits, _ = model(ids, torch.tensor([enc.segments]), need_weights=False)
        probs = logits[0, enc.tokens.index("[MASK]")].float().softmax(-1)
        order = probs.argsort(descending=True)
        rank_of = torch.empty_like(order)
        rank_of[order] = torch.arange(1, len(order) + 1)
        known = [w for w in probe.expected if w in tokenizer.token_to_id]
        if not known:
            raise ValueError(f"none of {probe.expected} is one token of the vocabulary")
        best = min(known, key=lambda w: int(rank_of[tokenizer.token_to_id[w]]))
        i = tokenizer.token_to_id[best]
        top5 = [(tokenizer.vocab[int(j)], float(probs[j])) for j in order[:5]]
        results.append(ProbeResult(probe, int(rank_of[i]), best, float(probs[i]), top5))
    return results


def probes_table(results: list[ProbeResult]) -> str:
    """A Markdown table: probe, expected, rank, the model's five best guesses."""
    lines = ["| # | probe | expected | rank | five best guesses |", "|---|---|---|---|---|"]
    for n, r in enumerate(results, start=1):
        guesses = ", ".join(f"{tok} {p:.1%}" for tok, p in r.top5)
        rank = f"{r.rank} ({r.best})" if len(r.probe.expected) > 1 else str(r.rank)
        lines.append(f"| {n} | {r.probe.text} | {r.probe.label} | {rank} | {guesses} |")
    return "\n".join(lines)
