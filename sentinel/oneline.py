"""Text on one line, cut at a word boundary: what every memory and report line is (one place, so a recall line
reads the same in the memory's answers and in every reporter)."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """`text` on one line of at most `limit` characters (its leading indent kept), cut at a word boundary with an
    ellipsis — never mid-word unless one word is longer than half the line."""
    text = text or ""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.") + "\u2026"
