"""Tokenizers with BERT's special tokens and input format: [CLS] A [SEP] (B [SEP]).

WordPieceTokenizer is what every model in the lab reads with: BERT's uncased English
vocabulary of 30,522 word pieces (shipped in encoder_core/vocab/), so any English sentence
becomes known pieces and only characters outside the vocabulary can become [UNK].
WordTokenizer is the grammar's own 191 words, kept for the leakage experiment, which trains
a tiny model from scratch on the grammar in seconds.

Special tokens typed by hand, in any case ("[MASK]", "[mask]"), are kept as those tokens:
that is how a student asks for a fill-mask prediction. Whatever becomes [UNK] is reported,
so a page can show exactly what the model sees.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import torch
from tokenizers import Tokenizer
from tokenizers.implementations import BertWordPieceTokenizer

from ..data.lexicon import SPECIAL_TOKENS, default_vocabulary

PAD, UNK, CLS, SEP, MASK = SPECIAL_TOKENS
_SPECIAL_RE = "|".join(re.escape(t.lower()) for t in SPECIAL_TOKENS)
# A special token, or a run of letters/digits/apostrophe-free word chars, or one other symbol.
_TOKEN_RE = re.compile(rf"{_SPECIAL_RE}|[^\W_]+|[^\w\s]|_", re.UNICODE)
# A special token typed in any case; upper-cased in place (same length, so offsets still hold).
_TYPED_SPECIAL_RE = re.compile(_SPECIAL_RE, re.IGNORECASE)

# bert-base-uncased's vocabulary, the one all-MiniLM-L6-v2 reads with (Apache-2.0, see NOTICE).
ENGLISH_VOCAB = Path(__file__).resolve().parents[1] / "vocab" / "bert-base-uncased-vocab.txt"


@dataclass
class Encoding:
    """One sequence: tokens as the model sees them, their ids, and segment ids (0 = A, 1 = B)."""

    tokens: list[str]
    ids: list[int]
    segments: list[int]
    words: list[str]  # the text piece each token came from ("" for added specials)
    unknown: list[str] = field(default_factory=list)  # words that became [UNK]
    truncated: int = 0  # how many tokens were cut to fit

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def split_words(self) -> list[tuple[str, list[str]]]:
        """The words cut into several word pieces, each with its pieces, in order: ("doormat", ["door", "##mat"]).

        WordPiece marks a piece that continues a word with ##; a word tokenizer never splits, so this is empty.
        """
        groups: list[tuple[str, list[str]]] = []
        for i, token in enumerate(self.tokens):
            continues = token.startswith("##") and i > 0 and self.words[i - 1] != "" and groups
            if continues:
                groups[-1][1].append(token)
            else:
                groups.append((self.words[i], [token]))
        return [(word, pieces) for word, pieces in groups if len(pieces) > 1]


@dataclass
class Batch:
    """Sequences padded at the end to one width. key_padding_mask: True = ignore (PyTorch's convention)."""

    ids: torch.Tensor  # (B, T) long
    segments: torch.Tensor  # (B, T) long
    key_padding_mask: torch.Tensor  # (B, T) bool
    tokens: list[list[str]]
    lengths: list[int]


def clean_text(text: str) -> str:
    """Normalise what a student typed: NFKC, no control or zero-width characters, lower case."""
    text = unicodedata.normalize("NFKC", str(text))
    # Whitespace controls (tab, newline) separate words; other controls and zero-width
    # characters are dropped, not spaced, so "ca\u200bt" stays one word (as BERT does).
    kept = [" " if ch.isspace() else "" if unicodedata.category(ch)[0] == "C" else ch for ch in text]
    return "".join(kept).lower()


class WordTokenizer:
    def __init__(self, vocabulary: list[str] | None = None):
        vocab = list(vocabulary) if vocabulary is not None else default_vocabulary()
        if vocab[: len(SPECIAL_TOKENS)] != list(SPECIAL_TOKENS):
            raise ValueError(f"vocabulary must start with the special tokens {SPECIAL_TOKENS}")
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocabulary has duplicate entries")
        self.vocab = vocab
        self.token_to_id = {tok: i for i, tok in enumerate(vocab)}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = range(len(SPECIAL_TOKENS))

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def special_ids(self) -> list[int]:
        return list(range(len(SPECIAL_TOKENS)))

    def split(self, text: str) -> list[str]:
        """Lower-case and split into words and single punctuation marks."""
        pieces = _TOKEN_RE.findall(clean_text(text))
        return [p.upper() if p.upper() in SPECIAL_TOKENS else p for p in pieces]

    def _to_ids(self, words: list[str]) -> tuple[list[str], list[int], list[str]]:
        tokens, ids, unknown = [], [], []
        for w in words:
            if w in self.token_to_id:
                tokens.append(w)
                ids.append(self.token_to_id[w])
            else:
                tokens.append(UNK)
                ids.append(self.unk_id)
                unknown.append(w)
        return tokens, ids, unknown

    def encode(
        self, text_a: str, text_b: str | None = None, *, max_length: int | None = None, truncate: bool = False
    ) -> Encoding:
        """[CLS] A [SEP] (B [SEP]). Segment A = [CLS] + A + its [SEP]; segment B = B + the final [SEP].

        Longer than max_length: ValueError, unless truncate=True, which cuts the longer
        sentence first (as BERT's pipelines do) and records how many tokens were cut.
        """
        words_a = self.split(text_a)
        words_b = self.split(text_b) if text_b is not None else None
        n_special = 2 if words_b is None else 3
        cut = 0
        if max_length is not None:
            if max_length < n_special:
                raise ValueError(f"max_length must be at least {n_special}, got {max_length}")
            total = len(words_a) + len(words_b or []) + n_special
            if total > max_length:
                if not truncate:
                    raise ValueError(
                        f"input has {total} tokens, more than max_length={max_length}; pass truncate=True to cut it"
                    )
                cut = total - max_length
                for _ in range(cut):
                    if words_b is not None and len(words_b) > len(words_a):
                        words_b.pop()
                    else:
                        words_a.pop()
        toks_a, ids_a, unk_a = self._to_ids(words_a)
        tokens = [CLS] + toks_a + [SEP]
        ids = [self.cls_id] + ids_a + [self.sep_id]
        words = [""] + words_a + [""]
        segments = [0] * len(ids)
        unknown = list(unk_a)
        if words_b is not None:
            toks_b, ids_b, unk_b = self._to_ids(words_b)
            tokens += toks_b + [SEP]
            ids += ids_b + [self.sep_id]
            words += words_b + [""]
            segments += [1] * (len(ids_b) + 1)
            unknown += unk_b
        return Encoding(tokens, ids, segments, words, unknown, cut)

    def pad(self, encodings: list[Encoding], *, extra_pads: int = 0) -> Batch:
        """Pad at the end to the longest length (+ extra_pads) and build the key padding mask."""
        return pad_encodings(encodings, self.pad_id, PAD, extra_pads=extra_pads)

    def decode(self, ids) -> list[str]:
        out = []
        for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
            if not 0 <= int(i) < self.vocab_size:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {self.vocab_size})")
            out.append(self.vocab[int(i)])
        return out


