"""File helpers shared by the checkpoint and pretrained loaders."""

from __future__ import annotations

import hashlib
from pathlib import Path

_CHUNK = 1 << 20


def file_sha256(path: Path | str) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks so a large file never sits twice in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
