"""SHA-256 without OpenSSL: importing hashlib loads libcrypto, ~2.7 ms of CPU a hook run pays for a few short
digests (the config cache key, the attempt key, signature ids). CPython's own SHA-256 module gives the same
digests for ~0.25 ms; hashlib is the fallback where that module is absent."""

from __future__ import annotations


def _constructor():
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:
            from hashlib import sha256
    return sha256


_SHA256 = None


def sha256(data: bytes = b""):
    """A new SHA-256 hash object (hashlib's interface: update, digest, hexdigest)."""
    global _SHA256
    if _SHA256 is None:
        _SHA256 = _constructor()
    return _SHA256(data)
