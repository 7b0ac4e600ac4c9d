"""The mechanism taxonomy compiles its cue regexes lazily and skips a mechanism whose cues' literals are absent
from the text: the scores must be exactly those of running every regex."""

from __future__ import annotations

import random
import re
import sys

try:
    from re import _parser  # Python 3.11+
except ImportError:  # Python 3.10
    import sre_parse as _parser

import pytest

from sentinel.memory.cards import taxonomy


def eager_scores(text: str = "", code: str = "", exceptions=()) -> dict[str, float]:
    """The scores as computed before the laziness: every mechanism's regexes compiled and run."""
    text, code = text[:taxonomy.MAX_TEXT], code[:taxonomy.MAX_CODE]
    excs = {e.lower().rsplit(".", 1)[-1] for e in exceptions}
    out = {}
    for m in taxonomy.MECHANISMS:
        s = 0.0
        if m.text and text:
            rx = re.compile("|".join(f"(?:{p})" for p in m.text), re.IGNORECASE)
            s += min(3, len({x.group(0).lower() for x in rx.finditer(text)}))
        if m.code and code:
            rx = re.compile("|".join(f"(?:{p})" for p in m.code), re.MULTILINE)
            s += 0.5 * min(3, len({x.group(0) for x in rx.finditer(code)}))
        if excs & set(m.exceptions):
            s += 1.5
        if s:
            out[m.tag] = s
    return out


def parsed_literal(pattern: str) -> str:
    """The literal characters that start every match, as the regex parser sees the pattern."""
    items = list(_parser.parse(pattern, re.IGNORECASE))
    if items and items[0][0] == _parser.AT:
        items = items[1:]
    out = []
    for op, arg in items:
        if op != _parser.LITERAL:
            break
        out.append(chr(arg))
    return "".join(out).lower()


@pytest.mark.parametrize("mechanism", taxonomy.MECHANISMS, ids=lambda m: m.tag)
def test_each_cue_literal_starts_every_match(mechanism):
    for pattern in mechanism.text:
        literal = taxonomy.required_literal(pattern)
        assert parsed_literal(pattern).startswith(literal), pattern
        assert literal or not parsed_literal(pattern), pattern  # a cue that starts with text has a literal


@pytest.mark.parametrize("pattern, literal", [
    (r"\bleaks? (?:between)", "leak"), (r"\bsuper\(\)\.", "super()."), (r"\bpython ?3\.\d+", "python"),
    (r"ab+c", "ab"), (r"a{2}", ""), (r"foo|bar", ""), (r"(?:foo|bar)x", ""), (r"[|]x", ""), (r"\dfoo", ""),
    (r"fo(?:o|x)|y", ""), (r"naïve", ""), (r"x\|y", "x|y"),
])
def test_required_literal(pattern, literal):
    assert taxonomy.required_literal(pattern) == literal


def test_the_fold_table_covers_every_character_ignorecase_matches_to_ascii():
    ascii_rx = re.compile("[\x20-\x7e]", re.IGNORECASE)
    folds = {chr(cp) for cp in range(128, sys.maxunicode + 1) if ascii_rx.fullmatch(chr(cp))}
    assert folds == {"\u0130", "\u0131", "\u017f", "\u212a"}
    for c in folds:
        assert re.fullmatch(re.escape(taxonomy._folded(c)), c, re.IGNORECASE)


WORDS = [w for m in taxonomy.MECHANISMS for p in m.text for w in re.findall(r"[a-z]{3,}", p)] + [
    "the", "a", "KeyError", "NONE", "Null", "İn-place", "ınt", "ſhared state", "KEYERROR", "DST", "429", "503",
    "x", "—", "…", "é", "\n", "re-entrant", "off by one", "utf8", "non-ascii", "super()", "time zone"]


def test_scores_are_those_of_every_regex_on_generated_text():
    rng = random.Random(14)
    for _ in range(1500):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.3:
            text = text.upper()
        excs = rng.sample(["KeyError", "TypeError", "ValueError", "x.y.TimeoutError"], rng.randint(0, 2))
        assert taxonomy.scores(text, exceptions=excs) == eager_scores(text, exceptions=excs), text
        assert taxonomy.infer(text) == sorted(
            (t for t, v in eager_scores(text).items() if v >= 1.0),
            key=lambda t: (-eager_scores(text)[t], taxonomy.TAGS.index(t)))[:3]


def test_scores_with_code_are_those_of_every_regex():
    code = "def f(x=[]):\n    if x is None:\n        return x.get('a') or {}\n    raise ValueError\n"
    for text in ("", "a mutable default was shared across calls", "ſhared ſtate İn place"):
        assert taxonomy.scores(text, code, ["KeyError"]) == eager_scores(text, code, ["KeyError"])


def test_a_query_compiles_only_what_its_text_needs():
    taxonomy._TEXT.clear()
    taxonomy._CODE.clear()
    fresh = taxonomy
    fresh.infer("bare except swallowed the task cancellation")
    assert fresh._CODE == {}  # no code given: no code regex compiled
    assert "async-cancellation" in fresh._TEXT and "time-zone" not in fresh._TEXT
    assert len(fresh._TEXT) < len(fresh.MECHANISMS) // 2