class WordPieceTokenizer:
    """BERT's WordPiece tokenizer (a tokenizer.json, or a vocab.txt), with WordTokenizer's interface.

    A tokenizer.json may fix padding and truncation (MiniLM's at 128 tokens); both are turned
    off, because padding is done per batch by pad() and truncation here records what it cut.
    """

    def __init__(self, path: Path | str | None = None, *, tokenizer: Tokenizer | None = None):
        if (path is None) == (tokenizer is None):
            raise ValueError("give either the path of a tokenizer.json or a tokenizers.Tokenizer")
        self.tokenizer = Tokenizer.from_file(str(path)) if tokenizer is None else tokenizer
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        ids = {name: self.tokenizer.token_to_id(name) for name in SPECIAL_TOKENS}
        missing = [name for name, i in ids.items() if i is None]
        if missing:
            raise ValueError(f"{path or 'the tokenizer'} has no {', '.join(missing)} token")
        self.pad_id, self.unk_id, self.cls_id = ids[PAD], ids[UNK], ids[CLS]
        self.sep_id, self.mask_id = ids[SEP], ids[MASK]
        self.pad_token = PAD
        by_id = sorted((i, token) for token, i in self.tokenizer.get_vocab(with_added_tokens=True).items())
        if [i for i, _ in by_id] != list(range(len(by_id))):
            raise ValueError(f"{path or 'the tokenizer'}: token ids are not 0..{len(by_id) - 1}")
        self.vocab = [token for _, token in by_id]  # id -> token, as WordTokenizer.vocab
        self.token_to_id = {token: i for i, token in by_id}

    @classmethod
    def from_vocab(cls, path: Path | str) -> WordPieceTokenizer:
        """From a vocab.txt (one piece per line, its line number its id), with BERT's uncased rules:
        clean the text, split CJK characters, lower-case, split on spaces and punctuation, WordPiece."""
        entries = set(Path(path).read_text(encoding="utf-8").split("\n"))
        missing = [name for name in SPECIAL_TOKENS if name not in entries]
        if missing:  # checked here: the implementation would quietly append them as new ids
            raise ValueError(f"{path} has no {', '.join(missing)} token")
        bert = BertWordPieceTokenizer(str(path), lowercase=True, clean_text=True, handle_chinese_chars=True)
        # The implementation knows [CLS]/[SEP] and so on as vocabulary entries; registering them as
        # special tokens makes a typed "[MASK]" one token, as in a tokenizer.json.
        bert._tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
        return cls(tokenizer=bert._tokenizer)

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def special_ids(self) -> list[int]:
        """[PAD], [UNK], [CLS], [SEP], [MASK], in WordTokenizer's order."""
        return [self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id]

    def _pieces(self, text: str):
        return self.tokenizer.encode(text, add_special_tokens=False)

    def split(self, text: str) -> list[str]:
        """The words as the tokenizer splits them (before WordPiece), as typed; specials upper-cased."""
        return [word for word, _ in self.split_words(text)]

    def split_words(self, text: str) -> list[tuple[str, list[str]]]:
        """Each word as typed, with the word pieces it became: ("unbelievably", ["un", "##bel", ...])."""
        text = typed_specials(text)
        enc = self._pieces(text)
        groups: list[list] = []  # [start char, pieces, end char]
        last = None
        for token, word, (start, end) in zip(enc.tokens, enc.word_ids, enc.offsets):
            if word is not None and word == last:
                groups[-1][1].append(token)
                groups[-1][2] = end
            else:
                groups.append([start, [token], end])
            last = word
        return [(text[start:end], pieces) for start, pieces, end in groups]

    def encode(
        self, text_a: str, text_b: str | None = None, *, max_length: int | None = 512, truncate: bool = True
    ) -> Encoding:
        """[CLS] A [SEP] (B [SEP]); segment ids 0 for [CLS] A [SEP], 1 for B [SEP].

        Longer than max_length: cut the longer sentence first, a token at a time (as BERT's
        pipelines do), and record how many tokens were cut; ValueError if truncate=False.
        max_length=None: no cut at all (to show what a cap would have to cut).
        words[i] is the whole word token i came from, as typed ("" for [CLS] and [SEP]).
        """
        texts = [typed_specials(text_a)] + ([] if text_b is None else [typed_specials(text_b)])
        parts = [self._pieces(t) for t in texts]
        n_special = len(texts) + 1
        if max_length is not None and max_length < n_special:
            raise ValueError(f"max_length must be at least {n_special}, got {max_length}")
        lengths = [len(p.ids) for p in parts]
        total = sum(lengths) + n_special
        cut = 0 if max_length is None else max(0, total - max_length)
        if cut and not truncate:
            raise ValueError(
                f"input has {total} tokens, more than max_length={max_length}; pass truncate=True to cut it"
            )
        for _ in range(cut):
            longer = 1 if len(lengths) == 2 and lengths[1] > lengths[0] else 0
            lengths[longer] -= 1
        for part, n in zip(parts, lengths):
            if n < len(part.ids):
                part.truncate(n)
        # The file's post-processor adds [CLS]/[SEP] and the segment (type) ids. It does not keep
        # which text each token came from, so words are read from the parts, which it keeps in order.
        enc = self.tokenizer.post_process(parts[0], parts[1] if len(parts) == 2 else None, add_special_tokens=True)
        part_words = iter([w for part, text in zip(parts, texts) for w in self._words(part, text)])
        words = ["" if special else next(part_words) for special in enc.special_tokens_mask]
        unknown = [w for tok, w in zip(enc.tokens, words) if tok == UNK and w != UNK]
        return Encoding(list(enc.tokens), list(enc.ids), list(enc.type_ids), words, unknown, cut)

    @staticmethod
    def _words(part, text: str) -> list[str]:
        """For each token of a single-text encoding, the whole word it is a piece of, as typed."""
        return ["" if w is None else text[slice(*part.word_to_chars(w))] for w in part.word_ids]

    def pad(self, encodings: list[Encoding], *, extra_pads: int = 0) -> Batch:
        """Pad at the end to the longest length (+ extra_pads); key_padding_mask True = ignore."""
        return pad_encodings(encodings, self.pad_id, self.pad_token, extra_pads=extra_pads)

    def decode(self, ids) -> list[str]:
        """Token strings for ids (no joining of ## pieces: the page shows what the model saw)."""
        out = []
        for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
            if not 0 <= int(i) < len(self.vocab):
                raise ValueError(f"token id {i} is outside the vocabulary [0, {self.vocab_size})")
            out.append(self.vocab[int(i)])
        return out


