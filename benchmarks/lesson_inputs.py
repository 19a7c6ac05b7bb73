"""What a simulated student types into a lesson: the lesson's sentence box, and a sentence to type into it."""

from __future__ import annotations

import random

from scripts.prediction_slots import SENTENCE_PARAMS

WORDS = "the a cat dog bird teacher student sat ran sang read on in near park river book garden old small".split()
# A control's widget key is "<lesson>.<its parameter>" (ui.frame.params), and the sentence box's parameter is
# the one the lesson's links set.
SENTENCE_BOXES = {lesson: f"{lesson}.{param}" for lesson, param in SENTENCE_PARAMS.items()}


def random_sentence(r: random.Random) -> str:
    """4 to 9 different words of WORDS: most draws are a sentence nobody has typed yet."""
    return " ".join(r.sample(WORDS, r.randint(4, 9)))
