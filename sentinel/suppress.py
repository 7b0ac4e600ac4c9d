"""Inline suppressions, in our syntax and in the syntax a project already uses for its other linters.

A comment on the finding's own line (any line of its span for a multi-line finding) suppresses it when it is:

* ``# sentinel: ignore`` (every rule) or ``# sentinel: ignore[SEN301, SEN302]``;
* ``# noqa`` (every rule: flake8's and ruff's blanket form) or ``# noqa: E722, S307`` naming our code or one of
  the rule's equivalents (``Rule.noqa``; flake8-style prefixes such as ``E7`` count);
* ``# nosec`` (bandit: every *security* rule) or ``# nosec B307`` naming one of the rule's bandit codes;
* ``# pylint: disable=bare-except`` naming one of the rule's pylint names;
* ``# type: ignore[union-attr]`` (mypy) or ``# pyright: ignore[reportOptionalMemberAccess]`` naming one of the
  rule's type-checker codes, or bare (every type error of the line) for a rule that has such codes: the author
  has already told the type checker that the value may be None here.

A rule that is ``explicit_only`` (a leaked credential, SEN304) is silenced only by a comment that names it or
one of its codes, or by one of its ``allow_pragmas`` as other tools spell them (``# gitleaks:allow``,
``# pragma: allowlist secret``): a blanket ``# noqa``, ``# nosec``, ``# sentinel: ignore`` or
``# pylint: disable=all`` — the usual silencer of a long line — does not hide a secret on that line.

A suppression never reaches the next line: a comment about line 10 says nothing about line 11.
"""

from __future__ import annotations

import re

from sentinel.lazyre import lazy_compile

_SENTINEL = lazy_compile(r"sentinel:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?")
_NOQA = lazy_compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z][A-Za-z0-9]*(?:[\s,]+[A-Za-z][A-Za-z0-9]*)*))?",
                     re.IGNORECASE)
_NOSEC = lazy_compile(r"#\s*nosec\b(?::?\s*(?P<codes>B\d+(?:[\s,]+B\d+)*))?", re.IGNORECASE)
_PYLINT = lazy_compile(r"pylint:\s*disable\s*=\s*(?P<names>[\w-]+(?:\s*,\s*[\w-]+)*)")
_TYPE_IGNORE = lazy_compile(r"#\s*(?:type|pyright):\s*ignore\b(?:\[(?P<codes>[\w\s,-]*)\])?")
# mypy error codes and pyright rules our rules correspond to: a bare `# type: ignore` covers these rules only.
TYPE_CHECKER_CODES = frozenset({"union-attr", "index", "operator", "reportoptionalmemberaccess",
                                "reportoptionalsubscript", "reportoptionalcall", "reportoptionaliterable"})
# Cheap gate: most comments are none of these.
_WORDS = ("sentinel:", "noqa", "nosec", "pylint:", "ignore")


def _split(codes: str) -> set[str]:
    return {c.strip().upper() for c in codes.replace(",", " ").split() if c.strip()}


def suppressed_codes(comment: str) -> set[str] | None:
    """Codes a ``sentinel: ignore`` comment names: a set, {"*"} for all, or None when there is none."""
    m = _SENTINEL.search(comment)
    if not m:
        return None
    codes = m.group("codes")
    if codes is None:
        return {"*"}
    return _split(codes) or {"*"}


def comment_suppresses(comment: str, code: str, equivalents: tuple = (), security: bool = False,
                       explicit_only: bool = False, pragmas: tuple = ()) -> bool:
    """Does this comment suppress rule `code` (with its other-linter `equivalents`)? For an `explicit_only` rule
    only a comment naming it (or one of its `pragmas`, matched case-insensitively) does, never a blanket one."""
    lower = comment.lower()
    if pragmas and any(p in lower for p in pragmas):
        return True
    if not any(w in lower for w in _WORDS):
        return False
    blanket = not explicit_only
    ours = suppressed_codes(comment)
    if ours is not None and (("*" in ours and blanket) or code.upper() in ours):
        return True
    upper_equivalents = {e.upper() for e in equivalents}
    for m in _NOQA.finditer(comment):
        codes = m.group("codes")
        if codes is None:
            if blanket:
                return True  # blanket noqa
            continue
        for given in _split(codes):
            if given == code or given in upper_equivalents:
                return True
            # flake8 matches by prefix (E7 covers E722); a lone letter is too broad to mean one rule.
            if len(given) >= 2 and given[-1].isdigit() and any(e.startswith(given) for e in upper_equivalents):
                return True
    m = _NOSEC.search(comment)
    if m:
        codes = m.group("codes")
        if codes is None:
            return security and blanket
        if _split(codes) & upper_equivalents:
            return True
    m = _PYLINT.search(comment)
    if m:
        names = {n.strip().lower() for n in m.group("names").split(",")}
        if ("all" in names and blanket) or names & {e.lower() for e in equivalents}:
            return True
    for m in _TYPE_IGNORE.finditer(comment):
        ours = {e.lower() for e in equivalents} & TYPE_CHECKER_CODES
        codes = m.group("codes")
        if ours and ((codes is None and blanket) or (codes and {c.strip().lower() for c in codes.split(",")} & ours)):
            return True
    return False


def is_suppressed(rule: str, line: int | None, comments: dict[int, str], equivalents: tuple = (),
                  security: bool = False, end_line: int | None = None, explicit_only: bool = False,
                  pragmas: tuple = ()) -> bool:
    """Is a finding of `rule` on `line` (to `end_line`) suppressed by a comment on one of its own lines?"""
    if line is None:
        return False
    last = end_line if end_line and end_line >= line else line
    for n in range(line, min(last, line + 200) + 1):
        text = comments.get(n)
        if text is not None and comment_suppresses(text, rule, equivalents, security, explicit_only, pragmas):
            return True
    return False
