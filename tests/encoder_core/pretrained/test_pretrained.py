"""all-MiniLM-L6-v2 in our Encoder, checked against transformers' BertModel on the same files.

Skipped when the model package is not installed, except under CI=true, where the model is
part of the setup and its absence must fail.
"""

import os
import shutil

import pytest
import torch
import torch.nn.functional as F
from hf_reference import reference_run

from encoder_core.model.output_heads import mean_pool
from encoder_core.pretrained import minilm as pretrained
from encoder_core.pretrained.minilm import (
    EXPECTED_SHA256,
    INSTALL_HINT,
    PretrainedUnavailable,
    checkpoint_state_dict,
    load_minilm,
    minilm_dir,
    sentence_embeddings,
)

TOL = 1e-4
SENTENCES = [
    ("The cat sat on the mat.", None),
    ("A man is playing a guitar on the street while people walk past him.", None),
    ("How old are you?", "I am twenty years old."),
    ("Unbelievably, tokenization fragments rare words.", None),
    ("Hi", None),
]


@pytest.fixture(scope="module")
def batch(minilm):
    tok = minilm.tokenizer
    return tok.pad([tok.encode(a, b) for a, b in SENTENCES])


def test_config_is_minilm(minilm):
    c = minilm.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_ff, c.vocab_size) == (6, 12, 384, 1536, 30522)
    assert (c.norm, c.activation, c.position, c.max_positions, c.pad_id) == ("post", "gelu", "learned", 512, 0)
    assert c.layer_norm_eps == 1e-12
    assert minilm.sha256 == EXPECTED_SHA256
    assert not minilm.model.training
    assert minilm.name == "sentence-transformers/all-MiniLM-L6-v2"


def test_hidden_states_and_attentions_match_transformers(minilm, minilm_reference, batch):
    assert len(set(batch.lengths)) > 1 and bool(batch.segments.any())  # padded, and holds a pair
    with torch.inference_mode():
        ours = minilm.model(batch.ids, batch.segments, batch.key_padding_mask)
        ref = reference_run(minilm_reference, batch)
    real = ~batch.key_padding_mask  # (B, T)
    assert len(ours.hidden_states) == len(ref.hidden_states) == 7
    for layer, (h, r) in enumerate(zip(ours.hidden_states, ref.hidden_states)):
        diff = (h - r).abs()[real].max().item()  # real-token rows only: pad rows are never used
        assert diff <= TOL, f"hidden state {layer}: max abs diff {diff}"
    assert len(ours.attentions) == len(ref.attentions) == 6
    for layer, (a, r) in enumerate(zip(ours.attentions, ref.attentions)):
        rows = real[:, None, :, None].expand_as(a)  # every key column of every real query row
        diff = (a - r).abs()[rows].max().item()
        assert diff <= TOL, f"attention {layer}: max abs diff {diff}"
    # The fused path sentence_embeddings uses (no weights) gives the same mean-pooled vectors.
    mask = batch.key_padding_mask
    expected = F.normalize(mean_pool(ref.last_hidden_state, mask), dim=-1)
    with torch.inference_mode():
        fused = minilm.model(batch.ids, batch.segments, mask, need_weights=False)
    torch.testing.assert_close(F.normalize(mean_pool(fused.hidden, mask), dim=-1), expected, atol=TOL, rtol=0)


def test_paraphrases_are_closer_than_an_unrelated_sentence(minilm):
    v = sentence_embeddings(minilm, ["A man is playing a guitar.", "Someone plays the guitar.", "Stocks fell today."])
    assert v.shape == (3, 384)
    torch.testing.assert_close(v.norm(dim=-1), torch.ones(3))
    cos = v @ v.T
    assert cos[0, 1] > cos[0, 2] + 0.3 and cos[0, 1] > cos[1, 2] + 0.3
    cls = sentence_embeddings(minilm, ["A man is playing a guitar."], pooling="cls")
    assert cls.shape == (1, 384) and not torch.allclose(cls, v[:1])
    with pytest.raises(ValueError, match="pooling"):
        sentence_embeddings(minilm, ["x"], pooling="max")


def test_embedding_does_not_depend_on_batch_padding(minilm):
    texts = ["short one", "a considerably longer sentence that forces the first one to be padded"]
    together = sentence_embeddings(minilm, texts)
    alone = sentence_embeddings(minilm, texts[:1])
    torch.testing.assert_close(together[:1], alone, atol=1e-5, rtol=0)


def test_fixed_padding_and_truncation_at_128_are_off(minilm):
    enc = minilm.tokenizer.encode("word " * 300)
    assert len(enc) == 302 and enc.truncated == 0
    assert "[PAD]" not in enc.tokens
    short = minilm.tokenizer.encode("the cat")
    assert short.tokens == ["[CLS]", "the", "cat", "[SEP]"]


def test_pair_layout_and_segments_follow_the_file(minilm):
    tok = minilm.tokenizer
    enc = tok.encode("the cat sat on the mat", "it was happy")
    assert enc.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]", "it", "was", "happy", "[SEP]"]
    assert enc.segments == [0] * 8 + [1] * 4
    assert enc.ids[0] == tok.cls_id and enc.ids[7] == enc.ids[-1] == tok.sep_id
    raw = tok.tokenizer.encode("the cat sat on the mat", "it was happy")  # the file's own template
    assert (enc.ids, enc.segments) == (raw.ids, raw.type_ids)


