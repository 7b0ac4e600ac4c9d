"""Which functions, methods and classes a fix changed, and how: a changed Python file read with the AST.

Both versions of the file are parsed (the source as it was before the fix and after it); every changed line of
the diff is placed in the innermost function or class that holds it on its side, and each such symbol's two
versions are compared by `astchange.compare`. A symbol whose code is the same once docstrings, annotations,
`typing.cast` and `if TYPE_CHECKING:` blocks are set aside did not change behaviour and is not reported.

When a version is missing or does not parse (a fix record or a pull-request patch carries only the diff, a file
written for a newer Python), the diff alone is read: the enclosing function comes from the hunk's own lines and
header, and the removed and added lines are parsed one by one. Files that are not Python give no symbols.
"""

from __future__ import annotations

import ast
import bisect
import re
from itertools import accumulate
from dataclasses import dataclass, field

from sentinel.memory.learn import astchange
from sentinel.memory.learn.astchange import Change

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@ ?(.*)$")
_DEF_LINE = re.compile(r"^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "__future__"})
MAX_SOURCE = 1_500_000  # characters: a generated file this large is not parsed
PY_FILE = re.compile(r"\.pyi?$")
_DOCSTRING = re.compile(r"""^\s*[rRuU]?(?:\"\"\"|\'\'\')""")


@dataclass
class Hunk:
    header: str
    removed: list[tuple[int, str]] = field(default_factory=list)  # (old line number, text)
    added: list[tuple[int, str]] = field(default_factory=list)  # (new line number, text)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (sign " ", "-" or "+", text) in order
    old_span: tuple[int, int] = (0, 0)  # the lines the hunk covers on each side, first and last
    new_span: tuple[int, int] = (0, 0)
    context: list[tuple[int, int]] = field(default_factory=list)  # (old, new) line numbers of unchanged lines


def read_hunks(diff: str) -> list[Hunk]:
    """The hunks of one file's unified diff (tolerant: a diff cut short yields the hunks it has)."""
    out: list[Hunk] = []
    cur: Hunk | None = None
    old = new = 0

    def close() -> None:
        if cur is not None:
            cur.old_span = (cur.old_span[0], max(cur.old_span[0], old - 1))
            cur.new_span = (cur.new_span[0], max(cur.new_span[0], new - 1))

    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            close()
            old, new = int(m.group(1)), int(m.group(2))
            cur = Hunk(header=m.group(3), old_span=(old, old), new_span=(new, new))
            out.append(cur)
            continue
        if cur is None or line.startswith(("+++", "---", "\\")):
            continue
        sign, body = line[:1], line[1:]
        if sign == "-":
            cur.removed.append((old, body))
            old += 1
        elif sign == "+":
            cur.added.append((new, body))
            new += 1
        elif sign == " " or line == "":
            cur.context.append((old, new))
            old += 1
            new += 1
            sign = " "
        else:
            continue
        cur.lines.append((sign, body))
    close()
    return out


@dataclass
class Def:
    qualname: str
    node: ast.AST
    start: int
    end: int


def defs_of(tree: ast.AST) -> list[Def]:
    """Every function and class, nested ones too, with its dotted name (`Class.method`, `outer.inner`) and its
    lines (decorators included), in source order."""
    # (iterative: a recursive closure is a reference cycle, and the CLI runs with the cyclic GC off)
    out: list[Def] = []
    stack: list[tuple[list, str]] = [(list(getattr(tree, "body", [])), "")]
    while stack:
        body, prefix = stack.pop()
        for node in body:
            if isinstance(node, _SCOPES):
                q = prefix + node.name
                start = min([d.lineno for d in node.decorator_list] + [node.lineno])
                out.append(Def(q, node, start, node.end_lineno or node.lineno))
                stack.append((node.body, q + "."))
            elif isinstance(node, _BLOCKS):
                for name in ("body", "orelse", "finalbody"):
                    stack.append((getattr(node, name, None) or [], prefix))
                for h in getattr(node, "handlers", None) or []:
                    stack.append((h.body, prefix))
                for case in getattr(node, "cases", None) or []:
                    stack.append((case.body, prefix))
    return sorted(out, key=lambda d: (d.start, d.qualname))


_SCOPES = astchange._SCOPES
# statements that hold other statements (where a definition may sit)
_BLOCKS = tuple(t for t in (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
                            getattr(ast, "TryStar", None), getattr(ast, "Match", None)) if t is not None)


def innermost(defs: list[Def], line: int) -> Def | None:
    best = None
    for d in defs:
        if d.start <= line <= d.end and (best is None or d.start >= best.start):
            best = d
    return best


@dataclass
class SymbolChange:
    qualname: str  # "" for module-level code
    status: str  # changed / added / removed
    changes: list[Change] = field(default_factory=list)
    removed: list[tuple[int, str]] = field(default_factory=list)  # the diff's lines inside the symbol
    added: list[tuple[int, str]] = field(default_factory=list)
    only_insertions: bool = False  # module level: statements were only added (imports, new names)


@dataclass
class FileChanges:
    path: str
    parsed: bool  # both versions read with the AST (False: from the diff's lines alone)
    symbols: list[SymbolChange] = field(default_factory=list)
    old_names: set[str] = field(default_factory=set)  # the functions and classes of the version before

    @property
    def behaviour_changed(self) -> bool:
        return bool(self.symbols)

    @property
    def existing_changed(self) -> bool:
        """Did code that existed before the fix change? Not when it only adds functions and classes (with the
        imports and names they need); a method added to an existing class changes that class (it overrides or
        completes it), and module-level names added on their own change what the module provides."""
        added_defs = any(s.status == "added" for s in self.symbols)
        for s in self.symbols:
            if s.status == "removed":
                return True
            if s.status == "changed" and (s.qualname or not s.only_insertions or not added_defs):
                return True
            parent = s.qualname.rpartition(".")[0]
            if s.status == "added" and parent and parent in self.old_names:
                return True
        return False


def parse(source: str | None) -> ast.AST | None:
    if source is None or len(source) > MAX_SOURCE:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


_TOP = re.compile(r"(?:async\s+def|def|class)\s|@")


_STARTS: dict[str, re.Pattern] = {}


def _starts(source: str, offsets: list[int], lo: int, hi: int, indent: str) -> list[int]:
    """Lines (1-based) in [lo, hi] where a definition at this indentation starts (its first decorator)."""
    rx = _STARTS.get(indent)
    if rx is None:
        rx = _STARTS[indent] = re.compile(rf"^{re.escape(indent)}(?:(@)|(?:async\s+def|def|class)\s)", re.M)
    bounds = []
    decorated = False
    end = offsets[hi] if hi < len(offsets) else len(source)
    for m in rx.finditer(source, offsets[lo - 1], end):
        line = bisect.bisect_right(offsets, m.start())
        if m.group(1):
            if not decorated:
                bounds.append(line)
            decorated = True
        else:
            if not decorated:
                bounds.append(line)
            decorated = False
    return bounds


def _span(bounds: list[int], n: int, lo: int, hi: int) -> tuple[int, int]:
    k = bisect.bisect_right(bounds, n) - 1
    return (bounds[k] if k >= 0 else lo), (bounds[k + 1] - 1 if k + 1 < len(bounds) else hi)


_CLASS_HEADER = re.compile(r"class\s+\w+[^#]*:\s*(?:#.*)?$")


def _members(source: str, offsets: list[int], text: list[str], lo: int, hi: int):
    """(class line, first body line, member starts) of a top-level class spanning [lo, hi], else None."""
    c = next((i for i in range(lo, hi + 1) if text[i - 1].startswith("class ")), 0)
    if not c or not _CLASS_HEADER.match(text[c - 1]):
        return None
    body = next((i for i in range(c + 1, hi + 1) if text[i - 1].strip() and
                 not text[i - 1].lstrip().startswith("#")), 0)
    if not body:
        return None
    line = text[body - 1]
    indent = line[: len(line) - len(line.lstrip())]
    members = _starts(source, offsets, body, hi, indent) if indent else []
    return (c, body, members) if members else None


def regions(source: str, lines: set[int]) -> str | None:
    """The definitions that hold the given lines — a top-level function, or a class's header and the member
    holding the line — with the module code around them, at their own line numbers, every other line blank:
    parsed in a fraction of the time of a large file, with the same definitions for those lines. None when a
    line is not inside the text."""
    text = source.split("\n")
    if not lines or max(lines) > len(text) or min(lines) < 1:
        return None
    offsets = [0, *accumulate(map((1).__add__, map(len, text[:-1])))]  # where each line starts (no Python loop)
    bounds = _starts(source, offsets, 1, len(text), "")
    keep: set[tuple[int, int]] = set()
    classes: dict[tuple[int, int], tuple | None] = {}
    for n in sorted(lines):
        lo, hi = _span(bounds, n, 1, len(text))
        if (lo, hi) not in classes:
            classes[(lo, hi)] = _members(source, offsets, text, lo, hi)
        cls = classes[(lo, hi)]
        if cls is None or n <= cls[0]:
            keep.add((lo, hi))
            continue
        c, body, members = cls
        keep.add((lo, c))
        keep.add((body, members[0] - 1) if n < members[0] else _span(members, n, body, hi))
    out = [""] * len(text)
    for lo, hi in keep:
        out[lo - 1:hi] = text[lo - 1:hi]
    return "\n".join(out)


def parse_near(source: str | None, lines: set[int]) -> ast.AST | None:
    """The tree of the parts of a file holding `lines` (regions), else of the whole file."""
    if source is None or len(source) > MAX_SOURCE:
        return None
    part = regions(source, lines) if lines else None
    if part is not None:
        tree = parse(part)
        if tree is not None:
            return tree
    return parse(source)


def _behaviour_nodes(scope: ast.AST, touched: set[int]) -> list[ast.AST]:
    return _without_typing(astchange.own_nodes(scope, touched))


def fingerprint(nodes: list[ast.AST], scope: ast.AST | None = None) -> str:
    """What the code does, as one string: node types and their plain fields in source order (line numbers,
    docstrings and annotations left out), plus the signature and decorators of a function."""
    parts = []
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        parts.append(type(scope).__name__)
        parts += [astchange.text(d, 400) for d in scope.decorator_list]
        if isinstance(scope, ast.ClassDef):
            parts += [astchange.text(b, 400) for b in scope.bases]
        else:
            parts += [f"{n}={d}" for n, d in astchange._sig(scope)]
    for node in nodes:
        if isinstance(node, ast.AnnAssign):  # `x: T = v` does what `x = v` does
            parts.append("Assign:1")
            continue
        bits = [type(node).__name__, getattr(node, "_sentinel_where", "")]
        for name, value in ast.iter_fields(node):
            if isinstance(value, (str, int, float, complex, bytes, bool)) or value is None:
                if name not in ("type_comment", "kind"):
                    bits.append(repr(value))
            elif isinstance(value, ast.AST) and not isinstance(value, (ast.expr, ast.stmt)):
                bits.append(type(value).__name__)  # operators, contexts
            elif isinstance(value, list):
                bits.append(str(len(value)))
        parts.append(":".join(bits))
    return "|".join(parts)


def analyse(path: str, diff: str, before: str | None, after: str | None, fetched: bool = False) -> FileChanges:
    """The symbols one changed Python file's fix changed. fetched: both versions were read from git (a None
    version is a file that does not exist on that side)."""
    hunks = read_hunks(diff)
    empty = ast.Module(body=[], type_ignores=[])
    old_lines = {n for h in hunks for n in range(h.old_span[0], h.old_span[1] + 1)}
    new_lines = {n for h in hunks for n in range(h.new_span[0], h.new_span[1] + 1)}
    old_tree = parse_near(before, old_lines) if before is not None else (empty if fetched else None)
    new_tree = parse_near(after, new_lines) if after is not None else (empty if fetched else None)
    if fetched and old_tree is not None and new_tree is not None:
        return _from_trees(path, hunks, old_tree, new_tree)
    return _from_lines(path, hunks)


def _docstring_lines(tree: ast.AST, defs: list[Def]) -> set[int]:
    """The lines that change no behaviour: every docstring (the module's and each definition's) and the body of
    every `if TYPE_CHECKING:` block (what only a type checker reads, definitions there included)."""
    out: set[int] = set()
    for node in [tree, *(d.node for d in defs)]:
        body = getattr(node, "body", None)
        if body and astchange._is_docstring(body[0]):
            out.update(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
        for stmt in body or []:
            if isinstance(stmt, ast.If) and astchange._is_type_checking(stmt.test) and stmt.body:
                out.update(range(stmt.lineno, (stmt.body[-1].end_lineno or stmt.body[-1].lineno) + 1))
    return out


def _from_trees(path: str, hunks: list[Hunk], old_tree: ast.AST, new_tree: ast.AST) -> FileChanges:
    old_defs, new_defs = defs_of(old_tree), defs_of(new_tree)
    old_doc, new_doc = _docstring_lines(old_tree, old_defs), _docstring_lines(new_tree, new_defs)
    # a name defined twice (a property's getter and setter, a function per Python version) is told apart by
    # its place among the definitions of that name
    old_key, new_key = _occurrences(old_defs), _occurrences(new_defs)
    touched: dict[tuple[str, int], tuple[list, list]] = {}
    for h in hunks:
        for n, line in h.removed:
            if n not in old_doc:
                d = innermost(old_defs, n)
                touched.setdefault(old_key[id(d)] if d else ("", 0), ([], []))[0].append((n, line))
        for n, line in h.added:
            if n not in new_doc:
                d = innermost(new_defs, n)
                touched.setdefault(new_key[id(d)] if d else ("", 0), ([], []))[1].append((n, line))
    old_by = {old_key[id(d)]: d for d in old_defs}
    new_by = {new_key[id(d)]: d for d in new_defs}
    out = FileChanges(path, parsed=True, old_names={d.qualname for d in old_defs})
    for (q, i), (removed, added) in touched.items():
        od, nd = old_by.get((q, i)), new_by.get((q, i))
        if q and od is None and nd is None:
            continue
        if q and od is None:
            kind = "class" if isinstance(nd.node, ast.ClassDef) else "function"
            out.symbols.append(SymbolChange(q, "added", [Change("function-added", f"adds {kind} `{q}`",
                                                                (f"def:{q.rsplit('.', 1)[-1]}",), nd.start, "",
                                                                astchange.text(nd.node, 60).split("\n")[0])],
                                            removed, added))
            continue
        if q and nd is None:
            out.symbols.append(SymbolChange(q, "removed", [Change("function-removed", f"drops `{q}`", (),
                                                                  od.start)], removed, added))
            continue
        if not q:  # module-level code: its statements on the changed lines
            o_nodes, n_nodes = _paired_nodes(old_tree, new_tree, removed, added, hunks)
            if fingerprint(o_nodes) != fingerprint(n_nodes):
                sym = SymbolChange("", "changed", astchange.compare(o_nodes, n_nodes), removed, added)
                sym.only_insertions = not o_nodes
                out.symbols.append(sym)
            continue
        o_nodes, n_nodes = _paired_nodes(od.node, nd.node, removed, added, hunks)
        if fingerprint(o_nodes, od.node) == fingerprint(n_nodes, nd.node):
            continue  # docstrings, comments, annotations or formatting only
        changes = astchange.compare(o_nodes, n_nodes, od.node, nd.node)
        out.symbols.append(SymbolChange(q, "changed", changes, removed, added))
    return out


def _paired_nodes(old_scope: ast.AST, new_scope: ast.AST, removed: list, added: list,
                  hunks: list[Hunk]) -> tuple[list[ast.AST], list[ast.AST]]:
    """The nodes of the statements on each side's changed lines, and of their counterparts: a statement of
    several lines that only gained lines (a name added to an import list) is compared with the same statement
    before, which no removed line touched."""
    old_lines, new_lines = {n for n, _ in removed}, {n for n, _ in added}
    o_nodes = _behaviour_nodes(old_scope, old_lines)
    n_nodes = _behaviour_nodes(new_scope, new_lines)
    new_to_old = {b: a for h in hunks for a, b in h.context}
    old_to_new = {a: b for b, a in new_to_old.items()}
    more_old = {new_to_old[s.lineno] for s in n_nodes if _multiline(s) and s.lineno in new_to_old} - old_lines
    more_new = {old_to_new[s.lineno] for s in o_nodes if _multiline(s) and s.lineno in old_to_new} - new_lines
    if more_old:
        o_nodes = _behaviour_nodes(old_scope, old_lines | more_old)
    if more_new:
        n_nodes = _behaviour_nodes(new_scope, new_lines | more_new)
    return o_nodes, n_nodes


def _multiline(node: ast.AST) -> bool:
    return isinstance(node, ast.stmt) and (getattr(node, "end_lineno", 0) or 0) > node.lineno


def _line_symbol(q: str, removed: list, added: list) -> SymbolChange | None:
    """A symbol's change from its changed lines alone; None when they change nothing Python would run."""
    o_nodes = _without_typing(astchange.line_nodes([t for _, t in removed]))
    n_nodes = _without_typing(astchange.line_nodes([t for _, t in added]))
    if fingerprint(o_nodes) == fingerprint(n_nodes):
        return None  # comments, blank lines, typing imports or formatting only
    sym = SymbolChange(q, "changed", astchange.compare(o_nodes, n_nodes), removed, added)
    sym.only_insertions = not o_nodes
    return sym


def _without_typing(nodes: list[ast.AST]) -> list[ast.AST]:
    """Nodes without imports from typing (and their names): they change no behaviour."""
    out = []
    skip = 0
    for n in nodes:
        if skip and isinstance(n, ast.alias):
            skip -= 1
            continue
        skip = 0
        if (isinstance(n, ast.ImportFrom) and (n.module or "") in _TYPING_MODULES) or (
                isinstance(n, ast.Import) and all(a.name in _TYPING_MODULES for a in n.names)):
            skip = len(n.names)
            continue
        out.append(n)
    return out


def _occurrences(defs: list[Def]) -> dict[int, tuple[str, int]]:
    """(qualname, how many definitions of that name come before it) of each definition, by id."""
    seen: dict[str, int] = {}
    out = {}
    for d in defs:
        out[id(d)] = (d.qualname, seen.get(d.qualname, 0))
        seen[d.qualname] = seen.get(d.qualname, 0) + 1
    return out


def _from_lines(path: str, hunks: list[Hunk]) -> FileChanges:
    """The diff alone: the enclosing function from the hunk's lines and header, the changed lines parsed one
    by one."""
    groups: dict[str, tuple[list, list, bool]] = {}
    for h in hunks:
        stack: list[tuple[int, str]] = []  # (indentation, name) of the enclosing defs and classes
        m = _DEF_LINE.match(h.header)
        if m:
            stack.append((len(m.group(1)), m.group(3)))
        for sign, body in h.lines:
            code = body.strip()
            if code and not code.startswith(("#", ")", "]", "}")):
                indent = len(body) - len(body.lstrip())
                dm = _DEF_LINE.match(body)
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                if dm:
                    q = ".".join([n for _, n in stack] + [dm.group(3)])
                    stack.append((indent, dm.group(3)))
                    if sign == "+":
                        g = groups.setdefault(q, ([], [], True))
                        groups[q] = (g[0], g[1], True)
                    elif sign == "-":
                        groups.setdefault(q, ([], [], False))
                    continue
            if sign == " ":
                continue
            q = ".".join(n for _, n in stack)
            g = groups.setdefault(q, ([], [], False))
            (g[0] if sign == "-" else g[1]).append((0, body))
    out = FileChanges(path, parsed=False)
    for q, (removed, added, is_new) in groups.items():
        if is_new and not removed:
            out.symbols.append(SymbolChange(q, "added", [Change("function-added", f"adds `{q}`",
                                                                (f"def:{q.rsplit('.', 1)[-1]}",))], removed, added))
            continue
        sym = _line_symbol(q, removed, added)
        if sym is not None:
            out.symbols.append(sym)
    return out


def excerpt(sym: SymbolChange, change: Change | None, max_lines: int = 4, width: int = 100) -> tuple[str, str]:
    """The key lines of a symbol's change, before and after (dedented together, comments and blank lines out):
    the run of changed lines nearest the key change."""
    def pick(lines: list[tuple[int, str]], near: int) -> list[str]:
        code = [(n, t) for n, t in lines
                if t.strip() and not t.strip().startswith("#") and not _DOCSTRING.match(t)]
        if not code:
            return []
        if near and code[0][0]:
            # the contiguous run of changed lines closest to the change
            runs: list[list[tuple[int, str]]] = [[code[0]]]
            for n, t in code[1:]:
                if n - runs[-1][-1][0] <= 2:
                    runs[-1].append((n, t))
                else:
                    runs.append([(n, t)])
            run = min(runs, key=lambda r: 0 if r[0][0] <= near <= r[-1][0] else min(abs(r[0][0] - near),
                                                                                   abs(r[-1][0] - near)))
            code = run
        return [t for _, t in code[:max_lines]]

    near = change.line if change else 0
    after = pick(sym.added, near)
    before = pick(sym.removed, _old_near(sym, after, near))
    both = [t for t in before + after if t.strip()]
    indent = min((len(t) - len(t.lstrip()) for t in both), default=0)

    def fmt(lines: list[str]) -> str:
        out = []
        for t in lines:
            t = t[indent:].rstrip()
            out.append(t if len(t) <= width else t[: width - 1] + "…")
        return "\n".join(out)

    return fmt(before), fmt(after)


def _old_near(sym: SymbolChange, after: list[str], near: int) -> int:
    """The old-side line to centre the 'before' on: the removed run closest to where the added lines sit
    (line numbers differ between the sides by the lines added and removed above; the first removed line within
    the symbol is a good guess when nothing closer is known)."""
    if not sym.removed or not sym.removed[0][0]:
        return 0
    if not near:
        return sym.removed[0][0]
    shift = 0
    for n, _ in sym.added:
        if n < near:
            shift += 1
    for n, _ in sym.removed:
        if n < near - shift:
            shift -= 1
    return max(1, near - shift)


# Other languages: what the changed lines do, from their text (C-family, JavaScript, Go, Rust, shell, Ruby...).
_OTHER_KINDS = (
    ("none-guard", re.compile(r"^\s*(?:}\s*)?(?:else\s+)?(?:if|elif|unless)\b.*(?:\bnull\b|\bnil\b|\bNone\b|"
                              r"\bundefined\b|\bNULL\b|nullptr)")),
    ("length-guard", re.compile(r"^\s*(?:}\s*)?(?:else\s+)?(?:if|elif)\b.*(?:\.length\b|\blen\(|\.size\(\)|"
                                r"\.is_empty\(\)|-z\s)")),
    ("type-guard", re.compile(r"^\s*(?:}\s*)?(?:else\s+)?(?:if|elif)\b.*(?:\binstanceof\b|\btypeof\b|"
                              r"\bisinstance\()")),
    ("handler-added", re.compile(r"^\s*(?:}\s*)?(?:catch\b|except\b|rescue\b|recover\(\))")),
    ("raise-added", re.compile(r"^\s*(?:throw\b|raise\b|panic\(|return\s+(?:nil,\s*)?(?:fmt\.)?Errorf?\()")),
    ("lock-added", re.compile(r"\.(?:lock|Lock|acquire)\(\)|\bsynchronized\b|\bMutex\b")),
    ("cleanup-added", re.compile(r"^\s*(?:}\s*)?finally\b|\bdefer\b|\.close\(\)|\bfree\(")),
    ("guard", re.compile(r"^\s*(?:}\s*)?(?:else\s+)?(?:if|elif|unless)\b")),
)
_COND_LINE = re.compile(r"^\s*(?:}\s*)?(?:else\s+)?(?:if|elif|while|unless)\b")


def from_text(path: str, diff: str) -> FileChanges:
    """A source file in another language: change kinds from its changed lines' text (no symbols)."""
    hunks = read_hunks(diff)
    removed = [(n, t) for h in hunks for n, t in h.removed]
    added = [(n, t) for h in hunks for n, t in h.added]
    changes: list[Change] = []
    seen: set[str] = set()
    old_text = "\n".join(t for _, t in removed)
    for n, t in added:
        for kind, rx in _OTHER_KINDS:
            if rx.search(t) and not rx.search(old_text) and kind not in seen:
                seen.add(kind)
                changes.append(Change(kind, f"adds `{' '.join(t.split())[:80]}`", (kind,), n, "", t.strip()))
                break
    old_conds = [t.strip() for _, t in removed if _COND_LINE.match(t)]
    new_conds = [t.strip() for _, t in added if _COND_LINE.match(t)]
    if old_conds and new_conds and "condition-changed" not in seen:
        changes.append(Change("condition-changed", f"`{old_conds[0][:70]}` -> `{new_conds[0][:70]}`",
                              ("condition",), 0, old_conds[0], new_conds[0]))
    if not changes and (removed or added):
        changes.append(Change("logic-changed", "changes the code", ()))
    out = FileChanges(path, parsed=False)
    if removed or added:
        out.symbols.append(SymbolChange("", "changed", changes, removed, added))
    return out
