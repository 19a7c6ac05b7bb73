"""Pooling: [CLS] or the mean of the real tokens, and which sentence is closest to the student's."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...finetune.tasks import MAX_LENGTH
from ...model.output_heads import cls_pool, mean_pool

# Pairs written for this lesson: a sentence, a paraphrase of it, and a sentence that shares most of
# its words but means something else.
PARAPHRASES = (
    ("the cat sat on the mat", "a cat was sitting on the rug", "the cat chased the dog off the mat"),
    ("she bought a new car yesterday", "yesterday she purchased a new vehicle", "she sold her old car yesterday"),
    (
        "the meeting was cancelled because of the storm",
        "the storm led them to call off the meeting",
        "the storm started after the meeting",
    ),
    ("he is learning to play the piano", "he is taking piano lessons", "he is learning to fix the piano"),
    ("the children are playing in the park", "kids are having fun in the park", "the children are leaving the park"),
    (
        "the restaurant was too expensive for us",
        "we could not afford that restaurant",
        "the restaurant was too far from us",
    ),
    (
        "my phone battery died this morning",
        "my phone ran out of charge this morning",
        "my phone was stolen this morning",
    ),
    ("the train arrived late again", "once more the train was delayed", "the train left early again"),
    ("she won the chess tournament", "she came first in the chess competition", "she lost the chess tournament"),
    ("the river flooded the village", "the village was flooded by the river", "the village is next to the river"),
    ("it is raining heavily outside", "there is a downpour outside", "it stopped raining outside"),
    ("the doctor told him to rest", "his doctor advised him to take it easy", "he told the doctor to rest"),
)
PAIR_KINDS = ("paraphrase", "same words, other meaning", "unrelated")


@dataclass
class PoolingRanking:
    pairs: list[tuple[str, str, str]]  # (sentence, other sentence, kind)
    cosine: dict[str, list[float]]  # pooling ("cls", "mean") -> one cosine per pair
    rank_accuracy: dict[str, float]  # fraction of (paraphrase pair, other pair) orderings put right
    retrieval_top1: dict[str, float]  # each sentence's own paraphrase ranked first among all the paraphrases
    beats_same_words: dict[str, float]  # each sentence's paraphrase closer than its same-words, other-meaning pair


def pooling_pairs(triples=PARAPHRASES) -> list[tuple[str, str, str]]:
    n = len(triples)
    return (
        [(a, p, PAIR_KINDS[0]) for a, p, _ in triples]
        + [(a, d, PAIR_KINDS[1]) for a, _, d in triples]
        + [(triples[i][0], triples[(i + 1) % n][1], PAIR_KINDS[2]) for i in range(n)]
    )


def rank_accuracy(cosines: list[float], kinds: list[str]) -> float:
    """Of every (paraphrase pair, non-paraphrase pair) combination, the fraction where the paraphrase scores higher."""
    pos = [c for c, k in zip(cosines, kinds) if k == PAIR_KINDS[0]]
    neg = [c for c, k in zip(cosines, kinds) if k != PAIR_KINDS[0]]
    return sum(p > q for p in pos for q in neg) / (len(pos) * len(neg))


@torch.inference_mode()
def pooling_ranking(pretrained, triples=PARAPHRASES) -> PoolingRanking:
    """Raw [CLS] vectors against mean pooling (what all-MiniLM-L6-v2 was trained with) as sentence vectors."""
    tok = pretrained.tokenizer
    texts = list(dict.fromkeys(s for t in triples for s in t))
    batch = tok.pad([tok.encode(t, max_length=MAX_LENGTH, truncate=True) for t in texts])
    hidden = pretrained.model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False).hidden
    vectors = {"cls": cls_pool(hidden), "mean": mean_pool(hidden, batch.key_padding_mask)}
    index = {t: i for i, t in enumerate(texts)}
    pairs = pooling_pairs(triples)
    kinds = [k for _, _, k in pairs]
    cosine, ranked, top1, beats = {}, {}, {}, {}
    for name, v in vectors.items():
        unit = torch.nn.functional.normalize(v, dim=-1)
        cosine[name] = [float(unit[index[a]] @ unit[index[b]]) for a, b, _ in pairs]
        ranked[name] = rank_accuracy(cosine[name], kinds)
        anchors = unit[[index[a] for a, _, _ in triples]]
        paraphrases = unit[[index[p] for _, p, _ in triples]]
        top1[name] = float(((anchors @ paraphrases.T).argmax(-1) == torch.arange(len(triples))).float().mean())
        n = len(triples)
        beats[name] = sum(p > q for p, q in zip(cosine[name][:n], cosine[name][n : 2 * n])) / n
    return PoolingRanking(pairs, cosine, ranked, top1, beats)


# ---- which sentence is closest to the student's: mean-pooled all-MiniLM-L6-v2 ------------------------------

# Everyday sentences on many topics, written for this question; none of them is among PARAPHRASES (whose
# cosines the pooling section shows), so nothing drawn there answers the question.
CLOSEST_CANDIDATES = (
    "the puppy looked sad and lonely",
    "a kitten chased a ball of wool",
    "we cooked pasta for dinner",
    "the bakery sells fresh bread every morning",
    "a storm brought heavy rain and wind",
    "the sun is shining on the beach",
    "the bus to the airport was delayed",
    "he drove his new truck to work",
    "our team won the football match",
    "she practises the violin every day",
    "the nurse gave him some medicine",
    "the students are studying for their exams",
    "my laptop stopped working again",
    "they bought a small house by the lake",
    "the shop was closed on sunday",
    "grandmother told the children a story",
    "the garden is full of flowers",
    "the police caught the thief",
    "the kids ran around the playground",
    "he reads a novel before bed",
)
# The closest candidate is asked about only when it beats every other option offered by CLOSEST_MARGIN in
# cosine (candidates nearer than that to it are left out: no coin toss), and only when its own cosine is at
# least CLOSEST_RELATED: below that, on this model, no candidate is about what the sentence is about.
CLOSEST_MARGIN = 0.1
CLOSEST_RELATED = 0.25
CLOSEST_OPTIONS = 4


@dataclass(frozen=True)
class ClosestSentence:
    sentence: str
    options: tuple[str, ...]  # the closest candidate first, then the closest of those trailing it by the margin
    cosine: dict[str, tuple[float, ...]]  # pooling ("mean", "cls") -> per option, its cosine with the sentence
    shared: tuple[tuple[str, ...], ...]  # per option: the words it shares with the sentence, in its order
    left_out: tuple[str, ...] = ()  # candidates within the margin of the closest: not offered
    answer: int = 0  # the option whose mean-pooled vector is closest

    @property
    def gap(self) -> float:
        """How far the closest option's mean-pooled cosine is ahead of the next option's."""
        mean = self.cosine["mean"]
        return mean[self.answer] - max(c for i, c in enumerate(mean) if i != self.answer)


def shared_words(text: str, other: str) -> tuple[str, ...]:
    """The words of `other` that `text` also has, each once, in other's order (case ignored)."""
    mine = set(text.lower().split())
    return tuple(dict.fromkeys(w for w in other.lower().split() if w in mine and w.isalpha()))


