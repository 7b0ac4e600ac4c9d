"""Governed experience cards: the typed model and the deterministic quality checklist.

A card has an index layer (what search sees: problem_summary, signals, tags), a resolution layer (what browse
returns: root_cause, fix_strategy, patch_digest, verification), provenance and quality. The checklist below is
exactly the one in docs/card-format.md; it runs on the raw JSON object so that a card with a missing or mistyped
field yields a readable list of problems instead of an exception. Only cards with no problem enter the index.

This module imports pydantic: it is used by the memory commands and the index builder, never by the hook path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

CHECKLIST_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tags(_Strict):
    language: str
    components: list[str]
    exceptions: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)
    # Mechanism taxonomy tags (sentinel.memory.cards.taxonomy) and exact-match identifiers (functions, classes, options
    # the fix touched); both optional so hand-written cards without them stay valid.
    mechanisms: list[str] = Field(default_factory=list)
    identifiers: list[str] = Field(default_factory=list)
    # The source files the fix changed (repository-relative POSIX paths; learned cards): what the project's
    # code map points a query at (sentinel.memory.cards.codemap).
    files: list[str] = Field(default_factory=list)
    # The functions, methods and classes whose code the fix changed, "path::Qualname" (learned cards; read from
    # the fix's diff with the AST): where a finding in the same code finds its past fix.
    # Recall at a failure puts a past fix of the failing definition first (sentinel.memory.retrieval.site).
    symbols: list[str] = Field(default_factory=list)


class Chunk(_Strict):
    what: str
    why: str


class CodeChange(_Strict):
    """One change of the fix as the AST saw it: where, what kind (taxonomy.CHANGE_KINDS), before -> after."""

    symbol: str  # "path::Qualname", or "path" for module-level code
    kind: str
    detail: str


class Excerpt(_Strict):
    """The key lines of the fix, before and after (redacted; learned cards only: the project's own code)."""

    file: str
    symbol: str = ""
    before: str = ""
    after: str = ""


class PatchDigest(_Strict):
    areas: list[str]
    chunks: list[Chunk]
    changes: list[CodeChange] = Field(default_factory=list)
    excerpt: Excerpt | None = None


class RegressionTest(_Strict):
    """The test the fix added (or changed) and the check in it that pins the bug."""

    name: str
    file: str = ""
    assertion: str = ""


class Verification(_Strict):
    reproduction: str
    tests_added: list[str]
    edge_cases: list[str] = Field(default_factory=list)
    regression_test: RegressionTest | None = None


class Provenance(_Strict):
    source: Literal["fixrecord", "rule-class", "imported", "learned"]
    record_id: str | None = None
    repository: str | None = None
    commit: str | None = None
    license: str | None = None
    references: list[str] = Field(default_factory=list)
    date: str | None = None  # when the fix was committed (ISO 8601)
    url: str | None = None  # the issue or pull request the fix closed, when known


class Quality(_Strict):
    governed_by: str
    # Filled in by the checklist when a card is written by `sentinel memory import`; recomputed on every build.
    checklist: dict[str, Any] | None = None
    # Written by `sentinel memory learn`: how sure the standardiser is of the card (0-1), which standardiser
    # wrote it ("deterministic" or "llm:MODEL"), the QC refine rounds it took and the purification relevance.
    confidence: float | None = None
    standardiser: str | None = None
    refine_rounds: int | None = None
    relevance: float | None = None


class Card(_Strict):
    # Index layer: what search sees.
    id: str
    problem_summary: str
    signals: list[str]
    tags: Tags
    # Resolution layer: what browse returns.
    root_cause: str
    fix_strategy: str
    patch_digest: PatchDigest
    verification: Verification
    provenance: Provenance
    quality: Quality

    def index_text(self) -> str:
        """The text the embedder sees: the index layer only (the resolution layer would dilute the symptom).
        The deterministic standardiser's template words carry no meaning and are left out of the vector."""
        summary = self.problem_summary
        if self.quality.standardiser == "deterministic" and _TEMPLATE_HEAD.match(summary):
            summary = _TEMPLATE_WORDS.sub(" ", summary)
        parts = [summary, "; ".join(self.signals), ", ".join(self.tags.components)]
        if self.tags.exceptions:
            parts.append(", ".join(self.tags.exceptions))
        if self.tags.mechanisms:
            from sentinel.memory.cards.taxonomy import label

            parts.append(", ".join(label(m) for m in self.tags.mechanisms))
        return ". ".join(parts)

    def lexical_fields(self) -> list[str]:
        """The text BM25 indexes: problem_summary + signals + tags (identifiers split into their words)."""
        from sentinel.memory.cards.identifiers import split_words
        from sentinel.memory.cards.taxonomy import label

        t = self.tags
        idents = [" ".join(split_words(i)) for i in t.identifiers]
        return [self.problem_summary, *self.signals, t.language, *t.components, *t.exceptions, *t.rules,
                *(label(m) for m in t.mechanisms), *idents]

    def to_json(self) -> dict:
        return self.model_dump(mode="json", exclude_none=True)


# ---------------------------------------------------------------------------------------------------------------
# The checklist (docs/card-format.md). Each rule adds problems of the form "field: what is wrong".

ID_RE = re.compile(r"^[a-z0-9-]+$")
# the fixed phrases of sentinel.memory.learn.standardise's summary template
_TEMPLATE_WORDS = re.compile(r"\b(?:Incorrect behaviour|An unexpected|A regression|A spurious or missing|"
                             r"A misleading error report|A hang or endless loop|A resource leak|"
                             r"Needlessly slow or memory-hungry behaviour|in the|component around|component|"
                             r"involving|Likely mechanism)\b")
# how those template summaries begin (cards written before the standardiser quoted the project's own words)
_TEMPLATE_HEAD = re.compile(r"(?:Incorrect behaviour|An unexpected|A regression|A spurious or missing|"
                            r"A misleading error report|A hang or endless loop|A resource leak|"
                            r"Needlessly slow or memory-hungry behaviour) in the ")
RULE_CODE_RE = re.compile(r"^SEN\d{3}$")
# 7+ hex characters mixing digits and letters: a commit hash. Pure numbers ("1048576") and words made of
# a-f letters only ("defaced") are not hashes.
HASH_RE = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{7,}(?![0-9A-Za-z])")
URL_RE = re.compile(r"\b(?:https?|ftp|file)://|\bwww\.[a-z0-9-]+\.", re.IGNORECASE)
# A path: rooted (/x, ./x, ~/x, C:\x), two or more slash-separated segments, or a file name with a code extension.
PATH_RE = re.compile(
    r"(?:(?<![\w.])(?:\.{1,2}|~)?/[\w.-]+/[\w.-]+"
    r"|(?<![\w/])[\w.-]+/[\w.-]+/[\w./-]+"
    r"|(?<![\w/.-])[\w-]+/[\w-]+\.[a-z]{1,5}\b"
    r"|\b[A-Za-z]:\\[\w\\. -]+"
    r"|(?<![\w/.-])[A-Za-z_][\w-]*\.(?:py|pyi|pyx|cfg|toml|ini|ya?ml|json|lock|rst|md|txt|sh|go|rs|java|kt|rb|php|"
    r"cc|cpp|hpp|cs|tsx?|jsx|mjs|cjs|js)\b)")
# Product names spelled like file names: "Node.js" is a runtime, not a path.
_JS_PRODUCTS = {"node", "vue", "next", "nuxt", "react", "express", "three", "d3", "chart", "ember", "backbone", "deno"}
IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Project names that are never English words in a bug summary.
PROJECT_NAMES = frozenset({
    "sqlalchemy", "pytest", "pip", "aiohttp", "tox", "virtualenv", "setuptools", "flask", "django", "numpy",
    "pandas", "scipy", "pydantic", "fastapi", "werkzeug", "jinja2", "urllib3", "httpx", "boto3", "botocore",
    "pipenv", "flake8", "mypy", "pylint", "docutils", "tensorflow", "pytorch", "matplotlib", "sklearn",
    "scikit-learn", "pyyaml", "setuptools-scm", "pluggy", "asyncpg", "psycopg2", "psycopg", "alembic",
    "gunicorn", "uvicorn", "starlette", "sentry", "pypa",
})
# Project names that are also ordinary words ("HTTP requests", "black box"): flagged only when written as a
# project: capitalised mid-sentence, in backticks, dotted (requests.get) or followed by library/package/...
AMBIGUOUS_NAMES = frozenset({"requests", "black", "poetry", "celery", "twisted", "tornado", "click", "rich",
                             "trio", "attrs", "hatch", "sphinx", "nox"})
_PROJECT_NOUN = r"(?:library|package|project|module|plugin|framework|maintainers)"
LANGUAGES = frozenset({
    "python", "javascript", "typescript", "go", "rust", "java", "kotlin", "scala", "c", "c++", "cpp", "c#",
    "csharp", "f#", "ruby", "php", "swift", "objective-c", "dart", "elixir", "erlang", "haskell", "ocaml",
    "clojure", "lua", "perl", "r", "julia", "shell", "bash", "powershell", "sql", "html", "css", "zig", "nim",
    "groovy", "fortran", "matlab", "solidity", "terraform", "hcl", "yaml", "toml", "json", "dockerfile", "any",
    "multiple", "cython", "webassembly", "vba", "cobol", "assembly", "crystal", "d", "vb.net",
})
DIFF_LINE_RE = re.compile(r"^(?:\+|-|@@|diff --git)")
# "e.g. Foo" and "i.e. Bar" do not end a sentence.
_ABBREV_RE = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp)\.", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.!?]+[\"')\]]*\s+(?=[A-Z0-9\"'(`])")

