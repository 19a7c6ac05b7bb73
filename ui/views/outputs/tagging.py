"""Section 4, tag every word: the trained tagger's answer on the student's sentence."""

from __future__ import annotations

import pandas as pd

from encoder_core.finetune.tasks import TAGS
from encoder_core.lessons.outputs import TagPrediction

from ..figures import Chart, esc
from .common import TAG_COLOURS, coloured_cells


def tag_row_chart(pred: TagPrediction) -> Chart:
    """One coloured cell per word, its tag written in it; colour is never the only cue."""
    guessed = pred.guessed
    fig = coloured_cells(
        pred.words,
        [TAGS.index(t) for t in pred.tags],
        [TAG_COLOURS[t] for t in TAGS],
        [f"{esc(w)}<br><b>{t}</b>{'<br><i>guess</i>' if g else ''}" for w, t, g in zip(pred.words, pred.tags, guessed)],
        row="tag",
        title="A tag for every word, read at its first word piece (guess: a word outside the head's training)",
        x_title="word (position in the sentence)",
        hover="%{text} (%{customdata})",
        customdata=[[f"{c:.1%}" for c in pred.confidence]],
    )
    shown = "; ".join(f"{w} = {t}{' (a guess)' if g else ''}" for w, t, g in zip(pred.words[:20], pred.tags, guessed))
    table = pd.DataFrame(
        {
            "word": pred.words,
            "word pieces": [" ".join(p) for p in pred.pieces],
            "tag": pred.tags,
            "probability": pred.confidence,
            "in the task's training data": pred.seen,
            "a guess": guessed,
        }  # fmt: skip
    )
    return Chart(fig, f"Tags: {shown}{' …' if len(pred.words) > 20 else ''}.", table)
