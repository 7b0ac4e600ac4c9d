"""Normalized failure signatures: stable across paths, line numbers, literals and scores,
but still specific to *what* failed.

The reference tracker made two mistakes we test against: every test failure collapsed
into one signature ("Tests failed (rc=1)"), and raw drift scores made every drift
signature unique. Ours keys on rule code + normalized message + normalized offending code.
"""

from __future__ import annotations

import hashlib
import re

_SUBS = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"), "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"), "<sha>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\w.-]+/)+[\w.-]+\.\w+(?::\d+)*"), "<path>"),  # paths, with :line:col
    (re.compile(r"\bline \d+\b|\bcol(?:umn)? \d+\b", re.I), "<pos>"),
    (re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'"), "<str>"),
    (re.compile(r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w>])", re.I), "<num>"),
]
_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    out = text or ""
    for pattern, repl in _SUBS:
        out = pattern.sub(repl, out)
    return _SPACE.sub(" ", out).strip()


def normalize_code(code: str) -> str:
    """The offending code with identifiers kept (they carry meaning) but literals stripped."""
    return normalize_text(code)[:200]


def signature(rule: str, message: str, code: str = "") -> str:
    return f"{rule}|{normalize_text(message)}|{normalize_code(code)}"


def signature_id(sig: str) -> str:
    return hashlib.sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:16]
