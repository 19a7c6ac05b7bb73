"""EncoderConfig presets and validation; the word tokenizer's input format."""

from __future__ import annotations

import pytest
import torch

from encoder_core import PRESETS, EncoderConfig, WordTokenizer, clean_text, english_tokenizer, preset

# ---------------------------------------------------------------- config


def test_tiny_preset_is_seed_004s_model():
    # Seed 004: model_size=12, nhead=3, dim_feedforward=24, vocabulary_size=6, maximum_length=5.
    c = preset("tiny")
    assert (c.d_model, c.n_heads, c.d_ff, c.vocab_size, c.max_positions, c.n_layers) == (12, 3, 24, 6, 5, 2)
    assert c.d_head == 4


def test_small_preset_reads_bert_english_vocabulary():
    c = preset("small")
    assert (c.d_model, c.n_heads, c.n_layers, c.d_ff, c.d_head) == (64, 4, 2, 256, 16)
    assert c.vocab_size == english_tokenizer().vocab_size == 30522


@pytest.mark.parametrize(
    "name, hidden, heads, layers, ffn",
    [("minilm", 384, 12, 6, 1536), ("bert-base", 768, 12, 12, 3072)],
)
def test_published_presets_match_transformers_bertconfig(name, hidden, heads, layers, ffn):
    transformers = pytest.importorskip("transformers")
    ref = transformers.BertConfig(
        hidden_size=hidden, num_attention_heads=heads, num_hidden_layers=layers, intermediate_size=ffn
    )
    c = preset(name)
    assert (c.d_model, c.n_heads, c.n_layers, c.d_ff) == (hidden, heads, layers, ffn)
    # The rest must be BERT's own defaults (bert-base-uncased and all-MiniLM-L6-v2 share them).
    assert c.vocab_size == ref.vocab_size == 30522
    assert c.max_positions == ref.max_position_embeddings
    assert c.type_vocab_size == ref.type_vocab_size
    assert c.layer_norm_eps == ref.layer_norm_eps
    assert c.pad_id == ref.pad_token_id
    assert c.activation == ref.hidden_act and c.norm == "post"


def test_bert_base_parameter_count_matches_transformers():
    transformers = pytest.importorskip("transformers")
    from encoder_core import Encoder, param_count

    # meta tensors: the count without allocating 110M floats twice.
    with torch.device("meta"):
        ours = param_count(Encoder(preset("bert-base")))
        theirs = sum(p.numel() for p in transformers.BertModel(transformers.BertConfig()).parameters())
    assert ours == theirs == 109_482_240


def test_every_preset_is_valid_and_d_ff_defaults_to_4x():
    for name, c in PRESETS.items():
        assert preset(name) == c
        assert c.d_model % c.n_heads == 0
    assert EncoderConfig(d_model=32, n_heads=2).d_ff == 128


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"d_model": 64, "n_heads": 5}, "n_heads"),
        ({"d_model": -64}, "d_model"),
        ({"n_heads": 0}, "n_heads"),
        ({"n_layers": -1}, "n_layers"),
        ({"d_ff": -4}, "d_ff"),
        ({"vocab_size": 0}, "vocab_size"),
        ({"max_positions": -5}, "max_positions"),
        ({"type_vocab_size": 0}, "type_vocab_size"),
        ({"n_layers": True}, "n_layers"),
        ({"d_model": 64.0}, "d_model"),
        ({"norm": "middle"}, "norm"),
        ({"position": "rotary"}, "position"),
        ({"activation": "tanh"}, "activation"),
        ({"dropout": 1.0}, "dropout"),
        ({"dropout": -0.1}, "dropout"),
        ({"pad_id": 30522}, "pad_id"),
        ({"layer_norm_eps": 0.0}, "layer_norm_eps"),
    ],
)
def test_bad_config_names_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        EncoderConfig(**changes)


def test_preset_overrides_are_validated_and_unknown_names_refused():
    assert preset("small", n_layers=1).n_layers == 1
    with pytest.raises(ValueError, match="n_heads"):
        preset("small", n_heads=5)
    with pytest.raises(ValueError, match="unknown preset"):
        preset("huge")


# ---------------------------------------------------------------- the grammar's word tokenizer (leakage experiment)


@pytest.fixture(scope="module")
def tok():
    return WordTokenizer()


def test_lowercase_and_punctuation_split(tok):
    assert tok.split("The CAT sat, on the MAT.") == ["the", "cat", "sat", ",", "on", "the", "mat", "."]
    assert tok.split("(don't!)") == ["(", "don", "'", "t", "!", ")"]


def test_single_sentence_layout(tok):
    e = tok.encode("The cat sat.")
    assert e.tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]"]
    v = tok.vocab
    assert e.ids == [2, v.index("the"), v.index("cat"), v.index("sat"), v.index("."), 3]
    assert e.segments == [0] * 6
    assert e.unknown == [] and e.truncated == 0


def test_pair_layout_and_segments(tok):
    e = tok.encode("the cat sat", "it slept")
    assert e.tokens == ["[CLS]", "the", "cat", "sat", "[SEP]", "it", "slept", "[SEP]"]
    # Segment A = [CLS] + A + its [SEP]; segment B = B + the final [SEP].
    assert e.segments == [0, 0, 0, 0, 0, 1, 1, 1]