def test_word_pieces_words_and_unknowns(minilm):
    tok = minilm.tokenizer
    assert tok.split_words("Unbelievably naïve!") == [
        ("Unbelievably", ["un", "##bel", "##ie", "##va", "##bly"]),
        ("naïve", ["naive"]),
        ("!", ["!"]),
    ]
    enc = tok.encode("Unbelievably 乂 [MASK]")
    assert enc.tokens == ["[CLS]", "un", "##bel", "##ie", "##va", "##bly", "[UNK]", "[MASK]", "[SEP]"]
    assert enc.words == ["", *["Unbelievably"] * 5, "乂", "[MASK]", ""]
    assert enc.unknown == ["乂"]
    assert enc.ids[7] == tok.mask_id
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 100, 101, 102, 103)
    assert tok.special_ids == [0, 100, 101, 102, 103] and tok.vocab_size == 30522
    assert tok.decode(enc.ids[:2]) == ["[CLS]", "un"]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([30522])


def test_truncation_at_512_records_the_cut(minilm):
    tok = minilm.tokenizer
    enc = tok.encode("a " * 600)
    assert len(enc) == 512 and enc.truncated == 600 + 2 - 512
    assert enc.tokens[-1] == "[SEP]"
    pair = tok.encode("a " * 600, "b c d")  # the longer sentence is cut first
    assert len(pair) == 512 and pair.truncated == 600 + 3 + 3 - 512
    assert pair.tokens[-5:] == ["[SEP]", "b", "c", "d", "[SEP]"]
    assert pair.segments[-4:] == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="truncate=True"):
        tok.encode("a " * 600, truncate=False)
    with torch.inference_mode():  # a full-length input fits the model's 512 positions
        out = minilm.model(torch.tensor([enc.ids]), torch.tensor([enc.segments]), need_weights=False)
    assert out.hidden.shape == (1, 512, 384)


def test_pad_builds_the_batch_like_word_tokenizer(minilm, batch):
    lengths = batch.lengths
    assert batch.ids.shape == (len(SENTENCES), max(lengths))
    for row, n in enumerate(lengths):
        assert not batch.key_padding_mask[row, :n].any() and batch.key_padding_mask[row, n:].all()
        assert (batch.ids[row, n:] == 0).all() and batch.tokens[row][n:] == ["[PAD]"] * (max(lengths) - n)
    wider = minilm.tokenizer.pad([minilm.tokenizer.encode("x")], extra_pads=2)
    assert wider.ids.shape == (1, 5) and wider.key_padding_mask.tolist() == [[False] * 3 + [True] * 2]


def test_corrupted_weights_are_refused_naming_the_file(minilm, tmp_path):
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        shutil.copy(minilm.directory / name, tmp_path / name)
    assert load_minilm(tmp_path).sha256 == EXPECTED_SHA256  # a faithful copy loads from a directory
    weights = tmp_path / "model.safetensors"
    with open(weights, "r+b") as f:
        f.seek(weights.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(PretrainedUnavailable, match="model.safetensors"):
        load_minilm(tmp_path)


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(pretrained, "PACKAGE", "encoder_lab_no_such_package")
    with pytest.raises(PretrainedUnavailable) as err:
        minilm_dir()
    assert INSTALL_HINT in str(err.value)
    assert isinstance(err.value, RuntimeError)


def test_missing_file_is_named(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(PretrainedUnavailable, match="model.safetensors, tokenizer.json missing"):
        load_minilm(tmp_path)


def test_checkpoint_names_are_mapped():
    w = torch.ones(2)
    state = checkpoint_state_dict(
        {"bert.pooler.dense.bias": w, "0.auto_model.encoder.x": w, "embeddings.position_ids": torch.arange(4)[None]}
    )
    assert set(state) == {"pooler.dense.bias", "encoder.x"}
    with pytest.raises(PretrainedUnavailable, match="position_ids"):
        checkpoint_state_dict({"embeddings.position_ids": torch.tensor([[0, 2, 1]])})


EVERYDAY = [
    "the unbelievably fluffy cat sat on the doormat",
    "yesterday my neighbour borrowed twelve eggs and a bag of flour from the supermarket",
    "interest rates rose again, and the bank's shareholders were unimpressed",
    "she sat on the bank of the river and counted the ducks",
]


@pytest.mark.parametrize("text", EVERYDAY)
def test_fragmentation_agrees_with_transformers_bert_tokenizer(minilm, text):
    """Tokens, ids and Encoding.split_words against BertTokenizer (pure Python) on the package's vocab.txt."""
    from transformers import BertTokenizer

    theirs = BertTokenizer(str(minilm.directory / "vocab.txt"), do_lower_case=True)
    enc = minilm.tokenizer.encode(text)
    assert enc.tokens == ["[CLS]", *theirs.tokenize(text), "[SEP]"]
    assert enc.ids == theirs.encode(text)
    out = theirs(text, add_special_tokens=False, return_offsets_mapping=True)
    groups: dict[int, tuple[list[int], list[str]]] = {}  # transformers' own word of every token
    for token, word, (start, end) in zip(out.tokens(), out.word_ids(), out["offset_mapping"]):
        spans, pieces = groups.setdefault(word, ([], []))
        spans += [start, end]
        pieces.append(token)
    expected = [(text[min(sp) : max(sp)], pieces) for sp, pieces in groups.values() if len(pieces) > 1]
    assert enc.split_words == expected
    assert "[UNK]" not in enc.tokens


def test_a_word_tokenizer_never_splits():
    from encoder_core import WordTokenizer

    assert WordTokenizer().encode("the unbelievably fluffy cat ## sat").split_words == []


def test_split_words_names_the_split_words(minilm):
    splits = dict(minilm.tokenizer.encode(EVERYDAY[0]).split_words)
    assert splits["doormat"] == ["door", "##mat"] and splits["unbelievably"][0] == "un"
    assert "cat" not in splits and "fluffy" not in splits
