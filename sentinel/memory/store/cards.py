"""Vectors of learned cards as each backend keeps them, in one canonical form for export and comparison."""

from __future__ import annotations


def canonical_vector(values) -> list[float]:
    """float32 values written as the shortest decimals that read back to the same float32: what SQLite's blobs
    and pgvector's text give, so an export is identical whichever backend wrote it."""
    import numpy as np

    return [float(str(x)) for x in np.asarray(values, dtype=np.float32)]


def pack_vector(vec) -> bytes:
    """float32 little-endian bytes of a vector (SQLite keeps vectors as blobs)."""
    import numpy as np

    return np.asarray(vec, dtype="<f4").tobytes()


def unpack_vector(blob: bytes) -> list[float]:
    import numpy as np

    return canonical_vector(np.frombuffer(blob, dtype="<f4"))


def vector_text(vec) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(x) for x in canonical_vector(vec)) + "]"
