"""The claim table and the extractor: which sentences of a message assert something checkable.

A claim is an assertion the author makes about this change ("all tests pass", "thread-safe"), not a word:
negated ("not production ready", "untested"), hedged, future or conditional ("once tests pass", "should be
thread-safe", "When the count exceeds the limit and all tests pass, pytest exits 6"), questioned, quoted or
code text is not a claim; nor is what the message quotes of other commits (a squash merge's commit list, a
reverted subject: see sentinel.intent.message); nor a description of something else ("a test passing but
failing in teardown", "delegate to well-tested stdlib APIs"); and words that only look like one ("done
callback", "fixed-size buffer", "secure cookie") are excluded by the patterns themselves.
"""

from __future__ import annotations

import bisect
import re

from sentinel.intent import lazy_re
from sentinel.intent.message import mask_message
from sentinel.record import Record

_F = re.I


class ClaimKind(Record, frozen=True):
    key: str
    code: str  # rule code reported when the claim is unsupported
    label: str  # short name in messages and docs
    evidence: str  # what backs it (docs)
    pattern: lazy_re
    # Words that negate this claim when they appear right before it, beyond the common ones.
    extra_negators: tuple[str, ...] = ()


_NOT_CALLBACK = r"(?![-_(]|\s+(?:callbacks?|handlers?|events?|flags?|signals?|futures?|states?|methods?|hooks?|" \
                r"functions?|criteria|condition|button|status|marker|message|column|field)\b)"

