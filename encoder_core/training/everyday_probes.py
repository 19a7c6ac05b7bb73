"""Everyday fill-mask probes: the kind of sentence a student types to see whether a model "knows English".

Forty sentences about home, food, school, weather, travel, work, the body and time, one word hidden
in each, with the words that count as right. They are kept apart from every training text: none of
them, filled in with an expected word, is a sentence of any text the lab's models are trained on,
and no such sentence contains one (tests/encoder_core/training/test_everyday_probes.py checks both). The
twenty fixed probes of encoder_core.training.probes are the lab's older bar; these are the one a
new student's first tries are closer to. `python -m scripts.everyday_probes` prints
both tables for MiniLM with the lab's MLM head.
"""

from __future__ import annotations

import re

from .probes import Probe

EVERYDAY_PROBES: tuple[Probe, ...] = (
    Probe("the sun rises in the [MASK].", ("east", "morning"), "east / morning"),
    Probe("it was raining, so she took her [MASK].", ("umbrella", "coat", "jacket"), "umbrella / coat / jacket"),
    Probe("i brush my [MASK] every morning.", ("teeth", "hair"), "teeth / hair"),
    Probe("he drinks a glass of [MASK] with breakfast.", ("milk", "juice", "water"), "milk / juice / water"),
    Probe("please turn off the [MASK] when you leave the room.", ("light", "lights", "tv", "television"), "light / tv"),
    Probe("we need to buy some eggs and [MASK] at the shop.", ("milk", "bread", "butter", "cheese"), "milk / bread"),
    Probe("my phone battery is almost [MASK].", ("dead", "empty", "gone", "out", "flat"), "dead / empty / flat"),
    Probe("she washed the dishes in the kitchen [MASK].", ("sink",), "sink"),
    Probe("there are seven days in a [MASK].", ("week",), "week"),
    Probe(
        "he parked his [MASK] in front of the house.", ("car", "truck", "bike", "bicycle", "van"), "car / truck / bike"
    ),
    Probe(
        "the train leaves from platform [MASK].",
        ("one", "two", "three", "four", "five", "1", "2", "3", "4", "5"),
        "a number",
    ),
    Probe("she bent down to tie her [MASK] before the race.", ("shoes", "shoe", "hair"), "shoes / hair"),
    Probe("i was so tired that i went to [MASK] early.", ("bed", "sleep"), "bed / sleep"),
    Probe("the students listened to the [MASK] in class.", ("teacher", "professor", "lecture", "lesson"), "teacher"),
    Probe("we had pizza for [MASK] last night.", ("dinner", "supper"), "dinner / supper"),
    Probe("the plane landed at the [MASK] an hour late.", ("airport",), "airport"),
    Probe("he forgot his keys and could not open the [MASK].", ("door", "car", "lock", "gate"), "door"),
    Probe("she called her mother on the [MASK].", ("phone", "telephone"), "phone"),
    Probe(
        "the cat is sleeping on the [MASK].",
        ("bed", "couch", "sofa", "floor", "chair", "mat", "table"),
        "a place to lie",
    ),
    Probe("my brother is two years [MASK] than me.", ("older", "younger"), "older / younger"),
    Probe("you should see a [MASK] if the pain gets worse.", ("doctor", "dentist", "nurse", "specialist"), "doctor"),
    Probe("the shop opens at nine in the [MASK].", ("morning",), "morning"),
    Probe("he wears glasses because he cannot [MASK] well.", ("see",), "see"),
    Probe("in winter the lake freezes and turns to [MASK].", ("ice",), "ice"),
    Probe("she paid for the groceries with her credit [MASK].", ("card",), "card"),
    Probe("the baby is sleeping, so please be [MASK].", ("quiet", "careful"), "quiet / careful"),
    Probe(
        "we went to the beach and swam in the [MASK].", ("sea", "ocean", "water", "lake", "pool"), "sea / ocean / water"
    ),
    Probe("he cooked the rice in a large [MASK].", ("pot", "pan", "bowl"), "pot / pan / bowl"),
    Probe(
        "the children played football in the [MASK].",
        ("park", "garden", "yard", "street", "field", "rain", "snow"),
        "park / garden / field",
    ),
    Probe("i need a pen and some [MASK] to write a note.", ("paper",), "paper"),
    Probe("the bus was late, so i had to [MASK] to work.", ("walk", "run", "drive", "go"), "walk / run / drive"),
    Probe("she goes to the gym to stay [MASK].", ("fit", "healthy", "active", "strong"), "fit / healthy"),
    Probe("the library lends books for two [MASK].", ("weeks", "days", "months", "years"), "weeks / days"),
    Probe(
        "my favourite colour is [MASK].",
        ("blue", "red", "green", "black", "white", "yellow", "purple", "pink", "orange"),
        "a colour",
    ),
    Probe("he took a shower and dried himself with a [MASK].", ("towel",), "towel"),
    Probe(
        "it is dark outside because it is [MASK].",
        ("night", "evening", "late", "midnight", "winter", "raining"),
        "night / late",
    ),
    Probe("she keeps the milk cold in the [MASK].", ("fridge", "refrigerator"), "fridge"),
    Probe("we watched a film at the [MASK] on saturday.", ("cinema", "theater", "theatre", "movies"), "cinema"),
    Probe("the dog wagged its [MASK] when he came home.", ("tail",), "tail"),
    Probe("he cut his finger and it started to [MASK].", ("bleed", "hurt", "swell"), "bleed / hurt"),
)


def probe_pattern(probe: Probe) -> re.Pattern:
    """The probe with any one word in the blank, lower case, the final stop optional: what must not be in a
    training text (the words around the blank, in order, are the probe itself)."""
    left, right = (part.lower() for part in probe.text.rstrip(" .").split("[MASK]"))
    return re.compile(re.escape(left) + r"[^\s]+" + re.escape(right))


def probes_in(texts, probes: tuple[Probe, ...] = EVERYDAY_PROBES) -> list[tuple[str, str]]:
    """(probe, text) for every text that holds a probe with some word in its blank: [] when they are apart."""
    patterns = [(p.text, probe_pattern(p)) for p in probes]
    return [(name, text) for text in texts for name, pattern in patterns if pattern.search(text.lower())]
