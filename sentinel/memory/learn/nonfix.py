"""Changes that are not bug fixes, recognised before a card is written: features, refactors, releases, and
changes that alter no behaviour or only add new code.

What the project itself says comes first: a news fragment typed as a bug fix (or a fix entry in its changelog,
or a fix record labelled a bug by its project) is strong evidence, and only the AST can overrule it (a change
that alters no behaviour at all fixes nothing). Without it, a subject that announces a feature, a refactor or a
release (in words or as a conventional-commit type) is not a fix unless it also uses fix wording, and a change
that only adds functions and classes — changing no code that existed — is a feature, however it is worded.
"""

from __future__ import annotations

import re

from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.resolution import Analysis

# closing keywords name the issue a change closes (a feature request as often as a bug): not fix wording
_CLOSING = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+(?:#|GH-|gh-)\d+", re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(?:\[[^\]]{1,40}\]\s*|\([^)]{1,40}\)\s*|(?:gh-|#)\d+\s*:?\s*)+")
_CONVENTIONAL = re.compile(r"^\s*(feat|feature|refactor|chore|docs?|ci|build|test|tests|style|perf|release|"
                           r"deps|revert)(?:\([^)]*\))?!?:", re.IGNORECASE)
FEATURE = re.compile(r"^\s*(?:add(?:s|ed|ing)?|implement(?:s|ed)?|introduce[sd]?|support(?:s|ed)?|expose[sd]?|"
                     r"new|enable[sd]?|provide[sd]?|create[sd]?|allow(?:s|ed)?|extend(?:s|ed)?|"
                     r"make\s+it\s+possible|improve[sd]?|better|enhance[sd]?|optimi[sz]e[sd]?|speed\s+up)\b",
                     re.IGNORECASE)
REFACTOR = re.compile(r"^\s*(?:refactor\w*|renam\w+|mov(?:e|es|ed|ing)\b|clean(?:s|ed)?[ -]?up|cleanup|"
                      r"simplif\w+|reorgani[sz]\w*|restructur\w*|tid(?:y|ies|ied)\b|moderni[sz]\w*|"
                      r"deprecat\w+|remove[sd]?\s+(?:unused|dead|deprecated|obsolete|old)|drop(?:s|ped)?\s+"
                      r"(?:support|python|py\d)|split\b|extract\w*|replace\s+\w+\s+with|use\s+\w+\s+instead|"
                      r"migrat\w+|vendor\w*|upgrade\w*|bump\w*|update\s+(?:to|for)\s+(?:python|py)|typing\b|"
                      r"type[- ]hint\w*|annotat\w+|lint\w*|format\w*|type[- ]?check\w*|mypy|pyright|"
                      r"get\s+rid\s+of|remove[sd]?\b|delete[sd]?\b)", re.IGNORECASE)
# words of a bug (not the word "fix", which also names features: "proxy fix", "fixture")
BUG_WORDS = re.compile(r"\b(?:bugs?|crash\w*|errors?|exceptions?|regressions?|broken|incorrect\w*|wrong\w*|"
                       r"leak\w*|hang\w*|fail\w*|missing|typos?|invalid|unexpected\w*|traceback|deadlock\w*|"
                       r"race|overflow\w*|segfault\w*|infinite|not (?:work\w*|respect\w*|honou?r\w*)|"
                       r"doesn't|don't|won't|can't|cannot|instead of)\b", re.IGNORECASE)
# a change this large found only by an issue reference and changed tests is a feature or a refactor
LARGE_LINES, LARGE_FILES = 300, 6
# what a repair does to existing code ("add try-except for concurrent initialisation" is a fix, whatever its verb)
REPAIR_KINDS = frozenset({"handler-added", "exception-narrowed", "exception-widened", "exception-changed",
                          "none-guard", "lookup-default", "lock-added", "cleanup-added", "bound-changed",
                          "default-fallback"})
RELEASE = re.compile(r"^\s*(?:release|prepare\s+(?:for\s+)?(?:the\s+)?release|bump\s+(?:the\s+)?version|"
                     r"version\s+bump|v?\d+\.\d+(?:\.\d+)*(?:\s|$)|changelog\b|update\s+changelog)", re.IGNORECASE)


def subject_of(cand: Candidate) -> str:
    """The subject without issue-number and bracket prefixes (`[3.x] `, `gh-12: `, `(#12) `)."""
    return _PREFIX.sub("", cand.subject or "", count=1)


def fix_wording(text: str) -> bool:
    from sentinel.memory.learn.gitsource import FIX_WORDS

    return bool(FIX_WORDS.search(_CLOSING.sub(" ", text or "")))


def strong_evidence(cand: Candidate) -> bool:
    """The project itself called it a bug fix: a bug-fix news fragment or changelog entry, or a fix record's
    own label."""
    return any(r == "fragment" or r in ("record:type", "record:tag") for r in cand.reasons)


def reason(cand: Candidate, analysis: Analysis) -> str:
    """Why the candidate is not a bug fix, or "" when it may be one."""
    strong = strong_evidence(cand)
    subject = subject_of(cand)
    if analysis.complete and not analysis.behaviour_changed:
        return "no behavioural change (docstrings, comments, annotations or formatting only)"
    if strong:
        return ""

    worded = fix_wording(subject)
    conv = _CONVENTIONAL.match(subject)
    if conv and conv.group(1).lower() not in ("revert",) and not (conv.group(1).lower() == "perf" and worded):
        return f"not a fix: a '{conv.group(1).lower()}' commit"
    if RELEASE.match(subject):
        return "release, not a fix"
    if "revert" not in cand.reasons:
        # "Implement the proxy fix", "Add X and fix Y": a feature verb first; a bug word makes it a fix
        if FEATURE.match(subject) and not BUG_WORDS.search(_CLOSING.sub(" ", subject)) and \
                not (analysis.existing_changed and set(analysis.kinds()) & REPAIR_KINDS):
            return "feature: the subject adds or supports something new"
        if not worded and REFACTOR.match(subject):
            return "refactor or maintenance: the subject says so"
    if analysis.complete and not analysis.existing_changed:
        return "pure addition: new code only, no change to code that existed"
    sources = cand.role_files("source")
    if not worded and "revert" not in cand.reasons and (
            sum(f.added + f.removed for f in sources) > LARGE_LINES or len(sources) > LARGE_FILES):
        return "large change without fix wording (a feature or a refactor, not one fix)"
    return ""
