"""A small English grammar that writes the small model's training sentences.

Every word comes from lexicon.py, so the word-level tokenizer never meets [UNK] here.
Everything is driven by one random.Random(seed): the same seed gives the same corpus,
the same split and the same next-sentence pairs on every machine.

The grammar keeps word choices meaningful (people read books, ducks swim in lakes, the
hungry eat bread) so a fill-mask prediction has something to learn, and it writes the
"bank" pairs: two sentences identical up to and including "bank", told apart only by
the words after it, which only a bidirectional model can use.
"""

from __future__ import annotations

import random
from typing import NamedTuple

from .lexicon import ADJECTIVES, ANIMALS, OBJECTS, PEOPLE, PLACES, VERBS_INTRANSITIVE, VERBS_TRANSITIVE

DEFAULT_SIZE = 24_000  # sentences generated; duplicates are dropped afterwards
DEFAULT_SEED = 0
HELD_OUT_FRACTION = 0.1

PRONOUNS = ("she", "he")
PERSONS = tuple(p for p in PEOPLE if p not in PRONOUNS)
HE_NOUNS = ("man", "boy", "king", "father", "brother")
SHE_NOUNS = ("woman", "girl", "queen", "mother", "sister")
PLURALS = {"boys": "they", "girls": "they", "cats": "they", "dogs": "they", "birds": "they"}

PERSON_ADJ = ("old", "young", "happy", "sad", "tired", "hungry", "quiet", "loud", "little")
ANIMAL_ADJ = ("big", "small", "old", "young", "happy", "sad", "tired", "hungry", "quiet", "loud", "little")
ANIMAL_ADJ += ("brown", "white", "black")
OBJECT_ADJ = ("big", "small", "old", "new", "red", "blue", "green", "brown", "white", "black", "little")
MOOD_ADJ = ("happy", "sad", "tired", "hungry", "quiet", "loud", "cold", "warm")
THING_ADJ = ("big", "small", "old", "new", "red", "blue", "green", "brown", "white", "black", "warm", "cold")

# Where things rest, and where they happen.
SURFACES = ("mat", "floor", "bed", "sofa", "roof", "chair", "table", "hill", "road", "beach", "field", "boat")
INSIDE = ("garden", "house", "kitchen", "park", "field", "school", "shop", "forest", "farm", "town", "boat", "car")
DESTINATIONS = ("park", "garden", "house", "school", "shop", "road", "hill", "farm", "forest", "field", "kitchen")
DESTINATIONS += ("beach", "lake", "river", "town")
WATERS = ("lake", "river", "water")
SWIMMERS = ("fish", "duck", "frog", "dog", "horse", "boy", "girl", "man", "woman", "child", "bear")
SINGERS = ("bird", "girl", "boy", "woman", "man", "mother", "child", "queen", "king", "student", "teacher")
FOODS = ("bread", "cake", "apple", "fish")
READING = ("book", "letter")
SMALL_THINGS = ("ball", "book", "apple", "cup", "hat", "box", "key", "letter", "bag", "coin", "pen", "lamp", "shoe")
MADE = ("cake", "bread", "hat", "box", "chair", "table", "cup", "boat")
OPENED = ("box", "book", "letter", "bag")
WASHED = ("cup", "car", "hat", "shoe", "table", "chair", "boat", "bag")
BOUGHT = ("book", "apple", "bread", "cake", "hat", "car", "boat", "bag", "pen", "lamp", "shoe", "cup", "ball", "chair")
# Which objects each transitive verb takes; the rest take any object.
VERB_OBJECTS = {
    "ate": FOODS,
    "read": READING,
    "opened": OPENED,
    "made": MADE,
    "washed": WASHED,
    "bought": BOUGHT,
    "held": SMALL_THINGS,
    "carried": SMALL_THINGS + ("chair", "table"),
    "dropped": SMALL_THINGS,
    "lost": SMALL_THINGS + ("money",),
}
# Animals do not read, buy, wash, open or make things.
ANIMAL_VERBS = ("saw", "found", "ate", "liked", "wanted", "took", "carried", "dropped", "lost")
REST_VERBS = ("sat", "slept", "rested", "stood")
MOTION_VERBS = ("ran", "walked", "went", "came")
# "with ... friend" is listed twice: drawn twice as often as each time phrase.
TAILS = ("all day", "at night", "in the morning", "with {poss} friend", "with {poss} friend")

