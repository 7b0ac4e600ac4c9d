"""Closed-loop purification: keep a candidate only when it is a bug fix whose change touches code the problem
text is about.

MemGovern keeps an instance when the fix is relevant to the problem (threshold tau = 0.2). Here relevance is
measured without a model: the share of the problem text's content terms (weighted by how specific they are)
that occur in the changed code — hunk lines, the functions the hunks sit in, and the changed files' paths, with
identifiers split into their words. Before that, changes that are not bug fixes are dropped outright: dependency
bumps, formatting-only changes, release commits (their only code change is the version string), changes that
touch no source file (docs, tests, CI only), and what the fix's own code and words show is not a fix (nonfix:
features, refactors, changes of no behaviour, pure additions).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sentinel.memory.cards.identifiers import split_words
from sentinel.memory.cards.text import tokenize
from sentinel.memory.learn.model import Candidate

DEFAULT_TAU = 0.2
BUMP_SUBJECT = re.compile(r"^(?:\[?(?:deps?|build|chore)\]?:?\s*)?(?:bump|update|upgrade|pin|unpin)\b.*?"
                          r"(?:\bfrom\b.*\bto\b|\bto\s+v?\d|\bversion|\brequirements?\b|\bdependenc)",
                          re.IGNORECASE)
FORMAT_SUBJECT = re.compile(r"\b(?:reformat|re-format|black|isort|ruff format|autopep8|yapf|prettier|"
                            r"whitespace|trailing spaces|code style|pre-commit autoupdate|lint(?:ing)? fix(?:es)?|"
                            r"fix (?:lint|flake8|mypy|typing|typo)s?)\b", re.IGNORECASE)
DOCS_SUBJECT = re.compile(r"\b(?:typos?|docs?|documentation|docstrings?|comments?|spelling|grammar|wording|"
                          r"readme|changelog|type hints?|annotations?|typing|mypy|lint|pylint|flake8|ruff|"
                          r"imports?)\b", re.IGNORECASE)
# terms that say "this is a fix" but nothing about what: they never count for relevance
GENERIC = frozenset(tokenize("fix fixed fixes fixing bug bugs issue issues regression error errors problem "
                             "problems crash incorrect incorrectly wrong wrongly properly correctly now when "
                             "case cases work works working correct handle handled handling support allow add "
                             "added remove removed change changed use used using make new old also gh pr "
                             "revert reverts commit closes close ref refs see thank thanks report reported "
                             "python test tests raise raised raises"))
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a version string set in code: `__version__ = "1.2.3"`, `VERSION = (1, 2, 3)`, `version: "1.2"`
_VERSION_LINE = re.compile(r"""^\s*(?:__version(?:_info)?__|version(?:_info)?|VERSION(?:_INFO)?)\s*[:=]\s*"""
                           r"""(?:[(\[]?\s*)?["']?v?\d+(?:[.,]\s*["']?\w+["']?)*["']?\s*[)\]]?\s*,?\s*$""")


@dataclass
class Verdict:
    keep: bool
    reason: str  # why dropped ("" when kept)
    relevance: float


def _changed_lines(diff: str) -> list[str]:
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith(("+", "-")):
            out.append(line[1:])
        elif line.startswith("@@"):
            out.append(line.split("@@", 2)[-1])
    return out


def formatting_only(diff: str) -> bool:
    """True when the added and removed code are the same once whitespace, quotes and trailing commas go."""
    added, removed = [], []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("-"):
            removed.append(line[1:])
    if not added and not removed:
        return False

    def norm(lines):
        text = "".join(lines)
        return re.sub(r"[\s,'\"()\\]", "", text)

    return norm(added) == norm(removed)


def version_only(diff: str) -> bool:
    """True when every changed code line of the diff sets a version string (a release commit: its changelog
    lists fixes, but the fixes landed elsewhere)."""
    changed = [line[1:] for line in diff.splitlines()
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---")) and line[1:].strip()]
    return bool(changed) and all(_VERSION_LINE.match(line) for line in changed)


def code_terms(cand: Candidate) -> set[str]:
    """Words of the changed code: hunk lines and headers, file paths, the functions and classes the changed
    lines are in (read with the AST); identifiers split into their words."""
    from sentinel.memory.learn import resolution

    words: set[str] = set()
    for f in cand.role_files("source"):
        words.update(_WORD.findall(f.path.replace("/", " ").replace(".", " ")))
        words.update(_WORD.findall("\n".join(_changed_lines(f.diff))))
    for sym in resolution.of(cand).symbols():
        words.update(_WORD.findall(sym.split("::", 1)[1]))
    terms: set[str] = set()
    for w in words:
        terms.add(w.lower())
        terms.update(split_words(w))
    return {t for word in terms for t in tokenize(word)}


def relevance(cand: Candidate, code: set[str] | None = None) -> float:
    """Weighted share of the problem's content terms found in the changed code (0-1). Longer, rarer-looking
    terms weigh more (log of length); terms repeated in the text count once."""
    code = code_terms(cand) if code is None else code
    problem = {t for t in tokenize(_strip_refs(cand.problem_text)) if t not in GENERIC and not t.isdigit()}
    if not problem:
        return 0.0
    total = hit = 0.0
    for t in problem:
        w = math.log(1 + len(t))
        total += w
        if t in code:
            hit += w
    return hit / total


def _strip_refs(text: str) -> str:
    """Problem text without links, issue numbers, trailers, people (:user:`x`, @x, e-mail) and role markup."""
    text = re.sub(r":(?:user|issue|pr|ghuser|ghissue|commit|ticket)s?:`[^`]*`", " ", text)
    text = re.sub(r"\s--\s*by\b.*", " ", text)
    text = re.sub(r":[a-z]+(?::[a-z]+)?:`~?!?([^`<]*?)(?:\s*<[^>]*>)?`", r"`\1`", text)
    text = re.sub(r"[\w.+-]+@[\w-]+\.[\w.-]+", " ", text)
    text = re.sub(r"(?<![\w@])@[A-Za-z0-9-]+", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"(?:#|GH-)\d+", " ", text)
    text = re.sub(r"\b(?:Co-authored-by|Signed-off-by|Reviewed-by|Change-Id|Fixes|Closes):.*", " ", text)
    return text


def purify(cand: Candidate, tau: float = DEFAULT_TAU) -> Verdict:
    sources = cand.role_files("source")
    if not sources:
        roles = {f.role for f in cand.files}
        if roles and roles <= {"deps", "ci", "other", "fragment", "changelog"} and "deps" in roles:
            return Verdict(False, "dependency bump", 0.0)
        return Verdict(False, "no source change (docs, tests or CI only)", 0.0)
    if BUMP_SUBJECT.search(cand.subject) and all(f.role in ("deps", "fragment", "changelog", "ci")
                                                 or len(f.diff) < 400 for f in cand.files):
        return Verdict(False, "dependency bump", 0.0)
    if all(version_only(f.diff) for f in sources):
        return Verdict(False, "version bump (a release, not a fix)", 0.0)
    if all(formatting_only(f.diff) for f in sources):
        return Verdict(False, "formatting only", 0.0)
    if FORMAT_SUBJECT.search(cand.subject) and not cand.fragment:
        return Verdict(False, "formatting only", 0.0)
    if DOCS_SUBJECT.search(cand.subject) and not cand.fragment and not cand.tests_added:
        return Verdict(False, "docs, typing or lint wording without a fix fragment or test", 0.0)
    from sentinel.memory.learn import nonfix, resolution

    why = nonfix.reason(cand, resolution.of(cand))
    if why:
        return Verdict(False, why, 0.0)
    rel = relevance(cand)
    if rel < tau:
        return Verdict(False, f"problem text not related to the changed code (relevance < {tau:g})", rel)
    return Verdict(True, "", rel)
