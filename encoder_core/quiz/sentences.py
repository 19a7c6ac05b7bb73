"""Plain sentences for the questions: every word one token, and every verb, preposition and noun a pair that fits.

A random word from each list gives "the mother rested into the kitchen" or "the cat read the letter";
a student stops to puzzle over that instead of the question. So each verb lists the prepositions it
takes, each preposition the places it takes, and each transitive verb the objects it takes.
"""

from __future__ import annotations

import random

from ..data.lexicon import ANIMALS, OBJECTS, PEOPLE

LAND_ANIMALS = tuple(a for a in ANIMALS if a != "fish")  # a fish does not sit, walk or wait
PERSON_ADJECTIVES = ("big", "small", "old", "young", "happy", "sad", "tired", "hungry", "quiet", "loud", "little")
ANIMAL_ADJECTIVES = PERSON_ADJECTIVES + ("brown", "white", "black")
ODD_PAIRS = {  # (noun, adjective) that read oddly together
    ("child", "old"),
    ("boy", "old"),
    ("girl", "old"),
    ("baker", "little"),
    ("doctor", "little"),
}
OBJECT_ADJECTIVES = ("big", "small", "old", "new", "red", "blue", "green", "little", "brown", "white", "black")
OBJECT_ADJECTIVES += ("warm", "cold")

# Where something is (fits "all day") and where something goes.
LOCATION = ("on", "in", "at", "near", "by", "behind", "under")
PLACES_FOR = {
    "on": ("mat", "floor", "bed", "sofa", "roof", "hill", "road", "beach", "farm"),
    "in": ("park", "garden", "house", "school", "shop", "forest", "field", "kitchen", "town"),
    "at": ("school", "shop", "park", "beach", "farm", "river", "lake"),
    "near": ("river", "lake", "road", "house", "school", "shop", "park", "garden", "hill", "forest", "farm", "town"),
    "by": ("river", "lake", "road", "house", "school", "shop", "sofa", "bed", "garden"),
    "behind": ("house", "school", "shop", "sofa", "hill", "farm", "bed"),
    "under": ("bed", "sofa"),
    "to": ("park", "garden", "house", "school", "shop", "river", "lake", "beach", "town", "farm", "forest", "hill"),
    "from": ("park", "garden", "house", "school", "shop", "river", "lake", "beach", "town", "farm", "forest"),
    "into": ("house", "school", "shop", "kitchen", "garden", "forest", "river", "lake", "field", "park", "town"),
    "over": ("hill", "road", "river", "field", "mat"),
}

INTRANSITIVE = {  # verb: the prepositions it takes
    "sat": ("on", "in", "at", "near", "by", "behind", "under"),
    "slept": ("on", "in", "near", "by", "under", "behind"),
    "rested": ("on", "in", "near", "by", "under"),
    "stood": ("on", "in", "at", "near", "by", "behind"),
    "waited": ("at", "in", "near", "by", "behind", "on"),
    "played": ("in", "at", "near", "by", "on"),
    "sang": ("in", "at", "near", "by", "on"),
    "walked": ("to", "from", "into", "in", "near", "by", "over"),
    "ran": ("to", "from", "into", "in", "over", "near"),
    "jumped": ("on", "into", "over", "in"),
}
LASTING = ("sat", "slept", "rested", "stood", "waited", "played", "sang")  # fit "... all day"
PEOPLE_ONLY = ("sang",)

PORTABLE = tuple(o for o in OBJECTS if o not in ("car", "boat", "chair", "table"))
FOOD = ("apple", "bread", "cake")
TRANSITIVE = {  # verb: the objects it takes
    "saw": OBJECTS,
    "found": OBJECTS,
    "liked": OBJECTS,
    "wanted": OBJECTS,
    "took": PORTABLE,
    "held": PORTABLE,
    "carried": PORTABLE,
    "dropped": PORTABLE,
    "lost": PORTABLE,
    "ate": FOOD,
    "washed": ("cup", "car", "boat", "chair", "table", "hat", "shoe", "bag", "apple", "lamp"),
    "bought": tuple(o for o in OBJECTS if o not in ("letter", "coin", "money")),
    "opened": ("box", "book", "letter", "bag", "car"),
    "made": ("cake", "bread", "box", "hat", "chair", "table", "cup", "boat"),
    "read": ("book", "letter"),
}
ANIMAL_TRANSITIVE = ("saw", "found", "ate", "liked", "wanted", "took", "carried", "dropped", "lost", "held")
LASTING_TRANSITIVE = ("held", "carried", "read", "washed")
HIDING = ("saw", "found", "lost", "dropped")  # "found the key under the bed", not "made the bread under the bed"
MOVING_TRANSITIVE = {"took": ("to", "from", "into"), "carried": ("to", "from", "into"), "dropped": ("into",)}


def place_phrase(r: random.Random, prepositions: tuple[str, ...]) -> list[str]:
    prep = r.choice(prepositions)
    return [prep, "the", r.choice(PLACES_FOR[prep])]


def sentence(r: random.Random, n_words: int) -> str:
    """A plain sentence of exactly n_words words (1..12), every word one piece of the vocabulary (one token)."""
    if not 1 <= n_words <= 12:
        raise ValueError("n_words must be in 1..12")
    animal = r.random() < 0.4
    subj = r.choice(LAND_ANIMALS if animal else PEOPLE[:-2])  # "she"/"he" take no article
    adj = r.choice([a for a in (ANIMAL_ADJECTIVES if animal else PERSON_ADJECTIVES) if (subj, a) not in ODD_PAIRS])
    lasting = n_words in (8, 11, 12)  # the templates that end on "all day"
    if n_words in (3, 4, 6, 8):
        verbs = [v for v in INTRANSITIVE if not (animal and v in PEOPLE_ONLY) and (v in LASTING or not lasting)]
        vi = r.choice(verbs)
        where = place_phrase(r, tuple(p for p in INTRANSITIVE[vi] if p in LOCATION or not lasting))
        return " ".join(
            {
                3: ["the", subj, vi],
                4: ["the", adj, subj, vi],
                6: ["the", subj, vi, *where],
                8: ["the", subj, vi, *where, "all", "day"],
            }[n_words]
        )
    if n_words <= 2:
        return subj if n_words == 1 else f"the {subj}"
    verbs = [
        v for v in TRANSITIVE if (v in ANIMAL_TRANSITIVE or not animal) and (v in LASTING_TRANSITIVE or not lasting)
    ]
    vt = r.choice(verbs)
    obj = r.choice(TRANSITIVE[vt])
    adj2 = r.choice([a for a in OBJECT_ADJECTIVES if a != adj])
    prepositions = LOCATION + (() if lasting else MOVING_TRANSITIVE.get(vt, ()))
    if vt not in HIDING:
        prepositions = tuple(p for p in prepositions if p != "under")
    where = place_phrase(r, prepositions)
    return " ".join(
        {
            5: ["the", subj, vt, "the", obj],
            7: ["the", adj, subj, vt, "the", adj2, obj],
            9: ["the", adj, subj, vt, "the", obj, *where],
            10: ["the", adj, subj, vt, "the", adj2, obj, *where],
            11: ["the", adj, subj, vt, "the", obj, *where, "all", "day"],
            12: ["the", adj, subj, vt, "the", adj2, obj, *where, "all", "day"],
        }[n_words]
    )
