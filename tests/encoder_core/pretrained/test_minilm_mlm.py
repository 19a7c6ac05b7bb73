"""all-MiniLM-L6-v2 under the lab's MLM head: what the checkpoint holds, how it loads, and that
it computes what Hugging Face's BertForMaskedLM computes with the same weights."""

import pytest
import torch
from independent import damaged_copy, hf_masked_lm

from encoder_core.objectives.mlm_masking import IGNORE_INDEX
from encoder_core.pretrained.minilm_mlm import (
    DEFAULT_DIR,
    WEIGHTS_FILE,
    HeadSettings,
    cache_frozen_features,
    load_minilm_mlm,
    new_minilm_mlm,
    save_trained_part,
    train_top,
    trained_keys,
)
from encoder_core.training.checkpoint import CheckpointError, fill_mask


def test_the_frozen_part_is_the_published_model_itself(minilm_mlm, minilm):
    model, tokenizer, meta = minilm_mlm
    frozen = meta.get("frozen_layers", meta["settings"]["frozen_layers"])  # after the last stage
    assert 0 < frozen < model.config.n_layers and tokenizer is minilm.tokenizer
    assert model.bert.embeddings is minilm.model.embeddings
    for i in range(model.config.n_layers):
        shared = model.bert.encoder.layer[i] is minilm.model.encoder.layer[i]
        assert shared == (i < frozen)
    # The decoder is the published word-embedding table, so every word keeps its published vector.
    assert model.cls.predictions.decoder.weight is minilm.model.embeddings.word_embeddings.weight
    # The trained layers moved away from the published ones.
    top, published = model.bert.encoder.layer[frozen], minilm.model.encoder.layer[frozen]
    assert not torch.equal(top.intermediate.dense.weight, published.intermediate.dense.weight)
    assert meta["base"]["sha256"] == minilm.sha256


def test_it_computes_what_bert_for_masked_lm_computes(minilm_mlm):
    pytest.importorskip("transformers")
    model, tokenizer, _ = minilm_mlm
    hf, missing = hf_masked_lm(model)
    # BertForMaskedLM lists its output bias twice (cls.predictions.bias and the decoder's, one tensor).
    assert set(missing) <= {"bert.embeddings.position_ids", "cls.predictions.decoder.bias"}
    assert torch.equal(hf.cls.predictions.decoder.bias, model.cls.predictions.bias)
    batch = tokenizer.pad([tokenizer.encode("the [MASK] sat on the mat."), tokenizer.encode("she put her [MASK]")])
    with torch.inference_mode():
        ours, _ = model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False)
        theirs = hf(batch.ids, attention_mask=(~batch.key_padding_mask).long(), token_type_ids=batch.segments).logits
    real = ~batch.key_padding_mask
    torch.testing.assert_close(ours[real], theirs[real], atol=1e-4, rtol=1e-4)


def test_a_damaged_checkpoint_is_refused_by_name(tmp_path, minilm):
    bad = damaged_copy(DEFAULT_DIR, tmp_path, WEIGHTS_FILE)
    with pytest.raises(CheckpointError, match=WEIGHTS_FILE):
        load_minilm_mlm(bad, minilm)
    with pytest.raises(CheckpointError, match="missing"):
        load_minilm_mlm(tmp_path / "nowhere", minilm)


def test_training_is_reproducible_and_the_saved_part_round_trips(tmp_path, minilm, tok):
    s = HeadSettings(sentences=64, epochs=1, batch_size=16, warmup=2)
    texts = [f"the {w} sat on the mat near the river" for w in ("cat", "dog", "bird", "horse")] * 16
    replacements = torch.tensor(tok.encode(" ".join(texts[:4])).ids[1:-1])

    def trained():
        model = new_minilm_mlm(minilm, s.seed)
        records = train_top(model, cache_frozen_features(model, minilm.tokenizer, texts, s, replacements), s)
        return model.eval(), records

    (a, rec_a), (b, rec_b) = trained(), trained()
    assert len(rec_a) == 4 and [r["loss"] for r in rec_a] == [r["loss"] for r in rec_b]
    keys = trained_keys(a, s.frozen_layers)
    for k in keys:
        assert torch.equal(a.state_dict()[k], b.state_dict()[k]), k
    # Training left the published part alone.
    for name, p in minilm.model.encoder.layer[s.frozen_layers - 1].named_parameters():
        assert torch.equal(dict(a.bert.encoder.layer[s.frozen_layers - 1].named_parameters())[name], p)
    meta = {"settings": {"frozen_layers": s.frozen_layers}}
    save_trained_part(a, s.frozen_layers, meta, tmp_path)
    loaded, _, _ = load_minilm_mlm(tmp_path, minilm)
    text = "the [MASK] sat on the mat"
    assert fill_mask(loaded, minilm.tokenizer, text) == fill_mask(a, minilm.tokenizer, text)


def test_whole_word_caching_masks_every_piece_of_a_chosen_word(minilm):
    tok = minilm.tokenizer
    texts = ["unbelievably the tokenization of umbrellas happened", "she took her umbrella unbelievably"] * 8
    s = HeadSettings(batch_size=16, mask_rate=0.5, whole_word=True, period_rate=0.0)
    model = new_minilm_mlm(minilm, s.seed)
    [batch] = cache_frozen_features(model, tok, texts, s, torch.arange(2000, 3000))
    ids = tok.pad([tok.encode(t, max_length=s.max_pieces) for t in sorted(texts, key=len)]).ids
    chosen = batch.labels != IGNORE_INDEX
    assert torch.equal(batch.labels[chosen], ids[chosen])
    pieces = [[tok.vocab[i].startswith("##") for i in row] for row in ids.tolist()]
    split_words = 0
    for r, row in enumerate(pieces):
        for t, is_piece in enumerate(row):
            if is_piece:
                assert chosen[r, t] == chosen[r, t - 1], (r, t)
                split_words += 1
    assert split_words > 0 and bool(chosen.any())