LIMITS = {
    "problem_summary": (40, 400), "signals": (10, 18), "signal_words": (2, 4), "components": (1, 5),
    "root_cause": (80, 1200), "fix_strategy": (80, 1200), "areas": (1, 6), "chunks": (3, 8), "chunk_chars": 300,
    "tests_added": (1, 10), "edge_cases": (0, 8), "ident_chars": 24, "sentences": 2, "identifiers": 24,
    "files": 30, "symbols": 30, "changes": 8, "excerpt_lines": 8, "excerpt_chars": 600, "assertion_chars": 300,
}
# "path::Qualname": a repository-relative path and a dotted name (`Response.iter_lines`, `parse_header`)
SYMBOL_RE = re.compile(r"^([^/\\\s:][^\\:\n]*)::([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)$")
IDENT_ENTRY_RE = re.compile(r"^[A-Za-z_][\w.-]*$")
REL_PATH_RE = re.compile(r"^[^/\\\s:][^\\:\n]*$")


def _s(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _get(raw: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(raw, dict):
            return None
        raw = raw.get(key)
    return raw


def _str_list(raw: Any, name: str, problems: list[str]) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        problems.append(f"{name}: must be a list of strings")
        return []
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, str) or not item.strip():
            problems.append(f"{name}[{i}]: must be a non-empty string")
        else:
            out.append(item.strip())
    return out


def _count(items: list, name: str, lo: int, hi: int, problems: list[str]) -> None:
    if not lo <= len(items) <= hi:
        problems.append(f"{name}: {len(items)} entries, expected {lo}-{hi}")


def _length(text: str, name: str, lo: int, hi: int, problems: list[str]) -> None:
    if text and not lo <= len(text) <= hi:
        problems.append(f"{name}: {len(text)} characters, expected {lo}-{hi}")


def _names_re(names) -> re.Pattern:
    alternation = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(rf"(?<![\w-])(?:{alternation})(?![\w-])", re.IGNORECASE)


_PROJECT_RE = _names_re(PROJECT_NAMES)
_AMBIGUOUS_RES = {
    name: re.compile(rf"`{name}`|(?<![\w-]){name}\.[a-z_]|(?<![\w-]){name}\s+{_PROJECT_NOUN}\b"
                     rf"|\bimport\s+{name}\b|(?<=[a-z,;:]\s){name.capitalize()}\b"
                     rf"|(?<![\w-]){name.capitalize()}\s+{_PROJECT_NOUN}\b")
    for name in sorted(AMBIGUOUS_NAMES)
}


def project_names_in(text: str, repository: str | None = None) -> list[str]:
    """Repository or project names found in text (the card's own repository's names always count)."""
    found = {m.group(0).lower() for m in _PROJECT_RE.finditer(text)}
    if repository:
        own = {part for part in re.split(r"[/\s]+", repository.lower())
               # "python/mypy": a language name in a repository path is not a project name in prose
               if len(part) >= 3 and part not in AMBIGUOUS_NAMES and part not in LANGUAGES}
        if own:
            found |= {m.group(0).lower() for m in _names_re(own).finditer(text)}
    lower = text.lower()
    found |= {name for name, rx in _AMBIGUOUS_RES.items() if name in lower and rx.search(text)}
    return sorted(found)


def own_names(repository: str | None) -> set[str]:
    """The names of a card's own repository ("python-trio/trio" -> python-trio, trio)."""
    return {p for p in re.split(r"[/\s]+", (repository or "").lower()) if len(p) >= 3}


def sentence_count(text: str) -> int:
    body = _ABBREV_RE.sub("eg", text.strip())
    return len(_SENTENCE_END_RE.findall(body)) + 1 if body else 0


def long_identifiers(text: str, limit: int = LIMITS["ident_chars"]) -> list[str]:
    out = []
    for m in IDENT_RE.finditer(text):
        word = m.group(0)
        if len(word) > limit and ("_" in word.strip("_") or re.search(r"[a-z][A-Z]", word)):
            out.append(word)
    return out


def file_paths_in(text: str) -> list[str]:
    out = []
    for m in PATH_RE.finditer(text):
        hit = m.group(0)
        stem, _, ext = hit.rpartition(".")
        if ext == "js" and stem.lower() in _JS_PRODUCTS:
            continue
        out.append(hit)
    return out


def signal_words(signal: str) -> int:
    """Words of one signal; an alias separator ("NPE / null pointer") is not a word."""
    return sum(1 for w in signal.split() if any(ch.isalnum() or ch == "_" for ch in w))


def check_card(raw: Any) -> list[str]:
    """Problems of one card (empty when it passes). Uniqueness of ids is checked by check_corpus."""
    if not isinstance(raw, dict):
        return ["card: must be a JSON object"]
    problems: list[str] = []
    try:
        Card.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "card"
            kind = {"missing": "missing", "extra_forbidden": "unknown field"}.get(err["type"], err["msg"])
            problems.append(f"{where}: {kind}")

    # all fields present and non-empty
    for path in (("id",), ("problem_summary",), ("root_cause",), ("fix_strategy",), ("tags", "language"),
                 ("verification", "reproduction"), ("provenance", "source"), ("quality", "governed_by")):
        value = _get(raw, *path)
        if value is not None and isinstance(value, str) and not value.strip():
            problems.append(f"{'.'.join(path)}: empty")

    card_id = _s(raw.get("id"))
    if card_id and not ID_RE.match(card_id):
        problems.append(f"id: {card_id!r} must be lowercase letters, digits and '-'")

    repository = _s(_get(raw, "provenance", "repository")) or None
    summary = _s(raw.get("problem_summary"))
    if summary:
        _length(summary, "problem_summary", *LIMITS["problem_summary"], problems)
        n = sentence_count(summary)
        if n > LIMITS["sentences"]:
            problems.append(f"problem_summary: {n} sentences, expected one or two")
        names = project_names_in(summary, repository)
        if _s(_get(raw, "provenance", "source")) == "learned":  # its own history: its own name is no leak
            names = [n for n in names if n not in own_names(repository)]
        if names:
            problems.append(f"problem_summary: names a repository or project ({', '.join(names)})")
        hashes = HASH_RE.findall(summary)
        if hashes:
            problems.append(f"problem_summary: contains a commit hash ({hashes[0]})")
        if URL_RE.search(summary):
            problems.append("problem_summary: contains a URL")
        paths = file_paths_in(summary)
        if paths:
            problems.append(f"problem_summary: contains a file path ({paths[0]})")
        idents = long_identifiers(summary)
        if idents:
            problems.append(f"problem_summary: over-specific identifier ({idents[0]}, over "
                            f"{LIMITS['ident_chars']} characters)")

    signals = _str_list(raw.get("signals"), "signals", problems)
    if isinstance(raw.get("signals"), list):
        _count(signals, "signals", *LIMITS["signals"], problems)
        lo, hi = LIMITS["signal_words"]
        for s in signals:
            n = signal_words(s)
            if not lo <= n <= hi:
                problems.append(f"signals: {s!r} has {n} words, expected {lo}-{hi}")
        seen: set[str] = set()
        for s in signals:
            key = " ".join(s.lower().split())
            if key in seen:
                problems.append(f"signals: duplicate entry {s!r}")
            seen.add(key)

    tags = raw.get("tags")
    if isinstance(tags, dict):
        lang = _s(tags.get("language"))
        if lang and lang.lower() not in LANGUAGES:
            problems.append(f"tags.language: {lang!r} is not a language name")
        components = _str_list(tags.get("components"), "tags.components", problems)
        if isinstance(tags.get("components"), list):
            _count(components, "tags.components", *LIMITS["components"], problems)
        _str_list(tags.get("exceptions"), "tags.exceptions", problems)
        for code in _str_list(tags.get("rules"), "tags.rules", problems):
            if not RULE_CODE_RE.match(code):
                problems.append(f"tags.rules: {code!r} is not a Sentinel rule code (SENnnn)")
        from sentinel.memory.cards.taxonomy import BY_TAG

        for tag in _str_list(tags.get("mechanisms"), "tags.mechanisms", problems):
            if tag not in BY_TAG:
                problems.append(f"tags.mechanisms: {tag!r} is not a mechanism of the taxonomy")
        idents = _str_list(tags.get("identifiers"), "tags.identifiers", problems)
        _count(idents, "tags.identifiers", 0, LIMITS["identifiers"], problems)
        for ident in idents:
            if len(ident) > 80 or not IDENT_ENTRY_RE.match(ident):
                problems.append(f"tags.identifiers: {ident[:40]!r} is not an identifier")
        paths = _str_list(tags.get("files"), "tags.files", problems)
        _count(paths, "tags.files", 0, LIMITS["files"], problems)
        for path in paths:
            if not REL_PATH_RE.match(path) or ".." in path.split("/") or len(path) > 300:
                problems.append(f"tags.files: {path[:60]!r} is not a relative POSIX path")
        symbols = _str_list(tags.get("symbols"), "tags.symbols", problems)
        _count(symbols, "tags.symbols", 0, LIMITS["symbols"], problems)
        for sym in symbols:
            m = SYMBOL_RE.match(sym)
            if not m or ".." in m.group(1).split("/") or len(sym) > 400:
                problems.append(f"tags.symbols: {sym[:60]!r} is not \"path::Qualname\"")

    for name in ("root_cause", "fix_strategy"):
        _length(_s(raw.get(name)), name, *LIMITS[name], problems)

    digest = raw.get("patch_digest")
    if isinstance(digest, dict):
        areas = _str_list(digest.get("areas"), "patch_digest.areas", problems)
        if isinstance(digest.get("areas"), list):
            _count(areas, "patch_digest.areas", *LIMITS["areas"], problems)
        texts = list(areas)
        chunks = digest.get("chunks")
        if isinstance(chunks, list):
            _count(chunks, "patch_digest.chunks", *LIMITS["chunks"], problems)
            for i, chunk in enumerate(chunks):
                if not isinstance(chunk, dict):
                    problems.append(f"patch_digest.chunks[{i}]: must be an object with what and why")
                    continue
                what, why = _s(chunk.get("what")), _s(chunk.get("why"))
                for key, val in (("what", what), ("why", why)):
                    if not val:
                        problems.append(f"patch_digest.chunks[{i}].{key}: missing or empty")
                size = len(what) + len(why)
                if size > LIMITS["chunk_chars"]:
                    problems.append(f"patch_digest.chunks[{i}]: {size} characters, at most {LIMITS['chunk_chars']}")
                texts += [chunk.get("what") or "", chunk.get("why") or ""]
        for text in texts:
            if not isinstance(text, str):
                continue
            for line in text.splitlines():
                if DIFF_LINE_RE.match(line):
                    problems.append(f"patch_digest: looks like a pasted diff ({line[:40]!r})")
                    break
        problems += _code_facts(digest)

    verification = raw.get("verification")
    if isinstance(verification, dict):
        tests = _str_list(verification.get("tests_added"), "verification.tests_added", problems)
        if isinstance(verification.get("tests_added"), list):
            _count(tests, "verification.tests_added", *LIMITS["tests_added"], problems)
        edges = _str_list(verification.get("edge_cases"), "verification.edge_cases", problems)
        _count(edges, "verification.edge_cases", *LIMITS["edge_cases"], problems)
        reg = verification.get("regression_test")
        if isinstance(reg, dict) and len(str(reg.get("assertion", ""))) > LIMITS["assertion_chars"]:
            problems.append(f"verification.regression_test.assertion: longer than {LIMITS['assertion_chars']} "
                            "characters")

    prov = raw.get("provenance")
    if isinstance(prov, dict):
        source = prov.get("source")
        refs = _str_list(prov.get("references"), "provenance.references", problems)
        required = {"fixrecord": ("record_id", "repository", "commit", "license"),
                    "imported": ("record_id", "license"), "learned": ("repository", "commit")}.get(source, ())
        for key in required:
            if not _s(prov.get(key)):
                problems.append(f"provenance.{key}: required when source is {source}")
        if source == "rule-class" and not refs:
            problems.append("provenance.references: required when source is rule-class (CWE, CVE, advisory, docs)")
    return _dedupe(problems)


def _code_facts(digest: dict) -> list[str]:
    """The checklist of the optional code layer: changes of known kinds, a short excerpt."""
    from sentinel.memory.cards.taxonomy import CHANGE_KINDS

    problems: list[str] = []
    changes = digest.get("changes")
    if isinstance(changes, list):
        _count(changes, "patch_digest.changes", 0, LIMITS["changes"], problems)
        for i, ch in enumerate(changes):
            if isinstance(ch, dict) and ch.get("kind") not in CHANGE_KINDS:
                problems.append(f"patch_digest.changes[{i}].kind: {str(ch.get('kind'))[:40]!r} is not a change kind")
            if isinstance(ch, dict) and len(str(ch.get("detail", ""))) > LIMITS["chunk_chars"]:
                problems.append(f"patch_digest.changes[{i}].detail: longer than {LIMITS['chunk_chars']} characters")
    excerpt = digest.get("excerpt")
    if isinstance(excerpt, dict):
        for side in ("before", "after"):
            text = excerpt.get(side) or ""
            if isinstance(text, str) and (len(text) > LIMITS["excerpt_chars"]
                                          or text.count("\n") >= LIMITS["excerpt_lines"]):
                problems.append(f"patch_digest.excerpt.{side}: at most {LIMITS['excerpt_lines']} lines and "
                                f"{LIMITS['excerpt_chars']} characters")
        path = excerpt.get("file")
        if isinstance(path, str) and (not REL_PATH_RE.match(path) or ".." in path.split("/")):
            problems.append(f"patch_digest.excerpt.file: {path[:60]!r} is not a relative POSIX path")
    return problems


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def check_corpus(cards: Iterable[Any]) -> list[list[str]]:
    """Problems per card, in order, including ids that are not unique across the corpus."""
    cards = list(cards)
    out = [check_card(c) for c in cards]
    first: dict[str, int] = {}
    for i, raw in enumerate(cards):
        card_id = _s(raw.get("id")) if isinstance(raw, dict) else ""
        if not card_id:
            continue
        if card_id in first:
            out[i].append(f"id: {card_id!r} is not unique (also card #{first[card_id] + 1})")
        else:
            first[card_id] = i
    return out


def checklist_scores(raw: dict, problems: list[str]) -> dict:
    """The quality block the checklist computes: which rule groups passed."""
    groups = ("id", "problem_summary", "signals", "tags", "root_cause", "fix_strategy", "patch_digest",
              "verification", "provenance", "quality")
    failed = {g for g in groups for p in problems if p.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0] == g}
    passed = len(groups) - len(failed)
    return {"version": CHECKLIST_VERSION, "passed": passed, "total": len(groups),
            "score": round(passed / len(groups), 3), "failed": sorted(failed)}


def parse_card(raw: dict) -> Card:
    """A typed card from a raw one that passed check_card."""
    return Card.model_validate(raw)
