"""The lab's English tokenizer (BERT's uncased WordPiece vocabulary) against transformers' BertTokenizer."""

import pytest
import torch
from independent import THIRTY_WORDS

from encoder_core.model.tokenizer import ENGLISH_VOCAB, WordPieceTokenizer, english_tokenizer
from encoder_core.training.files import file_sha256

# bert-base-uncased's vocab.txt, byte for byte the file all-MiniLM-L6-v2 ships.
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"

# Thirty words a student might type, none of them in the grammar's 191-word list.
SENTENCES = [
    THIRTY_WORDS,
    "the bank raised interest rates",
    "The unbelievably fluffy cat sat on the doormat!",
    "she put her money in the [MASK] and [mask] it",
    "Don't split\tthis\u200bword: café, naïve, 東京, 3.5%",
    "a_b (x) -- 'quoted' \"double\" end?!",
]


@pytest.fixture(scope="module")
def bert():
    from transformers import BertTokenizer

    return BertTokenizer(str(ENGLISH_VOCAB), do_lower_case=True)


def test_the_shipped_vocabulary_is_bert_base_uncased():
    assert file_sha256(ENGLISH_VOCAB) == VOCAB_SHA256
    tok = english_tokenizer()
    assert tok.vocab_size == len(tok.vocab) == 30522
    assert tok.special_ids == [0, 100, 101, 102, 103]  # [PAD] [UNK] [CLS] [SEP] [MASK]
    assert all(tok.token_to_id[t] == i for i, t in enumerate(tok.vocab))


def test_thirty_everyday_words_have_no_unknown_piece():
    enc = english_tokenizer().encode(THIRTY_WORDS)
    assert len(THIRTY_WORDS.split()) == 30
    assert "[UNK]" not in enc.tokens and enc.unknown == []


@pytest.mark.parametrize("text", SENTENCES)
def test_tokens_and_ids_agree_with_bert_tokenizer(bert, text):
    ours = english_tokenizer().encode(text)
    typed = text.replace("[mask]", "[MASK]")  # ours accepts a special token typed in lower case
    assert ours.tokens == ["[CLS]", *bert.tokenize(typed), "[SEP]"]
    assert ours.ids == bert.encode(typed)
    assert ours.segments == [0] * len(ours.ids)


def test_pairs_agree_with_bert_tokenizer(bert):
    ours = english_tokenizer().encode("the bank raised interest rates", "shareholders were unimpressed")
    theirs = bert("the bank raised interest rates", "shareholders were unimpressed")
    assert ours.ids == theirs["input_ids"] and ours.segments == theirs["token_type_ids"]


@pytest.mark.parametrize("text", SENTENCES[:3])
def test_round_trip_through_ids(bert, text):
    tok = english_tokenizer()
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == enc.tokens
    assert tok.decode(torch.tensor(enc.ids)) == enc.tokens
    text_again = bert.convert_tokens_to_string(tok.decode(enc.ids[1:-1]))  # pieces joined back into words
    assert tok.encode(text_again).ids == enc.ids


def test_fragmentation_is_shown_word_by_word(bert):
    tok = english_tokenizer()
    text = "The unbelievably fluffy cat sat on the doormat"
    splits = dict(tok.encode(text).split_words)
    assert splits == {w: bert.tokenize(w) for w in ("unbelievably", "doormat")}
    assert tok.split_words(text)[1] == ("unbelievably", ["un", "##bel", "##ie", "##va", "##bly"])


def test_characters_outside_the_vocabulary_are_reported():
    enc = english_tokenizer().encode("a smile 🙂 here")
    assert enc.tokens.count("[UNK]") == 1 and enc.unknown == ["🙂"]


def test_a_typed_special_token_in_any_case_is_that_token():
    tok = english_tokenizer()
    for typed in ("[MASK]", "[mask]", "[Mask]"):
        assert tok.encode(f"the {typed} sat").tokens == ["[CLS]", "the", "[MASK]", "sat", "[SEP]"]
    assert tok.split("The [mask] sat.") == ["The", "[MASK]", "sat", "."]


def test_the_same_rules_as_minilms_own_tokenizer_file(minilm):
    ours = english_tokenizer()
    for text in SENTENCES:
        assert ours.encode(text).ids == minilm.tokenizer.encode(text).ids


def test_a_vocabulary_without_the_special_tokens_is_refused(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("the\ncat\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"has no \[PAD\]"):
        WordPieceTokenizer.from_vocab(path)


def test_every_grammar_word_is_one_piece():
    """The quizzes and the grammar's lessons count one token per word: true for every word they use."""
    from encoder_core.data.lexicon import default_vocabulary

    tok = english_tokenizer()
    assert all(word in tok.token_to_id for word in default_vocabulary())