# The "bank" pairs: one left context, two right contexts.
BANK_RIVER = (
    "of the river",
    "of the river and fished",
    "and fished in the river",
    "and swam in the water",
    "of the lake",
    "of the river and sat near the water",
    "and sat by the water",
)
BANK_MONEY = (
    "and counted the money",
    "and paid the money",
    "and kept the money there",
    "and took the money home",
    "and counted {poss} money",
    "and paid {poss} money",
)

NOUNS = PERSONS + ANIMALS + OBJECTS + PLACES + ("bank", "water") + tuple(PLURALS)
VERBS = VERBS_INTRANSITIVE + VERBS_TRANSITIVE + ("went", "came", "counted", "fished", "swam", "paid", "kept")
# word -> part of speech, for the words an evaluation may hide (never function words).
CONTENT_WORDS: dict[str, str] = {
    **{w: "noun" for w in NOUNS},
    **{w: "verb" for w in VERBS},
    **{w: "adjective" for w in ADJECTIVES},
}


class Subject(NamedTuple):
    text: str  # "the old dog", "she"
    pronoun: str  # how a later clause refers back: it / he / she / they
    possessive: str  # its / his / her / their
    kind: str  # person / animal / plural / pronoun


class NSPPair(NamedTuple):
    sentence_a: str
    sentence_b: str
    is_next: bool


def _pronoun_for(noun: str, rng: random.Random) -> str:
    if noun in HE_NOUNS:
        return "he"
    if noun in SHE_NOUNS:
        return "she"
    return rng.choice(PRONOUNS)


def _possessive(pronoun: str) -> str:
    return {"he": "his", "she": "her", "it": "its", "they": "their"}[pronoun]


def _np(rng: random.Random, noun: str, adjectives: tuple[str, ...], p_adj: float = 0.3, det: str | None = None) -> str:
    """A noun phrase: determiner, sometimes an adjective, the noun. "a" becomes "an" before a vowel."""
    det = det or rng.choice(("the", "the", "a"))
    words = [rng.choice(adjectives), noun] if rng.random() < p_adj else [noun]
    if det == "a" and words[0][0] in "aeiou":
        det = "an"
    return " ".join([det, *words])


def _subject(rng: random.Random, kinds=("person", "animal", "plural", "pronoun"), nouns=None) -> Subject:
    if nouns is not None:
        noun = rng.choice(nouns)
        kind = "animal" if noun in ANIMALS else "person"
    else:
        kind = rng.choices(kinds, weights=[{"person": 4, "animal": 4, "plural": 1, "pronoun": 1}[k] for k in kinds])[0]
        if kind == "pronoun":
            p = rng.choice(PRONOUNS)
            return Subject(p, p, _possessive(p), kind)
        if kind == "plural":
            noun = rng.choice(tuple(PLURALS))
            return Subject(f"the {noun}", "they", "their", kind)
        noun = rng.choice(PERSONS if kind == "person" else ANIMALS)
    pron = _pronoun_for(noun, rng) if kind == "person" else "it"
    adjs = PERSON_ADJ if kind == "person" else ANIMAL_ADJ
    return Subject(_np(rng, noun, adjs, det=rng.choice(("the", "the", "the", "a"))), pron, _possessive(pron), kind)


def _object(rng: random.Random, verb: str | None = None, p_adj: float = 0.35) -> str:
    noun = rng.choice(VERB_OBJECTS.get(verb, OBJECTS))
    if noun == "money":
        return "the money"
    return _np(rng, noun, OBJECT_ADJ, p_adj, det=rng.choice(("the", "a")))