def test_pair_layout_matches_bert_convention():
    # The same words through Hugging Face's BERT template give the same segment ids.
    tokenizers = pytest.importorskip("tokenizers")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "it", "slept"]
    ref = tokenizers.Tokenizer(tokenizers.models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    ref.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    ref.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    theirs = ref.encode("the cat sat", "it slept")
    ours = WordTokenizer(words).encode("the cat sat", "it slept")
    assert ours.ids == theirs.ids and ours.segments == theirs.type_ids


def test_oov_becomes_unk_and_is_reported(tok):
    e = tok.encode("the zebra sat", "a xylophone")
    assert e.tokens == ["[CLS]", "the", "[UNK]", "sat", "[SEP]", "a", "[UNK]", "[SEP]"]
    assert e.ids[2] == e.ids[6] == tok.unk_id == 1
    assert e.unknown == ["zebra", "xylophone"]


@pytest.mark.parametrize("typed", ["[MASK]", "[mask]", "[Mask]"])
def test_typed_mask_is_the_mask_token(tok, typed):
    e = tok.encode(f"the {typed} sat on the mat.")
    assert e.tokens[2] == "[MASK]" and e.ids[2] == tok.mask_id == 4
    assert e.unknown == []


def test_pad_at_end_with_mask(tok):
    a, b = tok.encode("the cat sat", "it slept"), tok.encode("a dog")
    batch = tok.pad([a, b])
    assert batch.ids.shape == (2, 8) and batch.lengths == [8, 4]
    assert batch.ids[1].tolist() == b.ids + [0, 0, 0, 0]
    assert batch.tokens[1] == b.tokens + ["[PAD]"] * 4
    assert batch.key_padding_mask.tolist() == [[False] * 8, [False] * 4 + [True] * 4]
    assert batch.segments[0].tolist() == a.segments and batch.segments[1].tolist() == [0] * 8
    assert batch.key_padding_mask.dtype == torch.bool
    wider = tok.pad([b], extra_pads=3)
    assert wider.key_padding_mask.tolist() == [[False] * 4 + [True] * 3]
    with pytest.raises(ValueError):
        tok.pad([])
    with pytest.raises(ValueError):
        tok.pad([b], extra_pads=-1)


def test_truncation_only_when_asked(tok):
    text = "the big old cat sat on the mat"  # 8 words: 10 tokens with [CLS], [SEP]
    with pytest.raises(ValueError, match="truncate"):
        tok.encode(text, max_length=6)
    e = tok.encode(text, max_length=6, truncate=True)
    assert e.tokens == ["[CLS]", "the", "big", "old", "cat", "[SEP]"] and e.truncated == 4
    assert tok.encode(text, max_length=10).truncated == 0  # exactly at the limit: nothing cut
    with pytest.raises(ValueError):
        tok.encode(text, max_length=1, truncate=True)  # no room for [CLS] and [SEP]


def test_pair_truncation_cuts_the_longer_sentence_first(tok):
    e = tok.encode("the cat", "a big old dog sat", max_length=8, truncate=True)  # 2 + 5 + 3 = 10
    assert e.tokens == ["[CLS]", "the", "cat", "[SEP]", "a", "big", "old", "[SEP]"] and e.truncated == 2
    e = tok.encode("the big cat", "a dog", max_length=6, truncate=True)  # 3 + 2 + 3 = 8
    # 3 vs 2: A loses one; then 2 vs 2, a tie: A again.
    assert e.tokens == ["[CLS]", "the", "[SEP]", "a", "dog", "[SEP]"] and e.truncated == 2
    assert len(e.segments) == len(e.ids) == 6


def test_control_and_zero_width_chars_removed(tok):
    assert clean_text("ca\u200bt") == "cat"  # zero-width space
    assert clean_text("so\u00adft") == "soft"  # soft hyphen
    assert clean_text("x\x00y\x07") == "xy"
    assert tok.split("The\tcat\nsat\r\n.") == ["the", "cat", "sat", "."]
    assert tok.encode("the c\u200bat\u200d sat").tokens == ["[CLS]", "the", "cat", "sat", "[SEP]"]


@pytest.mark.parametrize(
    "text",
    [
        "Hello,\tWORLD!\n(don't) a_b",
        "x\x00y so\u00adft ca\u200bt 3.5 -- end?!",
        "  MIXED   case; with: \"quotes\" and 'apostrophes'  ",
    ],
)
def test_split_matches_bert_normalizer_and_pre_tokenizer(tok, text):
    # Independent reference: Hugging Face's BERT cleaning + lower-casing + punctuation split.
    tokenizers = pytest.importorskip("tokenizers")
    norm = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=True
    )
    words = [w for w, _ in tokenizers.pre_tokenizers.BertPreTokenizer().pre_tokenize_str(norm.normalize_str(text))]
    assert tok.split(text) == words


def test_decode_and_its_range_check(tok):
    e = tok.encode("the cat", "a dog")
    assert tok.decode(e.ids) == e.tokens
    assert tok.decode(torch.tensor(e.ids)) == e.tokens
    for bad in ([tok.vocab_size], [-1], torch.tensor([0, 10_000])):
        with pytest.raises(ValueError, match="outside the vocabulary"):
            tok.decode(bad)


def test_vocabulary_must_start_with_specials_and_be_unique():
    with pytest.raises(ValueError):
        WordTokenizer(["the", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    with pytest.raises(ValueError):
        WordTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "the"])