def typed_specials(text) -> str:
    """The text with special tokens typed in any case ("[mask]") written as the tokens ("[MASK]")."""
    return _TYPED_SPECIAL_RE.sub(lambda m: m.group(0).upper(), str(text))


@lru_cache(maxsize=1)
def english_tokenizer() -> WordPieceTokenizer:
    """The lab's tokenizer: BERT's uncased English WordPiece vocabulary (shared; it holds no state)."""
    return WordPieceTokenizer.from_vocab(ENGLISH_VOCAB)


def pad_encodings(encodings: list[Encoding], pad_id: int, pad_token: str, *, extra_pads: int = 0) -> Batch:
    """Pad at the end to the longest length (+ extra_pads); key_padding_mask True = ignore that key.

    Shared by every tokenizer here: the batch layout does not depend on how text was split.
    """
    if not encodings:
        raise ValueError("cannot pad an empty list of encodings")
    if extra_pads < 0:
        raise ValueError(f"extra_pads must be >= 0, got {extra_pads}")
    width = max(len(e) for e in encodings) + extra_pads
    ids = torch.full((len(encodings), width), pad_id, dtype=torch.long)
    segments = torch.zeros((len(encodings), width), dtype=torch.long)
    mask = torch.ones((len(encodings), width), dtype=torch.bool)
    tokens = []
    for row, e in enumerate(encodings):
        n = len(e)
        ids[row, :n] = torch.tensor(e.ids, dtype=torch.long)
        segments[row, :n] = torch.tensor(e.segments, dtype=torch.long)
        mask[row, :n] = False
        tokens.append(e.tokens + [pad_token] * (width - n))
    return Batch(ids, segments, mask, tokens, [len(e) for e in encodings])
