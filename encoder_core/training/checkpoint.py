"""Save and load the lab's small masked-language model, and ask it to fill in [MASK].

The folder holds model.safetensors, vocab.txt (one WordPiece token per line, its id its line number), config.json,
training.json (curve, metrics, settings) and SHA256SUMS, the digests of all four,
written by the training run and committed with them. Loading refuses a folder whose
files do not match their digests: a half-written, hand-edited or mangled checkpoint
would otherwise load and quietly predict nonsense.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from ..model.config import EncoderConfig
from ..model.output_heads import MaskedLanguageModel
from ..model.tokenizer import MASK, WordPieceTokenizer
from .files import file_sha256

DEFAULT_DIR = Path(__file__).resolve().parents[1] / "checkpoints" / "small_mlm"
WEIGHTS_FILE, VOCAB_FILE, CONFIG_FILE, TRAINING_FILE = "model.safetensors", "vocab.txt", "config.json", "training.json"
MANIFEST_FILE = "SHA256SUMS"
CHECKED_FILES = (WEIGHTS_FILE, VOCAB_FILE, CONFIG_FILE, TRAINING_FILE)
# The MLM decoder shares the embedding table's tensor; safetensors refuses shared storage, so the
# file holds the table once and loading ties the decoder back to it.
TIED_KEY = "cls.predictions.decoder.weight"
REBUILD_HINT = "rebuild it with: python -m scripts.train  (or: make train)"


class CheckpointError(ValueError):
    """The small model's checkpoint is missing, incomplete or does not match its recorded digests."""


def read_manifest(path: Path | str = DEFAULT_DIR) -> dict[str, str]:
    """file name -> expected SHA-256, from SHA256SUMS (sha256sum's format: '<hex>  <name>')."""
    manifest = Path(path) / MANIFEST_FILE
    if not manifest.is_file():
        raise CheckpointError(f"checkpoint file {manifest} is missing; {REBUILD_HINT}")
    expected = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and len(parts[0]) == 64:
            expected[parts[1].lstrip("*")] = parts[0].lower()
    return expected


def verify_checkpoint(path: Path | str = DEFAULT_DIR) -> dict[str, str]:
    """Check every file against SHA256SUMS; returns the digests. CheckpointError names the first bad file."""
    path = Path(path)
    expected = read_manifest(path)
    for name in CHECKED_FILES:
        file = path / name
        if not file.is_file():
            raise CheckpointError(f"checkpoint file {file} is missing; {REBUILD_HINT}")
        if name not in expected:
            raise CheckpointError(f"checkpoint file {file} has no digest in {path / MANIFEST_FILE}; {REBUILD_HINT}")
        actual = file_sha256(file)
        if actual != expected[name]:
            raise CheckpointError(
                f"checkpoint file {file} does not match its SHA-256 (expected {expected[name]}, got {actual}); "
                f"{REBUILD_HINT}"
            )
    return {name: expected[name] for name in CHECKED_FILES}


def save_small_mlm(
    model: MaskedLanguageModel, tokenizer: WordPieceTokenizer, metadata: dict, path: Path | str = DEFAULT_DIR
) -> dict[str, str]:
    """Write the four files and SHA256SUMS; returns the digests."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items() if k != TIED_KEY}
    save_file(state, str(path / WEIGHTS_FILE), metadata={"format": "pt"})
    (path / VOCAB_FILE).write_text("\n".join(tokenizer.vocab) + "\n", encoding="utf-8")
    (path / CONFIG_FILE).write_text(json.dumps(model.config.to_dict(), indent=2) + "\n", encoding="utf-8")
    (path / TRAINING_FILE).write_text(json.dumps(metadata, indent=1) + "\n", encoding="utf-8")
    digests = {name: file_sha256(path / name) for name in CHECKED_FILES}
    (path / MANIFEST_FILE).write_text("".join(f"{d}  {n}\n" for n, d in digests.items()), encoding="utf-8")
    return digests


def load_small_mlm(path: Path | str = DEFAULT_DIR) -> tuple[MaskedLanguageModel, WordPieceTokenizer, dict]:
    """(model in eval mode, its tokenizer, training metadata), after checking every file's digest."""
    path = Path(path)
    verify_checkpoint(path)
    try:
        config = EncoderConfig(**json.loads((path / CONFIG_FILE).read_text(encoding="utf-8")))
        tokenizer = WordPieceTokenizer.from_vocab(path / VOCAB_FILE)
        metadata = json.loads((path / TRAINING_FILE).read_text(encoding="utf-8"))
        state = load_file(str(path / WEIGHTS_FILE))
    except (ValueError, TypeError, OSError) as exc:  # JSON, config validation, vocabulary, safetensors header
        raise CheckpointError(f"checkpoint in {path} cannot be read ({exc}); {REBUILD_HINT}") from exc
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"checkpoint file {path / VOCAB_FILE} has {tokenizer.vocab_size} tokens but {path / CONFIG_FILE} "
            f"says vocab_size={config.vocab_size}; {REBUILD_HINT}"
        )
    model = MaskedLanguageModel(config)
    try:
        result = model.load_state_dict(state, strict=False)
    except RuntimeError as exc:  # shape mismatch
        raise CheckpointError(f"checkpoint file {path / WEIGHTS_FILE} does not fit the model: {exc}") from exc
    if set(result.missing_keys) != {TIED_KEY} or result.unexpected_keys:
        raise CheckpointError(
            f"checkpoint file {path / WEIGHTS_FILE} does not fit the model "
            f"(missing {sorted(set(result.missing_keys) - {TIED_KEY})}, unexpected {result.unexpected_keys}); "
            f"{REBUILD_HINT}"
        )
    if model.cls.predictions.decoder.weight is not model.bert.embeddings.word_embeddings.weight:
        raise CheckpointError("the MLM decoder is no longer tied to the token embeddings after loading")
    return model.eval(), tokenizer, metadata


def fill_mask(model: MaskedLanguageModel, tokenizer, text: str, top_k: int = 5) -> list[list[tuple[str, float]]]:
    """For each [MASK] in text, left to right: the top_k (token, probability) pairs.

    Probabilities are a softmax over the whole vocabulary at that position.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be >= 1, got {top_k}")
    enc = tokenizer.encode(text, max_length=model.config.max_positions, truncate=True)
    positions = [i for i, t in enumerate(enc.tokens) if t == MASK]
    if not positions:
        raise ValueError(f"no {MASK} in the text: write {MASK} where a word should be predicted")
    ids = torch.tensor([enc.ids])
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            logits, _ = model(ids, torch.tensor([enc.segments]), need_weights=False)
    finally:
        model.train(was_training)
    probs = torch.softmax(logits[0, positions], dim=-1)  # (n_masks, V)
    top = probs.topk(min(top_k, tokenizer.vocab_size), dim=-1)
    return [
        [(tokenizer.vocab[int(i)], float(p)) for p, i in zip(row_p, row_i)]
        for row_p, row_i in zip(top.values, top.indices)
    ]