CLAIM_KINDS: tuple[ClaimKind, ...] = (
    ClaimKind("tests_pass", "SEN601", "tests pass",
              "a JUnit report (--junit) with no failures or errors, or passing CI test runs",
              lazy_re(r"\b(?:all\s+(?:the\s+)?)?(?:unit\s+|integration\s+|existing\s+|the\s+)?tests?"
                         r"(?:\s+suite)?\s+(?:(?:are|is|now|still|all)\s+)*(?:pass(?:es|ed|ing)?|green|succeed(?:s|ed)?)\b"
                         r"|\b(?:CI|the\s+build|test\s+suite)\s+(?:is\s+)?(?:passing|green|passes)\b"
                         r"|\bpass(?:es|ing)?\s+all\s+(?:the\s+)?tests\b", _F)),
    ClaimKind("tests_added", "SEN601", "tests added",
              "test files added or changed in this change",
              lazy_re(r"\b(?:add(?:s|ed)?|wrote|writes|includ(?:es|ed|ing)|extend(?:s|ed)?)\s+(?:a\s+|new\s+|more\s+|the\s+)?"
                         r"(?:unit\s+|regression\s+|integration\s+|end-to-end\s+|e2e\s+)?tests?\b(?!\s+(?:for\s+)?(?:data|files?|fixtures?|helpers?|utils?|dependenc))"
                         r"|\btests?\s+(?:were\s+|have\s+been\s+|are\s+)?(?:added|included|written)\b"
                         r"|\bcovered\s+by\s+(?:new\s+|unit\s+|regression\s+)?tests\b"
                         r"|\bwith\s+(?:new\s+|unit\s+|regression\s+)tests\b", _F)),
    ClaimKind("tested", "SEN601", "tested",
              "tests in the change, plus a test report (--junit) or coverage (--coverage)",
              lazy_re(r"\b(?:fully|well|thoroughly|properly|extensively|comprehensively)[- ]tested\b"
                         r"|\b(?:is|are|was|been|has\s+been|have\s+been)\s+tested\b"
                         r"|^\s*tested\b(?!\s+(?:with|on|against|using|under|in|manually|locally|by\s+hand)\b)",
                         _F | re.M)),
    ClaimKind("coverage", "SEN601", "full test coverage",
              "a coverage report (--coverage) at that rate",
              lazy_re(r"\b(?P<rate>\d{1,3}(?:\.\d+)?)\s*%\s*(?:test\s+|line\s+|code\s+|branch\s+)?coverage\b"
                         r"|\bfull\s+(?:test\s+|code\s+)?coverage\b|\bfully\s+covered\b"
                         r"|\bcoverage\s+(?:is\s+(?:now\s+)?|now\s+|of\s+|at\s+|to\s+|reaches\s+|(?:is\s+)?up\s+to\s+)"
                         r"(?P<rate2>\d{1,3}(?:\.\d+)?)\s*%", _F)),
    ClaimKind("production_ready", "SEN602", "production ready",
              "tests in the change or a passing report, and no placeholder, chaos or jail findings",
              lazy_re(r"\bproduction[- ]ready\b|\bready\s+for\s+(?:production|prod|release|deployment)\b"
                         r"|\bprod(?:uction)?[- ]grade\b|\bbattle[- ]tested\b|\bready\s+to\s+(?:ship|deploy|release)\b"
                         r"|\benterprise[- ]ready\b|\bbug[- ]free\b|\bno\s+(?:known\s+|more\s+)?bugs\b", _F)),
    ClaimKind("robust", "SEN602", "robust / handles errors",
              "no chaos findings (swallowed exceptions, bare except, unguarded None) in the change",
              lazy_re(r"\b(?:handles?|handling)\s+(?:all\s+)?(?:the\s+)?(?:errors|exceptions|failures|edge\s+cases)\b"
                         r"|\b(?:is|are|now|more|fully)\s+robust\b|\brobust\s+error\s+handling\b"
                         r"|\bproper\s+error\s+handling\b", _F)),
    ClaimKind("fixed", "SEN603", "fixed / resolved",
              "a regression test added or changed with the fix, and no failing test report",
              lazy_re(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?(?:#|GH-)\d+"
                         r"|\b(?:is|are|was|were|been|now|finally|has|have)\s+(?:been\s+|now\s+)?(?:fixed|resolved)\b(?![-_])"
                         # "the resolved dependencies", "a fixed size": an adjective after a determiner
                         r"|(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)(?<!\bits\s)(?<!\bour\s)(?<!\btheir\s)(?<!\bthis\s)"
                         r"\b(?:fixed|resolved)\b(?![-_])(?=\s+(?:the|a|an|this|that|it|bugs?|issues?|crash(?:es)?"
                         r"|regressions?|errors?|problems?|race|leaks?|failures?|exceptions?|#)\b|\s*[.!;]?\s*$)"
                         # wording fixes need no regression test
                         r"(?!\s+(?:a\s+|the\s+|some\s+)?(?:typos?|spelling|grammar|wording|docs?|documentation"
                         r"|comments?|formatting|lint|whitespace|links?)\b)",
                         _F | re.M),
              ("partially", "partly", "almost")),
    ClaimKind("done", "SEN604", "done / complete",
              "no placeholder findings (TODO, stub bodies, NotImplementedError) in the change",
              lazy_re(r"\b(?:all|everything|it|this|that|work|task|feature|implementation|migration|port|pr)"
                         r"(?:'s|\u2019s|\s+(?:is|are|now|has\s+been))*\s+(?:done|complete(?:d)?|finished)\b"
                         + _NOT_CALLBACK +
                         r"|\b(?:is|are|now)\s+(?:now\s+|fully\s+)?(?:done|complete(?:d)?|finished)\b" + _NOT_CALLBACK +
                         r"|\b(?:fully|completely)\s+(?:implemented|done|finished|complete)\b"
                         r"|\bfeature[- ]complete\b"
                         r"|\bno\s+(?:more\s+|remaining\s+)?(?:todos?|fixmes?|placeholders?|stubs?)(?:\s+(?:left|remain(?:ing)?))?\b"
                         r"|\bnothing\s+(?:left|remaining)\s+to\s+do\b"
                         r"|^\s*(?:done|complete(?:d)?|finished)\s*[.!]*\s*$", _F | re.M),
              ("almost", "nearly", "partially", "mostly")),
    ClaimKind("refactored", "SEN605", "refactored",
              "existing tests not rewritten (and passing, with --junit)",
              lazy_re(r"\brefactor(?:s|ed|ing)?\b(?![-_])", _F)),
    ClaimKind("behaviour_unchanged", "SEN605", "behaviour unchanged",
              "a passing test report (--junit) or CI run, and existing tests not rewritten",
              lazy_re(r"\bno\s+(?:functional|behaviou?r(?:al)?|logic|user[- ]visible|semantic|runtime)\s+changes?\b"
                         r"|\bbehaviou?r\s+(?:is\s+|stays\s+|remains\s+)?(?:unchanged|preserved|identical|(?:stays|remains)\s+the\s+same)\b"
                         r"|\b(?:pure|purely|just\s+a|only\s+a)\s+refactor(?:ing)?\b"
                         r"|\b(?:does\s+not|doesn't|do\s+not|don't)\s+change\s+(?:any\s+|the\s+)?behaviou?r\b"
                         r"|\bNFC\b|\bpurely\s+cosmetic\b", re.I)),
    ClaimKind("performance", "SEN606", "faster / optimized",
              "a benchmark added or changed (benchmarks/, bench_*, asv), or measurements in the message",
              lazy_re(r"\bfaster\b|\bspeed(?:s|ed)?[- ]?up\b|\bspeedups?\b|\boptimi[sz](?:e|es|ed|ing|ation|ations)\b"
                         r"|\bperformance\s+(?:improvements?|gains?|boost|fix(?:es)?)\b"
                         r"|\bimprov(?:es|ed|ing|e)\s+(?:the\s+)?(?:\w+\s+)?(?:performance|speed|latency|throughput)\b"
                         r"|\b(?:reduc(?:es|ed|e|ing)|lower(?:s|ed)?|cut(?:s)?|halve[sd]?)\s+(?:the\s+)?(?:\w+\s+)?"
                         r"(?:latency|memory\s+usage|memory\s+footprint|cpu\s+usage|allocations|run\s*time|overhead)\b"
                         r"|\bmore\s+efficient(?:ly)?\b", _F),
              ("no", "not")),
    ClaimKind("secure", "SEN607", "secure / hardened",
              "no jail or chaos findings (dangerous calls, credentials) in the change, and a test for the fix",
              lazy_re(r"\b(?:is|are|now|fully|more|completely)\s+secure\b|\bsecured\b|\bharden(?:s|ed|ing)?\b"
                         r"|\bsecurity\s+(?:fix|hardening|patch)\b"
                         r"|\b(?:fix(?:es|ed)?|patch(?:es|ed)?|close[sd]?|prevents?|mitigat(?:es|ed)|blocks?)\s+"
                         r"(?:a\s+|an\s+|the\s+|possible\s+|potential\s+)?(?:\w+\s+)?(?:vulnerabilit(?:y|ies)|injection"
                         r"|xss|csrf|ssrf|rce|path\s+traversal|cve-\d{4}-\d+)\b"
                         r"|\bno\s+(?:known\s+)?(?:security\s+(?:issues|holes|problems)|vulnerabilities)\b"
                         r"|\bsanitiz(?:es|ed)\s+(?:all\s+)?(?:user\s+)?input\b|\bsecure\s+by\s+default\b", _F)),
    ClaimKind("thread_safe", "SEN608", "thread-safe",
              "synchronization in the added code (locks, atomics, queues) and a concurrency test",
              lazy_re(r"\bthread[- ]?safe(?:ty)?\b|\bconcurrency[- ]safe\b|\brace[- ]free\b"
                         r"|\b(?:fix(?:es|ed)?|eliminat(?:es|ed)|prevents?|avoids?|removes?)\s+(?:a\s+|the\s+|possible\s+|potential\s+)?"
                         r"(?:data\s+)?race(?:\s+conditions?)?\b|\bno\s+(?:more\s+)?(?:data\s+)?races\b", _F)),
    ClaimKind("backward_compatible", "SEN609", "backward compatible",
              "no public function, class or module removed and no required parameter added",
              lazy_re(r"\bbackwards?[- ]compatib(?:le|ility)\b|\bno\s+breaking\s+changes?\b|\bnon[- ]breaking\b"
                         r"|\b(?:fully|remains?|stays?)\s+compatible\b|\b(?:public\s+)?api\s+(?:is\s+)?(?:unchanged|preserved)\b"
                         r"|\b(?:does\s+not|doesn't)\s+break\s+(?:any(?:thing)?|the\s+api|compatibility"
                         r"|existing\s+\w+)\b", _F),
              ("breaks", "break", "breaking", "drop", "drops", "dropped", "removes")),
    ClaimKind("no_side_effects", "SEN610", "no side effects",
              "no I/O, process, network, global or environment mutation in the added or modified functions",
              lazy_re(r"\bno\s+side[- ]effects?\b|\bside[- ]effect[- ]free\b|\bwithout\s+(?:any\s+)?side[- ]effects?\b"
                         r"|\b(?:is|are|now|remains?)\s+(?:a\s+)?pure(?:\s+functions?)?\b|\bpure\s+functions?\b", _F)),
)

KINDS_BY_KEY = {k.key: k for k in CLAIM_KINDS}
# A kind's pattern is compiled and run only when one of these appears in the (lowercased) message.
_KEYWORDS = {
    "tests_pass": ("pass", "green", "succeed"), "tests_added": ("test",), "tested": ("tested",),
    "coverage": ("cover",), "production_ready": ("production", "prod", "battle", "ready", "bug"),
    "robust": ("robust", "handl"), "fixed": ("fix", "close", "resolv"),
    "done": ("done", "complete", "finish", "todo", "fixme", "placeholder", "stub", "nothing"),
    "refactored": ("refactor",),
    "behaviour_unchanged": ("behavio", "functional", "logic", "visible", "semantic", "runtime", "refactor", "nfc",
                            "cosmetic"),
    "performance": ("fast", "speed", "optimi", "performance", "latency", "throughput", "memory", "cpu", "allocation",
                    "run", "overhead", "efficient", "halve"),
    "secure": ("secur", "harden", "vulnerab", "injection", "xss", "csrf", "ssrf", "rce", "traversal", "cve",
               "sanitiz"),
    "thread_safe": ("thread", "concurren", "race"), "backward_compatible": ("compat", "breaking", "api", "break"),
    "no_side_effects": ("side", "pure"),
}

# Words that, in the claim's clause before it, negate, hedge or defer it. Matched as words (a set lookup,
# not a regex: this runs in a fresh hook process where compiling a large alternation costs milliseconds).
_NEGATOR_WORDS = frozenset("""
not no never nor without hardly barely cannot can't won't isn't aren't wasn't weren't don't doesn't didn't
haven't hasn't shouldn't wouldn't couldn't will would should could might may must once until unless if when
whenever whether before after hope hopefully assuming todo tbd wip pending claim claims allegedly supposedly
except seem seems seemed appear appears appeared apparently probably perhaps maybe likely presumably
""".split())
_NEGATOR_PHRASES = ("yet to", "to be", "need to", "needs to", "want to", "try to", "trying to", "expect to",
                    "expected to", "supposed to", "going to", "aim to", "aims to", "aiming to", "check that",
                    "check whether", "check if", "verify that", "verify whether", "verify if")
_WORD_EDGE = ".,;:!?()[]\"'`*_"
_CLAUSE_BREAK = lazy_re(r"[.!?;:,()\[\]\n]|\b(?:but|although|though|however|and|so|because|while)\b", re.I)
_CHECKLIST = lazy_re(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$")
_HEADING_NEGATIVE = lazy_re(r"^\s*#{1,6}\s*(?:known\s+issues|limitations|todo|not\s+done|open\s+questions|"
                               r"what'?s\s+missing|remaining|follow[- ]ups?)\b", re.I)
_HEADING = lazy_re(r"^\s*#{1,6}\s+\S")


class Claim(Record):
    kind: ClaimKind
    text: str  # the matched words
    line: int  # 1-based line in the message
    sentence: str  # the line it is on, stripped
    rate: float | None = None  # a coverage claim's rate (1.0 for "full coverage")


class ChecklistItem(Record):
    ticked: bool
    text: str
    line: int


def _negated(before: str, kind: ClaimKind) -> bool:
    # Only the clause that holds the claim counts: "Tests were slow, but all tests pass" is a claim.
    cut = 0
    for m in _CLAUSE_BREAK.finditer(before):
        cut = m.end()
    words = [w.strip(_WORD_EDGE).lower().replace("\u2019", "'") for w in before[cut:].split()][-6:]
    if any(w in _NEGATOR_WORDS or w.endswith("n't") for w in words):
        return True
    scope = " " + " ".join(words) + " "
    if any(f" {p} " in scope for p in _NEGATOR_PHRASES) or before.lower().endswith(("non-", "not-", "un-")):
        return True
    if kind.extra_negators:
        lowered = [w.lower().strip(",") for w in words[-4:]]
        return any(w in kind.extra_negators for w in lowered)
    return False


def _question(after: str) -> bool:
    end = re.search(r"[.!?\n]", after)
    return bool(end and end.group(0) == "?")


# A sentence that opens with one of these states a condition ("When the count exceeds the limit and all tests
# pass, pytest exits with 6"), not the state of the change.
_CONDITIONAL_OPENERS = frozenset("if when whenever unless once until provided assuming suppose supposing whether "
                                 "in case as long as soon".split())
# "a test passing but failing during teardown": a test, not the suite.
_SINGLE_TEST = frozenset(("a", "an", "any", "one", "some", "single", "another", "whichever"))
# "delegate to well-tested stdlib APIs": an adjective about something the change uses, not about the change.
_PREPOSITIONS = frozenset("to on upon by with from of in into onto via using than like unlike over".split())
_ATTRIBUTIVE_KINDS = ("tested", "production_ready")
# Who else fixes things a change then relies on.
_THIRD_PARTY = frozenset(("they", "upstream", "he", "she", "maintainers", "vendor"))
_SENTENCE_END = lazy_re(r"[.!?](?=\s)|\n[ \t]*\n|\n[ \t]*(?:[-*+]|\d+[.)])[ \t]")
_BULLET_LEAD = lazy_re(r"^\s*(?:[-*+]|\d+[.)])\s+")


# How far around a claim its sentence is read. Real sentences are far shorter; the bound keeps a hostile
# message (one 64 KB "sentence" of claims) linear instead of quadratic.
_CONTEXT = 2000
_WORDS = 200


def _sentence_start(prose: str, pos: int) -> int:
    """Where the sentence holding `pos` starts: after the last sentence end, blank line or list bullet;
    the title (first line) is a sentence of its own."""
    first_nl = prose.find("\n", 0, pos)
    floor = 0 if first_nl == -1 else first_nl + 1
    start = floor = max(floor, pos - _CONTEXT)
    for m in _SENTENCE_END.finditer(prose, floor, pos):
        start = m.end() if m.group(0)[0] in ".!?" else m.start() + 1
    return start


def _words(text: str) -> list[str]:
    return [w.strip(_WORD_EDGE).lower().replace("\u2019", "'") for w in text.split()]


def _clause(words: list[str]) -> list[str]:
    """The words after the last conjunction."""
    for i in range(len(words) - 1, -1, -1):
        if words[i] in ("but", "and", "so", "because", "while", "although", "though", "however"):
            return words[i + 1:]
    return words


def _conditional(sentence_head: str) -> bool:
    words = [w for w in _words(_BULLET_LEAD.sub("", sentence_head)) if w]
    return bool(words) and words[0] in _CONDITIONAL_OPENERS


def _about_something_else(kind: ClaimKind, before: str, after: str) -> bool:
    words = [w for w in _words(before) if w]
    if kind.key == "tests_pass" and words and words[-1] in _SINGLE_TEST:
        return True
    if kind.key == "fixed" and _THIRD_PARTY.intersection(_clause(words)):
        return True  # "upstream fixed the BIT issue, so drop the workaround": someone else's fix
    if kind.key == "backward_compatible" and (words and words[-1] in ("for", "of") or re.match(r"\s+with\b", after)):
        # "kept for backward compatibility", "compatible with older servers": the purpose of one piece, or
        # compatibility with something else than this project's callers
        return True
    if kind.key in _ATTRIBUTIVE_KINDS:
        # "to well-tested APIs", "on a battle-tested library": preposition (+ article), adjective, noun
        lead = [w for w in words[-3:] if w not in ("a", "an", "the", "its", "their", "our", "some")]
        followed_by_noun = bool(re.match(r"\s+[A-Za-z][\w-]*", after)) and not re.match(
            r"\s+(?:and|or|but|now|too|as|so|since|because|with|in|on|by)\b", after, re.I)
        return bool(lead) and lead[-1] in _PREPOSITIONS and followed_by_noun
    return False


def _rate(m: re.Match) -> float | None:
    groups = m.groupdict()
    if not groups:
        return None
    value = groups.get("rate") or groups.get("rate2")
    return min(float(value), 100.0) / 100 if value else 1.0


def extract(message: str | None) -> tuple[list[Claim], list[ChecklistItem]]:
    """Claims in a message and its checklist items. Checklist lines are not free-text claims."""
    if not message:
        return [], []
    masked = mask_message(message)
    lines = masked.split("\n")
    original = message.replace("\r\n", "\n").split("\n")
    checklist: list[ChecklistItem] = []
    prose_lines: list[str] = []
    skip_section = False
    for i, line in enumerate(lines):
        m = _CHECKLIST.match(line) if "[" in line else None
        if m:
            own = _CHECKLIST.match(original[i]) if i < len(original) else None
            text = own.group(2) if own else m.group(2)
            checklist.append(ChecklistItem(m.group(1) in "xX", text.strip(), i + 1))
            prose_lines.append(" " * len(line))
            continue
        if "#" in line and _HEADING.match(line):
            skip_section = bool(_HEADING_NEGATIVE.match(line))
        prose_lines.append(" " * len(line) if skip_section else line)
    prose = "\n".join(prose_lines)
    claims: list[Claim] = []
    seen: set[tuple[str, int]] = set()
    lowered = prose.lower()
    line_starts = [0] + [nl.end() for nl in re.finditer("\n", prose)]
    for kind in CLAIM_KINDS:
        if not any(word in lowered for word in _KEYWORDS[kind.key]):
            continue
        for m in kind.pattern.finditer(prose):
            line = bisect.bisect_right(line_starts, m.start())
            start = _sentence_start(prose, m.start())  # a sentence may be wrapped over lines
            before = prose[start:m.start()].replace("\n", " ")
            after = prose[m.end():m.end() + _CONTEXT]
            # The judgements read a few words: the sentence's first ones, and the last ones before the claim.
            head, tail = before[:_WORDS], before[-_WORDS:]
            if _negated(tail, kind) or _question(after) or _about_something_else(kind, tail, after) \
                    or _conditional(head):
                continue
            if (kind.key, line) in seen:
                continue
            seen.add((kind.key, line))
            sentence = original[line - 1].strip() if line - 1 < len(original) else m.group(0)
            claims.append(Claim(kind, m.group(0).strip(), line, sentence,
                                rate=_rate(m) if kind.key == "coverage" else None))
    claims.sort(key=lambda c: (c.line, c.kind.code))
    return claims, checklist


# What a message says its change is about, for claims judged against what the change touches ("Fixes #12" on a
# change of docs only is consistent when the message says it fixes the docs). Words of the trade, not of a project.
_TOPIC_WORDS = {
    "docs": lazy_re(r"\b(?:docs?|documentation|documented|document(?:s|ing)?|docstrings?|readme|changelog|change\s+log"
                    r"|release\s+notes|news|typos?|spelling|grammar|wording|phrasing|rephras(?:e|es|ed|ing)"
                    r"|reword(?:s|ed|ing)?|links?|urls?|anchors?|examples?|tutorials?|guides?|how-?tos?|faq|glossary"
                    r"|markup|markdown|rst|restructuredtext|sphinx|mkdocs|render(?:s|ed|ing)?|headings?|sections?"
                    r"|paragraphs?|sentences?|clarif(?:y|ies|ied|ying|ication)|explain(?:s|ed|ing)?|explanation"
                    r"|describ(?:e|es|ed|ing)|description|mention(?:s|ed)?|notes?|manual|man\s+page|help\s+text"
                    r"|licen[cs]e|authors?|contributors?|copyright|toc|index|api\s+reference)\b", re.I),
    "tests": lazy_re(r"\b(?:tests?|testing|tested|testsuite|flak(?:y|iness)|xfail(?:s|ed)?|skip(?:s|ped)?|fixtures?"
                     r"|pytest|unittest|tox|nox|conftest|coverage|ci|assert(?:s|ion|ions)?|mocks?)\b", re.I),
}


def message_topics(message: str | None) -> set[str]:
    """Which kinds of file ("docs", "tests") the author's own words say the change is about."""
    if not message:
        return set()
    text = mask_message(message)
    return {topic for topic, pattern in _TOPIC_WORDS.items() if pattern.search(text)}
