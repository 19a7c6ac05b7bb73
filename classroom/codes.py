"""Room codes students type or scan, lecturer keys only the lecturer sees, browser ids, all checked.

A room code is 8 characters from a 31-letter alphabet without look-alikes (no 0/O, 1/I/L), shown as
ABCD-EFGH: 31**8, about 8.5e11 codes. A lecturer key is 128 random bits; the store keeps only its
SHA-256, and a key is compared with the stored hash in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"  # 31 symbols, no 0 O 1 I L
CODE_LENGTH = 8
CODE_SPACE = len(ALPHABET) ** CODE_LENGTH
KEY_BYTES = 16
_KEY = re.compile(r"[A-Za-z0-9_-]{22}")  # token_urlsafe(16)
_STUDENT = re.compile(r"[0-9a-f]{32}")  # token_hex(16)
_CODE_INPUT_LIMIT = 40  # anything longer is not a code someone typed


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def shown_code(code: str) -> str:
    """ABCD-EFGH: two groups of four are easier to read out and to type."""
    return f"{code[:4]}-{code[4:]}"


def parse_code(raw: object) -> str | None:
    """A room code from a link or a form, forgiving case, spaces and dashes; None if it cannot be one."""
    if not isinstance(raw, str) or len(raw) > _CODE_INPUT_LIMIT:
        return None
    code = re.sub(r"[\s-]", "", raw).upper()
    if len(code) != CODE_LENGTH or any(ch not in ALPHABET for ch in code):
        return None
    return code


def new_lecturer_key() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_shape_ok(key: object) -> bool:
    return isinstance(key, str) and _KEY.fullmatch(key) is not None


def key_matches(key: object, stored_hash: str) -> bool:
    """Constant time in the key's content: hmac.compare_digest on the two hashes."""
    if not key_shape_ok(key):
        return False
    return hmac.compare_digest(key_hash(key), stored_hash)


def new_student_id() -> str:
    return secrets.token_hex(16)


def parse_student_id(raw: object) -> str | None:
    return raw if isinstance(raw, str) and _STUDENT.fullmatch(raw) else None
