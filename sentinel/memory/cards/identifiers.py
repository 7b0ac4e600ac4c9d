"""Identifiers as exact signals: names from problem text, diffs and tracebacks that match card for card.

A query that names `set_cookie` or `MultiDict.getlist` is about that code; a card whose fix changed that code is
relevant whatever the words around it say. Identifiers are kept apart from the BM25 terms (which stem and split
them) and matched exactly, lower-cased. Pure Python, cheap to import.
"""

from __future__ import annotations

import re
from functools import lru_cache

# code-shaped words: snake_case, CamelCase with an inner capital, dunder names, dotted paths, call syntax
_BACKTICK = re.compile(r"`+([^`\n]{2,80})`+")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")
_CALL = re.compile(r"\b([A-Za-z_]\w{2,})\(")
_DEF = re.compile(r"^[+-]?\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)
_HUNK = re.compile(r"^@@[^@]*@@\s*(?:.*?\b(?:def|class)\s+([A-Za-z_]\w*)|.*)", re.MULTILINE)
_QUOTED = re.compile(r"""(?<![\w])['"]([A-Za-z_][\w.:/-]{2,60})['"]""")
_NUMBER = re.compile(r"(?<![\w.])(\d{3,})(?![\w.])")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")

# words that look like code but carry no identity (builtins, keywords, very common names)
COMMON = frozenset("""
self cls none true false return import from def class async await lambda yield pass raise assert global
print len str int float bool list dict set tuple bytes object type isinstance issubclass getattr setattr hasattr
super property staticmethod classmethod range open next iter map filter sorted reversed enumerate zip min max sum
any all repr hash format kwargs args init new call test tests main setup utils util helper helpers value values
key keys item items name names data result results obj func function method module path paths file files
error errors exception warning traceback todo fixme http https www com org github issue issues pull
thanks note see fixes fixed
""".split())


@lru_cache(maxsize=100_000)
def _split_words(identifier: str) -> tuple[str, ...]:
    parts = re.split(r"[_.\-]+", identifier)
    out: list[str] = []
    for p in parts:
        out += [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", p)]
    return tuple(w for w in out if w)


def split_words(identifier: str) -> list[str]:
    """snake_case and CamelCase parts, lower-cased: `getResponseHeader` -> get, response, header."""
    return list(_split_words(identifier))


def is_codeish(word: str) -> bool:
    core = word.strip("_")
    return ("_" in core or bool(_CAMEL.search(core)) or word.startswith("__")) and len(core) >= 3


def _keep(name: str) -> bool:
    from sentinel.memory.cards.text import STOP_WORDS

    low = name.lower()
    return len(name) >= 3 and low not in COMMON and low not in STOP_WORDS and not low.isdigit()


def from_text(text: str, limit: int = 20) -> list[str]:
    """Identifiers written in prose: backticked, dotted, called, snake/Camel-shaped. Order of appearance."""
    found: list[str] = []

    def add(name: str) -> None:
        name = name.strip(".()`'\" ")
        if not name:
            return
        for piece in [name, *name.split(".")] if "." in name else [name]:
            if _keep(piece) and (piece is name or is_codeish(piece) or len(piece) >= 4):
                found.append(piece)

    for m in _BACKTICK.finditer(text):
        inner = m.group(1)
        for w in re.findall(r"[A-Za-z_][\w.]*", inner):
            add(w)
    for m in _DOTTED.finditer(text):
        dotted = m.group(0)
        # "e.g", "i.e" and file names are not identifiers
        if re.fullmatch(r"(?:e\.g|i\.e|etc|vs)", dotted.lower()) or re.search(r"\.(?:py|rst|md|txt|cfg|toml|"
                                                                                r"ini|json|ya?ml)$", dotted):
            continue
        if re.search(r"\.(?:com|org|net|io|ci|dev|app|edu|gov|co|uk)$", dotted.lower()):
            continue  # a domain name (pre-commit.ci, users.noreply.github.com), not code
        add(dotted)
    for m in _CALL.finditer(text):
        add(m.group(1))
    for m in _WORD.finditer(text):
        if is_codeish(m.group(0)):
            add(m.group(0))
    return _dedupe(found)[:limit]


def from_diff(diff: str, limit: int = 30) -> list[str]:
    """Functions and classes a diff touches: hunk-header context, and def/class lines added or removed."""
    found: list[str] = []
    for m in _HUNK.finditer(diff):
        if m.group(1):
            found.append(m.group(1))
    for m in _DEF.finditer(diff):
        found.append(m.group(1))
    return [n for n in _dedupe(found) if _keep(n)][:limit]


def quoted_and_numbers(text: str) -> tuple[list[str], list[str]]:
    """Quoted names ('Illegal key', "max_retries") and numbers of 3+ digits (status codes, ports) in a log."""
    quoted = _dedupe(m.group(1) for m in _QUOTED.finditer(text) if _keep(m.group(1)))
    numbers = _dedupe(m.group(1) for m in _NUMBER.finditer(text))
    return quoted[:10], numbers[:10]


def normalise(names) -> list[str]:
    """The exact-match keys of identifiers: lower-cased, dotted names also by their last part."""
    out: list[str] = []
    for n in names:
        low = n.lower().strip()
        if not low:
            continue
        out.append(low)
        if "." in low:
            out.append(low.rsplit(".", 1)[-1])
    return [n for n in _dedupe(out) if _keep(n)]


def _dedupe(items) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in items:
        k = x.lower()
        if k not in seen:
            seen.add(k)
            out.append(x)
    return out


_EXC_RE = re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Za-z]\w*?(?:error|exception|warning|exit|interrupt))\b",
                     re.IGNORECASE)
_NOT_EXC = frozenset({"error", "exception", "warning", "exit", "interrupt", "anyerror", "noerror", "terror",
                      "mirror", "errors"})


def exception_names(text: str) -> list[str]:
    """Exception type names in text, case-insensitively (`keyerror`, `KeyError`, `http.cookies.CookieError`)."""
    out: list[str] = []
    for m in _EXC_RE.finditer(text):
        name = m.group(1).rsplit(".", 1)[-1]
        if name.lower() in _NOT_EXC or len(name) < 6:
            continue
        if name.lower() not in {o.lower() for o in out}:
            out.append(name)
    return out
