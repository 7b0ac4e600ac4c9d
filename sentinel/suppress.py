"""Inline suppressions: ``# sentinel: ignore[SEN301]`` on the line or the line above."""

from __future__ import annotations

from sentinel.lazyre import lazy_compile

_MARK = lazy_compile(r"sentinel:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]+)\])?")


def suppressed_codes(comment: str) -> set[str] | None:
    """Codes suppressed by a comment: a set, {"*"} for all, or None when it suppresses nothing."""
    m = _MARK.search(comment)
    if not m:
        return None
    codes = m.group("codes")
    if not codes:
        return {"*"}
    return {c.strip().upper() for c in codes.split(",") if c.strip()}


def is_suppressed(rule: str, line: int | None, comments: dict[int, str]) -> bool:
    if line is None:
        return False
    for n in (line, line - 1):
        text = comments.get(n)
        if text is None:
            continue
        codes = suppressed_codes(text)
        if codes and ("*" in codes or rule.upper() in codes):
            return True
    return False
