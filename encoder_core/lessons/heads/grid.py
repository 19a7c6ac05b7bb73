"""All heads at once: which head looks back, and which key a positional head's weight goes to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ...model.head_patterns import NEIGHBOUR_PATTERNS, HeadLabel
from .run import SPECIALS

# The pattern a head is asked about, and the patterns its rivals in the question are picked for (in this order).
PREVIOUS = "previous token"
RIVAL_PATTERNS = ("next token", "[SEP]", "[CLS]", "self")
# No coin toss: a rival's previous-token mass is at least this far below the answer's (a tenth of a row's weight,
# on average over the rows). A head closer to the winner than that is left out of the options, and the page
# names it. On random weights no head leads by so much, and the question is not asked.
PREVIOUS_MARGIN = 0.1
MIN_OPTIONS = 3


@dataclass(frozen=True)
class HeadChoice:
    """A few heads of the grid, one of which (the answer) puts the most weight on the previous token."""

    candidates: tuple[tuple[int, int], ...]  # (layer, head), in grid order
    answer: int  # index into candidates of the head with the largest previous-token mass of all heads
    previous: tuple[float, ...]  # each candidate's previous-token mass
    too_close: tuple[tuple[int, int, float], ...] = ()  # (layer, head, mass) of heads left out: within the margin
    margin: float = PREVIOUS_MARGIN


def previous_token_choice(
    labels: Sequence[HeadLabel], n: int = 4, margin: float = PREVIOUS_MARGIN
) -> HeadChoice | None:
    """The head with the largest previous-token mass (the first on a tie), and up to n - 1 rivals at least `margin`
    below it: the one that looks back most among them; then, for each of RIVAL_PATTERNS in turn, the head that shows
    it most among the heads it describes best; then the heads that look back least. Heads within the margin of the
    answer are left out (listed in too_close). None when fewer than MIN_OPTIONS heads can be offered."""
    if not labels:
        raise ValueError("no heads to choose from")
    prev = {(lab.layer, lab.head): lab.masses[PREVIOUS] for lab in labels}
    best = max(prev, key=lambda k: (prev[k], -k[0], -k[1]))  # the largest; the first in grid order on a tie
    eligible = [lab for lab in labels if prev[(lab.layer, lab.head)] <= prev[best] - margin]
    too_close = tuple(
        (lab.layer, lab.head, prev[(lab.layer, lab.head)])
        for lab in sorted(labels, key=lambda lab: -prev[(lab.layer, lab.head)])
        if (lab.layer, lab.head) != best and prev[(lab.layer, lab.head)] > prev[best] - margin
    )
    picks = sorted(eligible, key=lambda lab: -lab.masses[PREVIOUS])[:1]  # the closest rival that still counts
    for pattern in RIVAL_PATTERNS:  # the head that shows this pattern most, among those it describes best
        shows = [lab for lab in eligible if lab.masses[pattern] == max(lab.masses.values())]
        if shows:
            picks.append(max(shows, key=lambda lab, p=pattern: lab.masses[p]))
    picks += sorted(eligible, key=lambda lab: lab.masses[PREVIOUS])
    chosen = [best]
    for lab in picks:
        if len(chosen) >= n:
            break
        if (lab.layer, lab.head) not in chosen:
            chosen.append((lab.layer, lab.head))
    if len(chosen) < MIN_OPTIONS:
        return None
    candidates = tuple(sorted(chosen))  # the page shows them in an order drawn per visit
    return HeadChoice(candidates, candidates.index(best), tuple(prev[c] for c in candidates), too_close, margin)


# The word question of the heads lesson: where one word of the sentence puts its weight in a trained head.
# all-MiniLM-L6-v2's layer 1, head 4 is asked first: on ordinary sentences a small word there looks to the content
# word it belongs with (on -> mat, she -> sat, in -> london), while content words park their weight on [CLS].
PREFERRED_HEAD = (1, 4)
# No coin toss: the asked word's largest weight beats its second largest by a fifth of the row (rows sum to 1).
TOP_KEY_MARGIN = 0.2


def positional_heads(labels: Sequence[HeadLabel]) -> frozenset[tuple[int, int]]:
    """(layer, head) of every head labelled previous or next token: its label alone says where a word looks."""
    return frozenset((lab.layer, lab.head) for lab in labels if lab.pattern in NEIGHBOUR_PATTERNS)


@dataclass(frozen=True)
class TopKeyChoice:
    """One word of the sentence, one head, and a few keys, one of which (the answer) gets the word's largest weight."""

    layer: int
    head: int
    query: int  # the position of the word asked about
    positions: tuple[int, ...]  # the options: key positions, in sentence order
    answer: int  # index into positions of the key with the largest weight
    weights: tuple[float, ...]  # the query's row: its weight on every key
    preferred: tuple[int, int]  # the head tried first
    margin: float = TOP_KEY_MARGIN

    @property
    def best(self) -> int:
        return self.positions[self.answer]

    @property
    def runner_up(self) -> int:
        """The key, among every key, with the query's next largest weight."""
        return max((k for k in range(len(self.weights)) if k != self.best), key=lambda k: self.weights[k])

    @property
    def passed_over(self) -> bool:
        """True when the preferred head had no word with so clear a favourite, and another head is asked."""
        return (self.layer, self.head) != self.preferred


def top_key_choice(
    attentions: torch.Tensor,
    tokens: Sequence[str],
    preferred: tuple[int, int] = PREFERRED_HEAD,
    skip: frozenset[tuple[int, int]] = frozenset(),
    margin: float = TOP_KEY_MARGIN,
    n: int = 4,
) -> TopKeyChoice | None:
    """attentions (L, H, T, T) of one sentence. Heads are tried in turn, the preferred one first, then the others in
    grid order (not those in `skip`: heads whose label would give the answer away); in each, the words in reading
    order. The first word whose largest weight goes to another word (not itself, not a special token) and beats its
    second largest by `margin` is asked. Its options: that key, the runner-up, the next token, [CLS] and the word
    itself (then the other keys by weight), the first n that differ. None when no head and word qualify."""
    n_layers, n_heads, T, _ = attentions.shape
    is_word = torch.tensor([t not in SPECIALS and t != "[UNK]" for t in tokens])
    order = [preferred] if preferred[0] < n_layers and preferred[1] < n_heads else []
    order += [(layer, head) for layer in range(n_layers) for head in range(n_heads) if (layer, head) != preferred]
    best2 = torch.topk(attentions.float(), 2, dim=-1)  # every row's two largest weights at once
    for layer, head in (h for h in order if h not in skip):
        values, keys = best2.values[layer, head], best2.indices[layer, head]  # (T, 2) each
        top = keys[:, 0]
        asked = is_word & is_word[top] & (top != torch.arange(T)) & (values[:, 0] - values[:, 1] >= margin)
        if not bool(asked.any()):
            continue
        q = int(asked.nonzero()[0])  # the first such word in reading order
        row = attentions[layer, head, q]
        ranked = [int(i) for i in torch.argsort(row, descending=True, stable=True)]
        extra = [ranked[1], q + 1 if q + 1 < T else None, 0 if tokens[0] == "[CLS]" else None, q, *ranked[2:]]
        picks = list(dict.fromkeys([ranked[0]] + [i for i in extra if i is not None]))[:n]
        positions = tuple(sorted(picks))
        weights = tuple(float(w) for w in row)
        return TopKeyChoice(layer, head, q, positions, positions.index(ranked[0]), weights, preferred, margin)
    return None
