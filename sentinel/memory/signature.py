"""Normalized failure signatures: stable across paths, line numbers, literals and scores,
but still specific to *what* failed.

The reference tracker made two mistakes we test against: every test failure collapsed
into one signature ("Tests failed (rc=1)"), and raw drift scores made every drift
signature unique. Ours keys on rule code + normalized message + normalized offending code.
"""

from __future__ import annotations

import hashlib
import re

_SUB_SOURCES = [
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b", 0, "<time>"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I, "<uuid>"),
    (r"\b0x[0-9a-f]+\b", re.I, "<hex>"),
    (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", 0, "<sha>"),
    (r"(?:[A-Za-z]:)?(?:[\w.-]+/)+[\w.-]+\.\w+(?::\d+)*", 0, "<path>"),  # paths, with :line:col
    (r"\bline \d+\b|\bcol(?:umn)? \d+\b", re.I, "<pos>"),
    (r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", 0, "<str>"),
    (r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w>])", re.I, "<num>"),
]
_COMPILED: list = []


def _subs() -> list:
    # compiled on first use: a passing run records no finding and never needs them
    if not _COMPILED:
        _COMPILED.extend((re.compile(src, flags), repl) for src, flags, repl in _SUB_SOURCES)
        _COMPILED.append((re.compile(r"\s+"), " "))
    return _COMPILED


def normalize_text(text: str) -> str:
    out = text or ""
    for pattern, repl in _subs():
        out = pattern.sub(repl, out)
    return out.strip()


def normalize_code(code: str) -> str:
    """The offending code with identifiers kept (they carry meaning) but literals stripped."""
    return normalize_text(code)[:200]


def signature(rule: str, message: str, code: str = "") -> str:
    return f"{rule}|{normalize_text(message)}|{normalize_code(code)}"


def signature_id(sig: str) -> str:
    return hashlib.sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:16]
