"""Tokenizer for the lexical (BM25) side of memory search: lowercase words, stop words out, light stemming.

The same function runs on cards at build time and on queries at search time, so only its determinism matters,
not linguistic accuracy: "corrupted", "corrupting" and "corrupts" all become "corrupt".
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD_RE = re.compile(r"[a-z0-9]+(?:[+#]{1,2}(?![a-z0-9]))?")

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each either else even ever every few for from further get got
had has have having he her here hers him his how however i if in into is it its itself just least less let like
made make many may me might more most much must my neither no nor not now of off often on once one only onto or
other otherwise our ours out over own per rather same shall she should since so some such than that the their
theirs them then there these they this those though through thus to too under until up upon us very via was we
were what when where whether which while who whom whose why will with within without would yet you your
""".split())


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Strip common English inflections; deterministic and idempotent enough for matching."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl, min_len in (("ies", "y", 5), ("sses", "ss", 6), ("ing", "", 6), ("ed", "", 5),
                                  ("es", "", 5), ("s", "", 4)):
        if word.endswith(suffix) and len(word) >= min_len:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes", "sses")):
                continue
            word = word[: len(word) - len(suffix)] + repl
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    # "stopped" -> "stopp" -> "stop": collapse a doubled final consonant left by -ed/-ing.
    if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """Index terms of a text, in order (repeats kept)."""
    out = []
    for m in _WORD_RE.finditer(text.lower()):
        w = m.group(0)
        if w in STOP_WORDS or (len(w) == 1 and not w.isdigit()):
            continue
        out.append(stem(w))
    return out
