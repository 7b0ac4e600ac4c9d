"""The jail's settings, derived once per configuration, and the keyword probes that keep unsuspicious changes cheap."""

from __future__ import annotations

import functools
import re

from sentinel.checks.base import FileContext
from sentinel.lazyre import LazyPattern
from sentinel.models import Finding
from sentinel.record import Record
from sentinel.rules import Rule

_lazy = LazyPattern  # compiled on first use: most runs need few of these patterns


class _Settings(Record, frozen=True):
    banned_imports: tuple[str, ...]
    banned_py: frozenset[str]
    banned_npm: frozenset[str]
    allowed_py: frozenset[str] | None
    allowed_npm: frozenset[str] | None
    protected: tuple[str, ...]
    exceptions: tuple[str, ...]
    classes: frozenset[str]
    py_probes: tuple  # calls worth an AST walk (imports, SQL and protected writes are gated separately)
    write_fragments: tuple[str, ...] | None

    @property
    def wants_manifests(self) -> bool:
        return bool(self.banned_py) or self.allowed_py is not None


def normalize_dist(name: str) -> str:
    """PEP 503 project name normalization."""
    return re.sub(r"[-_.]+", "-", name).lower()


# Gates, so that a change with nothing suspicious never parses or walks a tree. Python's re is
# slow on alternations (every branch is tried at every position), so each probe is a keyword found
# by C-speed substring search, then confirmed by a precise regex on the lines around it only.
# A probe is (keyword, precise regex or None, extra lines after the keyword's line to search).
_PROBES_FS = (("rmtree", None, 0), ("removedirs", None, 0), ("unlink", None, 0), ("rmdir", None, 0),
              ("remove", _lazy(r"(?<![\w.])remove\s*\(|\bos\s*\.\s*remove\b|\bimport\b.*\bremove\b"), 0))
_PROBES_PROC = (("kill", _lazy(r"\bos\s*\.\s*kill|\bkillpg\b|(?<![\w.])kill\s*\(|\bimport\b.*\bkill\b"), 0),
                ("rm", _lazy(r"\brm\s+-|['\"/]rm['\"]"), 0),
                ("git", _lazy(r"\bgit\b.{0,80}?\b(?:push|reset|clean)\b"), 1))
_PROBES_SQL = (("drop", _lazy(r"\bdrop\s+(?:table|database|schema)\b"), 1),  # run on lowercased text
               ("truncate", _lazy(r"\btruncate\b"), 0), ("delete", _lazy(r"\bdelete\s+from\b"), 1),
               # ORM and schema APIs: metadata.drop_all(), table.drop(engine), query(...).delete(), delete(Model)
               ("drop_all", None, 0), (".drop(", None, 0),
               ("delete(", _lazy(r"\)\s*\.\s*delete\s*\(|(?<![\w.])delete\s*\(\s*[a-z_]"), 0))
_PROBES_WRITE = (("write_text", None, 0), ("write_bytes", None, 0), ("O_WRONLY", None, 0), ("O_RDWR", None, 0),
                 ("O_CREAT", None, 0), ("O_APPEND", None, 0),
                 ("open", _lazy(r"['\"][rbtU]*[wax+][rwaxbt+]*['\"]|\bmode\s*="), 2),
                 ("copy", _lazy(r"\bcopy(?:2|file|tree)?\s*\("), 0), ("move", _lazy(r"\bmove\s*\("), 0))
_PROBES_SHELL = (("rm", _lazy(r"\brm\b"), 0), ("git", _lazy(r"\bgit\b.{0,200}?\b(?:push|reset|clean)\b"), 1))
_MARKERS = (".ssh", ".git", ".aws", "id_rsa", ".env")


def probe(text: str, probes) -> bool:
    """Does any probe's keyword occur in ``text`` with its precise regex matching around it?"""
    for keyword, precise, extra in probes:
        if keyword not in text:
            continue
        if precise is None:
            return True
        i = text.find(keyword)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            end = i
            for _ in range(extra + 1):
                end = text.find("\n", end + 1)
                if end < 0:
                    end = len(text)
                    break
            if precise.search(text, start, end):
                return True
            i = text.find(keyword, end)
    return False


def _fragments(patterns: tuple[str, ...]) -> tuple[str, ...] | None:
    """Literal pieces of the protected globs (a file naming none of them cannot write one), or
    None when some glob has no literal part and could match anything."""
    pieces = set(_MARKERS)
    for pat in patterns:
        literal = [p for p in (re.sub(r"\[[^\]]*\]|[*?]", "", c) for c in pat.split("/")) if len(p) >= 3]
        if not literal:
            return None
        pieces.add(literal[-1])
    return tuple(sorted(pieces))


def _settings(cfg) -> _Settings:
    key = (tuple(cfg.banned_imports), tuple(cfg.banned_dependencies),
           None if cfg.allowed_dependencies is None else tuple(cfg.allowed_dependencies),
           tuple(cfg.protected_paths), tuple(cfg.extra_protected_paths), tuple(cfg.protected_exceptions),
           tuple(cfg.destructive))
    return _build_settings(key)


@functools.lru_cache(maxsize=16)
def _build_settings(key) -> _Settings:
    imports, deps, allowed, protected, extra, exceptions, destructive = key
    banned_imports = tuple(dict.fromkeys(n.strip() for n in imports if n and n.strip()))
    deps = [d.strip() for d in deps if d and d.strip()]
    classes = frozenset(c.strip().lower() for c in destructive)
    probes: tuple = ()
    if "filesystem" in classes:
        probes += _PROBES_FS
    if "process" in classes:
        probes += _PROBES_PROC
    return _Settings(
        banned_imports=banned_imports,
        banned_py=frozenset(normalize_dist(d) for d in deps),
        banned_npm=frozenset(d.lower() for d in deps),
        allowed_py=None if allowed is None else frozenset(normalize_dist(a) for a in allowed if a.strip()),
        allowed_npm=None if allowed is None else frozenset(a.strip().lower() for a in allowed if a.strip()),
        protected=tuple(protected) + tuple(extra),
        exceptions=tuple(exceptions),
        classes=classes,
        py_probes=probes,
        write_fragments=_fragments(tuple(protected) + tuple(extra)),
    )


class _Out:
    """Findings of one file, one per (rule, line, message)."""

    __slots__ = ("_seen", "ctx", "findings")

    def __init__(self, ctx: FileContext):
        self.ctx = ctx
        self.findings: list[Finding] = []
        self._seen: set = set()

    def add(self, rule: Rule, line: int | None, message: str, column: int | None = None, code: str | None = None):
        key = (rule.code, line, message)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(self.ctx.finding(rule, line, message, column=column, code=code))