def _place_phrase(rng: random.Random) -> str:
    prep = rng.choice(("in", "on", "near", "under", "by", "behind"))
    place = rng.choice(SURFACES if prep == "on" else INSIDE if prep == "in" else PLACES)
    return f"{prep} the {place}"


# --- sentence templates: each takes the rng and returns one sentence -------------------------------


def _rest(rng):
    s = _subject(rng)
    verb = rng.choice(REST_VERBS)
    where = f"on the {rng.choice(SURFACES)}" if rng.random() < 0.65 else f"in the {rng.choice(INSIDE)}"
    tail = " " + rng.choice(TAILS).format(poss=s.possessive) if rng.random() < 0.15 else ""
    return f"{s.text} {verb} {where}{tail}"


def _motion(rng):
    s = _subject(rng)
    verb = rng.choice(MOTION_VERBS)
    r = rng.random()
    if r < 0.15:
        return f"{s.text} {verb} home"
    if r < 0.25 and verb in ("ran", "walked", "came"):
        return f"{s.text} {verb} from the {rng.choice(DESTINATIONS)}"
    prep = "into" if verb in ("ran", "walked") and rng.random() < 0.3 else "to"
    return f"{s.text} {verb} {prep} the {rng.choice(DESTINATIONS)}"


def _swim(rng):
    noun = rng.choice(SWIMMERS)
    subject = _np(rng, noun, ANIMAL_ADJ if noun in ANIMALS else PERSON_ADJ, 0.2, det="the")
    water = rng.choice(WATERS)
    return f"{subject} swam in the {water}" + (f" {rng.choice(TAILS[:3])}" if rng.random() < 0.2 else "")


def _transitive(rng):
    s = _subject(rng)
    animal = s.kind == "animal" or s.text in ("the cats", "the dogs", "the birds")
    verb = rng.choice(ANIMAL_VERBS if animal else VERBS_TRANSITIVE)
    if verb == "saw" and rng.random() < 0.5:
        obj = _np(rng, rng.choice(ANIMALS + PERSONS), ANIMAL_ADJ, 0.3, det=rng.choice(("the", "a")))
    elif (
        verb in ("ate", "bought", "lost", "held", "washed", "carried")
        and s.kind in ("pronoun", "person")
        and rng.random() < 0.3
    ):
        obj = f"{s.possessive} {rng.choice(VERB_OBJECTS[verb])}"
    else:
        obj = _object(rng, verb)
    where = f" {_place_phrase(rng)}" if rng.random() < 0.45 else ""
    return f"{s.text} {verb} {obj}{where}"


def _found_in(rng):
    # "the girl found a red ball in the garden"
    s = _subject(rng, kinds=("person", "pronoun", "animal"))
    verb = rng.choice(("found", "lost", "saw"))
    obj = _object(rng, "held", p_adj=0.6)
    return f"{s.text} {verb} {obj} in the {rng.choice(INSIDE)}"


def _predicate(rng):
    r = rng.random()
    if r < 0.6:
        s = _subject(rng, kinds=("person", "animal", "pronoun"))  # no "were" in the vocabulary: no plurals
        very = "very " if rng.random() < 0.2 else ""
        return f"{s.text} was {very}{rng.choice(MOOD_ADJ)}"
    noun = rng.choice(OBJECTS[:-4] + PLACES)  # not money, pen, lamp, shoe: "the money was blue" reads oddly
    return f"the {noun} was {rng.choice(THING_ADJ)}"


def _there(rng):
    noun = rng.choice(ANIMALS + OBJECTS + PERSONS)
    adjs = OBJECT_ADJ if noun in OBJECTS else ANIMAL_ADJ if noun in ANIMALS else PERSON_ADJ
    return f"there was {_np(rng, noun, adjs, 0.5, 'a')} {_place_phrase(rng)}"


