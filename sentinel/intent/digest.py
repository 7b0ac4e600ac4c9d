"""A digest of what a change does in code: files touched and the functions/classes it adds, removes
or modifies. Drift compares it with the task so that an on-topic description of off-topic code does
not pass on its prose alone; claims read it for API removals and side effects.

Python files are read with ``ast`` on the post-change file (added line ranges against definition
ranges); other languages, and Python without content, with declaration patterns on the added and
removed lines plus the hunk section headers git writes (the enclosing function of each hunk).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections import deque

from sentinel.intent import lazy_re
from sentinel.models import FileChange, FileStatus
from sentinel.record import Record, factory

# Past this many lines of not-yet-parsed Python the digest falls back to patterns: a digest is a
# summary and must not cost seconds on a huge change.
_PARSE_BUDGET_LINES = 60_000
_MAX_SYMBOLS = 60

_DECL = lazy_re(
    r"""^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:static\s+)?(?:async\s+)?(?:
        def\s+(?P<def>[A-Za-z_]\w*)\s*\(
      | class\s+(?P<cls>[A-Za-z_]\w*)
      | function\s*\*?\s*(?P<fn>[A-Za-z_$][\w$]*)\s*\(
      | func\s+(?:\([^)]*\)\s*)?(?P<go>[A-Za-z_]\w*)\s*[(\[]
      | fn\s+(?P<rs>[A-Za-z_]\w*)
      | (?:interface|struct|enum|trait|impl|type|module)\s+(?P<typ>[A-Za-z_]\w*)
      | (?:const|let|var)\s+(?P<arrow>[A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?
          (?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)
    )""", re.X)
_PY_DEF = lazy_re(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(|^\s*class\s+([A-Za-z_]\w*)\b")

TEST_PATH = lazy_re(
    r"(?:^|/)(?:tests?|testing|spec|specs|__tests__)/|(?:^|/)test_[^/]+\.py$|_test\.(?:py|go|rb|exs?)$"
    r"|(?:^|/)conftest\.py$|\.(?:spec|test)\.[cm]?[jt]sx?$|(?:Test|Tests|Spec)\.(?:java|kt|cs|scala|swift)$"
    r"|_spec\.rb$")
DOC_PATH = lazy_re(r"(?:^|/)(?:docs?|documentation)/|\.(?:md|rst|txt|adoc)$|(?:^|/)README[^/]*$", re.I)
NEWS_PATH = lazy_re(r"(?:^|/)(?:CHANGE(?:S|LOG)|HISTORY|NEWS|RELEASE[_-]?NOTES)[^/]*$|(?:^|/)(?:changelog|news|"
                       r"changes|changelog\.d|newsfragments|\.changeset)/", re.I)


def is_test_path(path: str) -> bool:
    return bool(TEST_PATH.search(path))


def is_doc_path(path: str) -> bool:
    return bool(DOC_PATH.search(path)) and not is_test_path(path)


class Symbol(Record):
    action: str  # "added", "removed", "modified"
    kind: str  # "function", "class", "declaration"
    name: str  # qualified where known: "Parser.parse"
    path: str
    node: object = None  # the ast node (Python, post-change)
    old_signature: str | None = None  # removed def line(s), Python

    @property
    def public(self) -> bool:
        return not any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
                       for part in self.name.split("."))


class Digest(Record):
    files: list[tuple[str, str]] = factory(list)  # (path, status)
    symbols: list[Symbol] = factory(list)
    headers: list[tuple[str, str]] = factory(list)  # (path, hunk header) without a symbol
    module_level: list[str] = factory(list)  # Python files changed outside any def
    parsed: set[str] = factory(set)  # Python files analysed with ast

    def of_action(self, action: str) -> list[Symbol]:
        return [s for s in self.symbols if s.action == action]

    def summary(self, limit: int = 6) -> str:
        """Short human summary: '3 files; modified Parser.parse, load; added test_load'."""
        parts = [f"{len(self.files)} file{'s' if len(self.files) != 1 else ''}"]
        for action in ("added", "removed", "modified"):
            names = [s.name for s in self.of_action(action)]
            if names:
                more = f" +{len(names) - limit}" if len(names) > limit else ""
                parts.append(f"{action} {', '.join(names[:limit])}{more}")
        return "; ".join(parts)

    def embed_text(self) -> str:
        """The digest as words for an embedding model: identifiers split into words, no labels.

        Labels ("files:", "modified:") and the word "test" are in every digest; calibration showed they only
        pull unrelated changes together, so they are left out.
        """
        out = [path_words(p) for p, _ in self.files[:40]]
        for action in ("modified", "added", "removed"):
            for s in self.of_action(action)[:_MAX_SYMBOLS]:
                out.append(identifier_words(s.name.rsplit(".", 1)[-1] if s.kind == "function" else s.name))
        out.extend(dict.fromkeys(identifier_words(_header_name(h)) for _, h in self.headers[:30]))
        text = "; ".join(w for w in out if w)
        return _TEST_WORD.sub(" ", text).replace("  ", " ").strip()


_TEST_WORD = lazy_re(r"\btests?\b")
_CAMEL = lazy_re(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NOISE_WORDS = {"self", "cls", "init", "py", "src", "lib", "pkg", "internal", "main", "the", "a"}
_EXT = lazy_re(r"\.[A-Za-z0-9]{1,5}$")


def identifier_words(name: str) -> str:
    words = []
    for part in re.split(r"[^A-Za-z0-9]+", name):
        words.extend(w.lower() for w in _CAMEL.findall(part))
    return " ".join(w for w in words if len(w) > 1 and w not in _NOISE_WORDS)


def path_words(path: str) -> str:
    return identifier_words(_EXT.sub("", path))


def _header_name(header: str) -> str:
    m = _DECL.match(header)
    if m:
        return next(g for g in m.groups() if g)
    return header[:80]


def _decl_name(line: str) -> tuple[str, str] | None:
    m = _DECL.match(line)
    if not m:
        return None
    kind = "class" if m.group("cls") or m.group("typ") else "function"
    return next(g for g in m.groups() if g), kind


def build_digest(files: list[FileChange], file_contexts: dict | None = None) -> Digest:
    """Digest of a change. ``file_contexts`` (path -> FileContext) gives post-change content for ast."""
    digest = Digest()
    budget = _PARSE_BUDGET_LINES
    for fc in files:
        digest.files.append((fc.path, fc.status.value))
        if fc.status is FileStatus.BINARY or fc.is_binary:
            continue
        ctx = (file_contexts or {}).get(fc.path)
        tree = None
        if fc.language == "python" and ctx is not None and fc.status is not FileStatus.DELETED:
            already = getattr(ctx, "_parsed", False)
            if already or budget > 0:
                if not already:
                    budget -= len(ctx.lines)
                tree = ctx.tree
        if tree is not None:
            _python_symbols(fc, tree, digest)
            digest.parsed.add(fc.path)
        else:
            _pattern_symbols(fc, digest)
        if len(digest.symbols) > 4 * _MAX_SYMBOLS:
            break
    return digest


_DEF_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _defs(tree: ast.AST) -> list[tuple[int, int, str, ast.AST]]:
    out: list[tuple[int, int, str, ast.AST]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _DEF_TYPES):
                qual = f"{prefix}{child.name}"
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out.append((start, child.end_lineno or child.lineno, qual, child))
                visit(child, qual + ".")
            elif isinstance(child, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or \
                    type(child).__name__ in ("TryStar", "Match", "match_case"):
                visit(child, prefix)

    visit(tree, "")
    return out


def _python_symbols(fc: FileChange, tree: ast.AST, digest: Digest) -> None:
    added = sorted(n for n, text in fc.added.items() if text.strip())  # blank lines change nothing
    defs = _defs(tree)

    def count(lo: int, hi: int) -> int:
        return bisect.bisect_right(added, hi) - bisect.bisect_left(added, lo)

    whole_added: list[tuple[int, int]] = []
    covered_by_child: dict[str, int] = {}
    for start, end, qual, _node in defs:
        parent = qual.rsplit(".", 1)[0] if "." in qual else None
        if parent is not None:
            covered_by_child[parent] = covered_by_child.get(parent, 0) + count(start, end)
    in_defs = 0
    for start, end, qual, node in defs:
        # `defs` is in source order, a definition before its own: the ones reported whole never overlap, so only
        # the last can hold this one (asking all of them was quadratic in a file of many new functions)
        if whole_added and whole_added[-1][0] <= start and end <= whole_added[-1][1]:
            continue  # part of a definition reported as added as a whole
        n = count(start, end)
        if not n:
            continue
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        # A definition whose own line is added is new (one that existed keeps its line as context; a changed
        # signature has a removed line of the same name, handled below).
        if node.lineno in fc.added:
            digest.symbols.append(Symbol("added", kind, qual, fc.path, node))
            whole_added.append((start, end))
        elif n - covered_by_child.get(qual, 0) > 0:
            digest.symbols.append(Symbol("modified", kind, qual, fc.path, node))
    for start, end, qual, _node in defs:
        if "." not in qual:
            in_defs += count(start, end)
    if len(added) > in_defs:
        digest.module_level.append(fc.path)
    names = {qual.rsplit(".", 1)[-1] for _, _, qual, _ in defs}
    # A removed signature goes to the first symbol of this file with its name still without one: each name's
    # symbols queued once (searching every symbol for each removed def was quadratic: 1,000 changed signatures of
    # one name, SEN609's example repeated, asked the symbols a million times)
    waiting: dict[str, deque] | None = None
    for sig_line, name, kind in _removed_defs(fc):
        if name not in names:
            digest.symbols.append(Symbol("removed", kind, name, fc.path, old_signature=sig_line))
        elif kind == "function":
            if waiting is None:
                waiting = {}
                for s in digest.symbols:
                    if s.path == fc.path and s.old_signature is None:
                        waiting.setdefault(s.name.rsplit(".", 1)[-1], deque()).append(s)
            queue = waiting.get(name)
            if queue:
                s = queue.popleft()
                s.old_signature = sig_line
                if s.action == "added":
                    s.action = "modified"  # rewritten in place, not new


def _removed_defs(fc: FileChange) -> list[tuple[str, str, str]]:
    """(signature text, name, kind) of Python definitions on removed lines."""
    out = []
    removed = fc.removed
    for i, (_n, text) in enumerate(removed):
        m = _PY_DEF.match(text)
        if not m:
            continue
        if m.group(2):
            out.append((text.strip(), m.group(2), "class"))
            continue
        sig = text.strip()
        j = i
        while not re.search(r"\)\s*(?:->[^:]*)?:\s*(?:#.*)?$", sig) and j + 1 < len(removed) and j - i < 12:
            j += 1
            sig += " " + removed[j][1].strip()
        out.append((sig, m.group(1), "function"))
    return out


def _pattern_symbols(fc: FileChange, digest: Digest) -> None:
    added_names: dict[str, str] = {}
    for _n, text in sorted(fc.added.items()):
        d = _decl_name(text)
        if d:
            added_names.setdefault(d[0], d[1])
    removed_names: dict[str, tuple[str, str]] = {}
    for _n, text in fc.removed:
        d = _decl_name(text)
        if d:
            removed_names.setdefault(d[0], (d[1], text.strip()))
    for name, kind in added_names.items():
        if name in removed_names:
            digest.symbols.append(Symbol("modified", kind, name, fc.path, old_signature=removed_names[name][1]))
        else:
            digest.symbols.append(Symbol("added", kind, name, fc.path))
    for name, (kind, sig) in removed_names.items():
        if name not in added_names:
            digest.symbols.append(Symbol("removed", kind, name, fc.path, old_signature=sig))
    seen = set(added_names) | set(removed_names)
    for h in fc.hunks:
        header = h.section_header.strip()
        if not header:
            continue
        d = _decl_name(header)
        if d:
            if d[0] not in seen:
                seen.add(d[0])
                digest.symbols.append(Symbol("modified", d[1], d[0], fc.path))
        elif (fc.path, header) not in digest.headers:
            digest.headers.append((fc.path, header))
