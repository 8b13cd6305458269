"""The content digest, without numpy: the cache keys a file by it before anything is lexed."""

from __future__ import annotations

try:  # hashlib's own BLAKE2b, without hashlib's start-up cost (it loads OpenSSL: ms of every run)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

__all__ = ["DIGEST_BYTES", "blake2b", "content_digest"]

#: Bytes of a content digest (a cache row holding another length is damaged).
DIGEST_BYTES = 16


def content_digest(data: bytes) -> bytes:
    """16-byte BLAKE2b digest of a file's bytes: what the cache keys a file's content by.

    Both the lexing workers (the digest of the very bytes they lexed) and the cache (a file's
    digest before lexing) compute it.

    Example:
        >>> len(content_digest(b"package main")), content_digest(b"a") == content_digest(b"a")
        (16, True)
    """
    return blake2b(data, digest_size=DIGEST_BYTES).digest()