def _play(rng):
    s = _subject(rng, kinds=("person", "animal", "plural"))
    verb = rng.choice(("played", "sang", "jumped", "waited"))
    if verb == "played" and rng.random() < 0.5:
        toy = _np(rng, rng.choice(("ball", "dog", "cat", "box", "friend")), OBJECT_ADJ, 0.3, det="the")
        if toy.endswith("friend"):
            toy = f"{s.possessive} friend"
        return f"{s.text} played with {toy} in the {rng.choice(('park', 'garden', 'field', 'house', 'school'))}"
    if verb == "jumped" and rng.random() < 0.5:
        return f"{s.text} jumped over the {rng.choice(('box', 'chair', 'table', 'road', 'ball', 'boat', 'dog', 'cat'))}"
    if verb == "sang":
        s = _subject(rng, nouns=SINGERS)
    return f"{s.text} {verb} {_place_phrase(rng)}"


def _because(rng):
    s = _subject(rng, kinds=("person", "animal"))
    p = s.pronoun
    food = rng.choice(FOODS)
    choices = (
        f"{s.text} was hungry so {p} ate the {food}",
        f"{s.text} ate the {food} because {p} was hungry",
        f"{s.text} was tired so {p} slept on the {rng.choice(('bed', 'sofa', 'mat', 'floor'))}",
        f"{s.text} slept on the {rng.choice(('bed', 'sofa', 'mat', 'floor'))} because {p} was tired",
        f"{s.text} was cold so {p} sat near the lamp",
        f"{s.text} was happy because {p} found {s.possessive} {rng.choice(SMALL_THINGS)}",
        f"{s.text} was sad because {p} lost {s.possessive} {rng.choice(SMALL_THINGS)}",
    )
    return rng.choice(choices)


def _bank_prefix(rng) -> tuple[str, str]:
    """'she went to the bank' and the possessive that fits its subject."""
    s = _subject(rng, kinds=("person", "pronoun"))
    return f"{s.text} {rng.choice(MOTION_VERBS)} to the bank", s.possessive


def _bank(rng):
    r = rng.random()
    if r < 0.2:
        s = _subject(rng, kinds=("person", "pronoun", "animal"))
        return f"{s.text} {rng.choice(('sat', 'slept', 'rested', 'stood', 'fished'))} on the bank of the river"
    prefix, poss = _bank_prefix(rng)
    if rng.random() < 0.5:
        return f"{prefix} {rng.choice(BANK_RIVER)}"
    return f"{prefix} {rng.choice(BANK_MONEY).format(poss=poss)}"


TEMPLATES = (
    (_rest, 16),
    (_motion, 12),
    (_swim, 4),
    (_transitive, 22),
    (_found_in, 8),
    (_predicate, 8),
    (_there, 6),
    (_play, 8),
    (_because, 8),
    (_bank, 8),
)


