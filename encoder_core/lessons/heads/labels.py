"""What each head does: how many heads park their weight on a special token."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...model.head_patterns import HeadLabel


@dataclass
class SinkSummary:
    """Where the heads park attention they do not need: [CLS] or [SEP]."""

    n_heads: int
    n_cls: int  # heads labelled [CLS]
    n_sep: int  # heads labelled [SEP]
    mean_cls: float  # [CLS] mass averaged over every head
    mean_sep: float  # [SEP] mass averaged over every head
    n_more_cls: int  # heads that put more weight on [CLS] than on [SEP]
    counts: dict[str, int]  # heads per label, most frequent first


def sink_summary(labels: Sequence[HeadLabel]) -> SinkSummary:
    if not labels:
        raise ValueError("no heads to summarise")
    n = len(labels)
    return SinkSummary(
        n_heads=n,
        n_cls=sum(lab.pattern == "[CLS]" for lab in labels),
        n_sep=sum(lab.pattern == "[SEP]" for lab in labels),
        mean_cls=sum(lab.masses["[CLS]"] for lab in labels) / n,
        mean_sep=sum(lab.masses["[SEP]"] for lab in labels) / n,
        n_more_cls=sum(lab.masses["[CLS]"] > lab.masses["[SEP]"] for lab in labels),
        counts=dict(Counter(lab.pattern for lab in labels).most_common()),
    )
