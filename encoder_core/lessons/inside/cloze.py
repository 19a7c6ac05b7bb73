"""The input: one sentence, one [MASK] asked about, made usable whatever the student typed."""

from __future__ import annotations

from dataclasses import dataclass

from ...model.tokenizer import MASK, SPECIAL_TOKENS
from ..masking import mask_word

MAX_TOKENS = 64  # word pieces, [CLS] and [SEP] included: knockouts cost one forward per token
DEFAULT_SENTENCE = "the cat sat on the [MASK] because it was tired"  # 12 tokens with [CLS] and [SEP]


@dataclass
class Cloze:
    """What the lesson runs on: the sentence's ids, and which [MASK] is asked about."""

    text: str  # the text encoded (a word hidden when none was typed)
    ids: list[int]
    tokens: list[str]
    position: int  # the [MASK] asked about, an index into tokens
    notices: list[str]  # what was changed, in the student's terms
    fallback: bool = False  # True: the input could not be used, this is DEFAULT_SENTENCE


def maskable_words(tokenizer, text: str) -> list[str]:
    """The words of text as the tokenizer splits them (a [MASK] typed counts as a word)."""
    return tokenizer.split(text)


def default_word_to_hide(tokenizer, text: str) -> int:
    """Which word to hide when no [MASK] was typed (1-based, as masking.mask_word counts): the last word that
    is one whole vocabulary entry of letters, the likeliest to be a content word; else the last word."""
    words = maskable_words(tokenizer, text)
    for k in range(len(words), 0, -1):
        w = words[k - 1].lower()
        if w.isalpha() and w in tokenizer.token_to_id and w.upper() not in SPECIAL_TOKENS:
            return k
    return len(words)


def prepare_cloze(tokenizer, text: str, hide: int = 0, max_tokens: int = MAX_TOKENS) -> Cloze:
    """The sentence made usable: exactly one [MASK] asked about, at most max_tokens tokens, a word to knock out.

    hide: with no [MASK] typed, the word (1-based) to hide; 0 picks default_word_to_hide. Input that cannot be
    used (no word at all, the [MASK] cut off, nothing but special tokens) gives DEFAULT_SENTENCE with a notice.
    """
    notices: list[str] = []
    words = maskable_words(tokenizer, text)
    if not words:
        return _fallback(tokenizer, "The sentence has no words", max_tokens)
    if MASK not in [w.upper() for w in words]:
        k = hide if 1 <= hide <= len(words) else default_word_to_hide(tokenizer, text)
        notices.append(f"There was no [MASK], so word {k} (“{words[k - 1]}”) is hidden and the model asked for it.")
        text = mask_word(tokenizer, text, k)
    enc = tokenizer.encode(text, max_length=max_tokens, truncate=True)
    masks = [i for i, t in enumerate(enc.tokens) if t == MASK]
    if enc.truncated:
        notices.append(f"The sentence was cut to its first {max_tokens} tokens ({enc.truncated} cut).")
    if not masks:
        return _fallback(tokenizer, f"The [MASK] falls after the first {max_tokens} tokens", max_tokens)
    if len(masks) > 1:
        notices.append(
            f"The sentence has {len(masks)} [MASK]s: the lesson asks about the first (token {masks[0]}); "
            "the others stay hidden from the model."
        )
    words_left = [i for i, t in enumerate(enc.tokens) if t not in SPECIAL_TOKENS]
    if not words_left:
        why = "The sentence holds only special tokens, so there is no word to knock out"
        return _fallback(tokenizer, why, max_tokens)
    return Cloze(text, list(enc.ids), list(enc.tokens), masks[0], notices)


def _fallback(tokenizer, why: str, max_tokens: int) -> Cloze:
    enc = tokenizer.encode(DEFAULT_SENTENCE, max_length=max_tokens, truncate=True)
    notice = f"{why}: the lesson shows the example “{DEFAULT_SENTENCE}” instead."
    return Cloze(DEFAULT_SENTENCE, list(enc.ids), list(enc.tokens), enc.tokens.index(MASK), [notice], True)