def generate_sentences(n: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[str]:
    """n sentences drawn from the grammar, duplicates included, lower case, no final full stop."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = random.Random(seed)
    funcs = [f for f, _ in TEMPLATES]
    weights = [w for _, w in TEMPLATES]
    return [rng.choices(funcs, weights=weights)[0](rng) for _ in range(n)]


def build_corpus(n: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED) -> list[str]:
    """The distinct sentences among n generated ones, in the order first generated."""
    return list(dict.fromkeys(generate_sentences(n, seed)))


def split_corpus(
    sentences: list[str], held_out_fraction: float = HELD_OUT_FRACTION, seed: int = DEFAULT_SEED
) -> tuple[list[str], list[str]]:
    """(train, held_out): disjoint, every distinct sentence in exactly one of them."""
    if not 0.0 < held_out_fraction < 1.0:
        raise ValueError(f"held_out_fraction must be in (0, 1), got {held_out_fraction}")
    distinct = list(dict.fromkeys(sentences))
    order = list(range(len(distinct)))
    random.Random(seed).shuffle(order)
    n_held = max(1, round(held_out_fraction * len(distinct)))
    held = set(order[:n_held])
    return [s for i, s in enumerate(distinct) if i not in held], [s for i, s in enumerate(distinct) if i in held]


def corpus_and_split(
    n: int = DEFAULT_SIZE, seed: int = DEFAULT_SEED, held_out_fraction: float = HELD_OUT_FRACTION
) -> tuple[list[str], list[str]]:
    """The standard (train, held_out) sentences the small model is trained and evaluated on."""
    return split_corpus(build_corpus(n, seed), held_out_fraction, seed)


def bank_pairs(n: int = 20, seed: int = DEFAULT_SEED) -> list[tuple[str, str]]:
    """(river sentence, money sentence) pairs with the same words up to and including "bank"."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        prefix, poss = _bank_prefix(rng)
        pairs.append((f"{prefix} {rng.choice(BANK_RIVER)}", f"{prefix} {rng.choice(BANK_MONEY).format(poss=poss)}"))
    return pairs


# --- next-sentence prediction -------------------------------------------------------------------------


def _story(rng: random.Random) -> tuple[str, str, Subject]:
    """A two-sentence story: B only makes sense after A."""
    kind = rng.choice(("person", "animal"))
    s = _subject(rng, kinds=(kind,))
    p, poss = s.pronoun, s.possessive
    # B refers back to A by pronoun or by repeating A's noun phrase.
    ref = p if rng.random() < 0.6 else s.text.replace("a ", "the ", 1) if s.text.startswith("a ") else s.text
    obj = rng.choice(SMALL_THINGS)
    animal_stories = (
        (f"{s.text} was hungry", f"{ref} ate the {rng.choice(FOODS)}"),
        (f"{s.text} was tired", f"{ref} slept on the {rng.choice(('mat', 'floor', 'bed', 'sofa'))}"),
        (f"{s.text} was cold", f"{ref} sat near the lamp"),
        (f"{s.text} was happy", f"{ref} played with the ball"),
        (f"{s.text} ran to the {rng.choice(WATERS[:2])}", f"{ref} swam in the water"),
    )
    person_stories = animal_stories[:4] + (
        (f"{s.text} found {'an' if obj[0] in 'aeiou' else 'a'} {obj}", f"{ref} took it home"),
        (f"{s.text} lost {poss} {obj}", f"{ref} was sad"),
        (f"{s.text} went to the bank", f"{ref} counted the money"),
        (f"{s.text} went to the shop", f"{ref} bought a {rng.choice(BOUGHT[1:])}"),
        (f"{s.text} walked to the river", f"{ref} fished all day"),
        (f"{s.text} opened the box", f"there was {'an' if obj[0] in 'aeiou' else 'a'} {obj} in it"),
        (f"{s.text} read the letter", f"{ref} was happy"),
    )
    a, b = rng.choice(animal_stories if kind == "animal" else person_stories)
    return a, b, s


def _content_nouns(sentence: str) -> set[str]:
    return {w for w in sentence.split() if CONTENT_WORDS.get(w) == "noun"}


def nsp_pairs(n: int = 1000, seed: int = DEFAULT_SEED, corpus: list[str] | None = None) -> list[NSPPair]:
    """n pairs (sentence_a, sentence_b, is_next), exactly half of them real continuations, shuffled.

    A random B comes from the corpus and is redrawn if it could still read as a continuation:
    if it starts with A's own pronoun, or names a noun A names.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = random.Random(seed)
    pool = corpus if corpus is not None else build_corpus(4000, seed + 1)
    if not pool:
        raise ValueError("the corpus to draw random sentences from is empty")
    pairs = []
    for i in range(n):
        a, b, s = _story(rng)
        if i < n // 2:
            pairs.append(NSPPair(a, b, True))
            continue
        nouns_a = _content_nouns(a)
        for _ in range(100):
            cand = rng.choice(pool)
            if cand != b and cand.split()[0] != s.pronoun and not (nouns_a & _content_nouns(cand)):
                break
        pairs.append(NSPPair(a, cand, False))
    rng.shuffle(pairs)
    return pairs