def closest_sentence(
    pretrained,
    sentence: str,
    candidates=CLOSEST_CANDIDATES,
    *,
    margin: float = CLOSEST_MARGIN,
    related: float = CLOSEST_RELATED,
    n_options: int = CLOSEST_OPTIONS,
) -> ClosestSentence | None:
    """Which candidate's mean-pooled vector is closest (cosine) to the sentence's, with the options to offer:
    the closest, then the next closest of those at least `margin` behind it. None when the closest is below
    `related`, or fewer than two options are left (no fair question on this sentence)."""
    from ...pretrained.minilm import sentence_embeddings  # here: the lesson runs without MiniLM installed

    pool = [c for c in candidates if c.strip().lower() != sentence.strip().lower()]
    vectors = {p: sentence_embeddings(pretrained, [sentence, *pool], pooling=p) for p in ("mean", "cls")}
    cosine = {p: (v[1:] @ v[0]).tolist() for p, v in vectors.items()}
    order = sorted(range(len(pool)), key=lambda i: -cosine["mean"][i])
    best = order[0]
    if cosine["mean"][best] < related:
        return None
    trailing = [i for i in order[1:] if cosine["mean"][i] <= cosine["mean"][best] - margin]
    picked = [best, *trailing[: n_options - 1]]
    if len(picked) < 2:
        return None
    return ClosestSentence(
        sentence,
        tuple(pool[i] for i in picked),
        {p: tuple(cosine[p][i] for i in picked) for p in cosine},
        tuple(shared_words(sentence, pool[i]) for i in picked),
        tuple(pool[i] for i in order[1:] if cosine["mean"][i] > cosine["mean"][best] - margin),
    )


def closest_for_any(pretrained, texts) -> ClosestSentence | None:
    """closest_sentence of the first text that allows a fair question (texts: the student's, in order)."""
    for text in dict.fromkeys(t for t in texts if t and t.strip()):
        found = closest_sentence(pretrained, text)
        if found is not None:
            return found
    return None
