"""What a check sees: one changed file with lazily computed views of its post-change content.

Nothing is computed until a check asks: content is read from git only for files a check
needs, the lexer runs once per file, and the AST is parsed once and only when an AST rule
has something to look at (parsing a 10K-line module costs ~100 ms).
"""

from __future__ import annotations

import ast
import bisect
import fnmatch
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

from sentinel import linebreaks
from sentinel.config import Config
from sentinel.lexer import Lexed, lex
from sentinel.linemap import LineMap, held_head, held_lines, pack, unpack
from sentinel.models import FileChange, FileStatus, FilterMode, Finding
from sentinel.record import Record, factory
from sentinel.rules import Rule

_FUNCTION_SPANS = "base.function-spans"


class FileContext:
    def __init__(self, change: FileChange, config: Config, mode: FilterMode,
                 content: str | bytes | None, root: str | None = None):
        """`content`: the post-change text, as a str or as sentinel.linemap.pack holds it (UTF-8 bytes: decoded
        when a check asks for the text, and let go again by drop_views)."""
        # Lines end where the language ends them, not only at "\n" (sentinel.linebreaks): code
        # after a lone "\r" is on a line of its own for Python, and so it is for every check.
        if content is not None:
            text = unpack(content)
            if linebreaks.hides_lines(text, change.language):
                change = linebreaks.logical_change(change, text, change.language)
                text = linebreaks.logical_text(text, change.language)
                content = pack(text) if type(content) is bytes else text
            del text
        else:
            _check_stand_in_size(change)
            if linebreaks.change_hides_lines(change, change.language):
                change = linebreaks.logical_change(change, stand_in_text(change), change.language)
        self.change = change
        self.path = change.path
        self.language = change.language
        self.config = config
        self.mode = mode
        self.root = root
        self._held = content  # the content as given (None: the diff's lines stand in for it)
        self._content = content if type(content) is str else None  # the text, once decoded
        self._scan_text: str | None = None
        self._lower_text: str | None = None
        self._lines: list[str] | None = None
        self._lexed: Lexed | None = None
        self._tree: ast.AST | None = None
        self._tree_error: str | None = None
        self._parsed = False
        self._nodes: dict[type, list] | None = None
        self._parents: dict[int, ast.AST] | None = None
        self._descents = 0
        self._comment_lines: CommentLines | None = None
        # Per-file results a check computes once and reuses (keys prefixed by the check's name).
        self.memo: dict[str, object] = {}

    # --- content -------------------------------------------------------------
    @property
    def has_content(self) -> bool:
        return self._held is not None

    @property
    def text_is_known(self) -> bool:
        """Whether `text` is the file's post-change text up to its last line shown: the content was read, or the
        diff shows every line from the first to its last (a diff with the whole file as context); lines after
        the last shown one are not changed by the change."""
        if self._held is not None:
            return True
        known = self.change.context.keys() | self.change.added.keys()
        return bool(known) and len(known) == max(known)

    @property
    def text(self) -> str:
        """Post-change content; when it cannot be read, the added lines at their positions."""
        if self._content is None:
            self._content = unpack(self._held) if self._held is not None else stand_in_text(self.change)
        return self._content

    def _packed(self) -> str | bytes | None:
        """The text as held, without decoding it: the content, or the added lines of a file added whole."""
        if self._held is not None:
            return self._held
        added = self.change.added
        if isinstance(added, LineMap) and added.held is not None and added.first == 1 and not self.change.context:
            return added.held
        return None

    def head(self, chars: int) -> str:
        """The text's first `chars` characters, decoding (and keeping) no more of a large file than that."""
        if self._content is None:
            held = self._packed()
            if held is not None:
                return held_head(held, chars)
        return self.text[:chars]

    @property
    def scan_text(self) -> str:
        """The text a keyword prefilter looks in. Python reads identifiers in their NFKC form (PEP 3131:
        ``ｅｖａｌ(x)`` calls ``eval``), so a non-ASCII Python file is searched in that form: a prefilter that
        skips the AST work must never skip a call Python would make. (The AST already holds the normalised
        names.) Other languages, and ASCII files, are searched as they are."""
        if self._scan_text is None:
            text = self.text
            self._scan_text = (text if self.language != "python" or text.isascii()
                               else unicodedata.normalize("NFKC", text))
        return self._scan_text

    @property
    def lower_text(self) -> str:
        """The text lowercased, once per file: the case-insensitive keyword gates of several checks share it
        (a whole tree's text is 20 MB). Lowercasing never adds or removes a newline."""
        if self._lower_text is None:
            self._lower_text = self.text.lower()
        return self._lower_text

    def lowered(self, text: str) -> str:
        """`text` lowercased, through lower_text when it is the file's text (the scan text of an ASCII file is)."""
        return self.lower_text if text is self.text else text.lower()

    def scan_line(self, n: int) -> str:
        """Line n as a keyword prefilter reads it (see scan_text)."""
        line = self.line(n)
        return line if self.language != "python" or line.isascii() else unicodedata.normalize("NFKC", line)

    @property
    def lines(self) -> list[str]:
        """1-based: lines[n] is line n (lines[0] is empty)."""
        if self._lines is None:
            text = self.text
            if "\r" in text:
                self._lines = [""] + [ln.rstrip("\r") for ln in text.split("\n")]
            else:
                self._lines = [""] + text.split("\n")
        return self._lines

    @property
    def line_count(self) -> int:
        """len(lines) - 1, without splitting the text into lines."""
        if self._lines is not None:
            return len(self._lines) - 1
        held = self._packed() if self._content is None else self._content
        return held_lines(held if held is not None else self.text) + 1

    def line(self, n: int) -> str:
        lines = self.lines
        return lines[n] if 0 < n < len(lines) else self.change.added.get(n, "")

    # --- scope of the filter mode -------------------------------------------
    def selected(self, line: int | None) -> bool:
        """Could a finding on this line be reported under the filter mode?"""
        if line is None or self.mode in (FilterMode.FILE, FilterMode.NOFILTER):
            return True
        if self.mode is FilterMode.DIFF_CONTEXT:
            return self.change.in_hunks(line)
        return line in self.change.added

    def selected_lines(self) -> list[int]:
        """Line numbers in scope, ascending."""
        if self.mode in (FilterMode.FILE, FilterMode.NOFILTER):
            return list(range(1, len(self.lines)))
        if self.mode is FilterMode.DIFF_CONTEXT:
            out = set(self.change.added)
            for h in self.change.hunks:
                out.update(range(h.target_start, h.target_start + h.target_length))
            return sorted(x for x in out if x > 0)
        return sorted(self.change.added)

    # --- lexical and syntactic views ----------------------------------------
    @property
    def lexed(self) -> Lexed:
        if self._lexed is None:
            self._lexed = lex(self.text, self.language)
        return self._lexed

    @property
    def comment_lines(self) -> Lexed | CommentLines:
        """What inline suppressions read of the lexer's output: its comments and the lines inside a string."""
        if self._lexed is None and self._comment_lines is not None:
            return self._comment_lines
        return self.lexed

    def keep_comment_lines(self) -> CommentLines:
        """Keep `comment_lines` past drop_views (lexing the file if it is not yet): the findings of a large
        change are filtered where the change was built, after the process that analysed the file dropped its
        views or sent this back, and lexing hundreds of files again there would run on one core."""
        if self._comment_lines is None:
            lexed = self.lexed
            self._comment_lines = CommentLines(lexed.comments, lexed.string_inner)
        return self._comment_lines

    @property
    def tree(self) -> ast.AST | None:
        """The Python AST of the post-change file, or None when it does not parse."""
        if not self._parsed:
            self._parsed = True
            if self.language == "python":
                try:
                    self._tree = ast.parse(_parse_copy(self.text), filename=self.path, type_comments=False)
                except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
                    self._tree_error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}"
        return self._tree

    @property
    def parse_error(self) -> str | None:
        return self._tree_error

    @property
    def tree_in_hand(self) -> bool:
        """Is the whole file in scope and its tree already made? A check's keyword gate exists only to spare
        the parse: once another check has parsed the file, the exact AST pass over it costs less than the
        gate's scans of the whole text (jail and placeholder skip their gates then; the gates are exact, so
        the findings are the same either way: tests/test_parse_gates.py)."""
        return self._parsed and self._tree is not None and self.whole_file_in_scope

    @property
    def whole_file_in_scope(self) -> bool:
        """Is every line selectable (the file modes, or a new file whose lines are all added)?"""
        return self.mode in (FilterMode.FILE, FilterMode.NOFILTER) or self.change.status is FileStatus.ADDED

    def nodes(self, *types: type) -> list:
        """All nodes of the given AST types (one walk per file, shared by every check)."""
        if self._nodes is None:
            self._nodes = {}
            tree = self.tree
            if tree is not None:
                walk(tree, index=self._nodes)
        out: list = []
        for t in types:
            out.extend(self._nodes.get(t, ()))
        return out

    def function_at(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The innermost function whose lines hold `line` (bisected: a scan of every function for every
        finding is quadratic in a file of many)."""
        spans = self.memo.get(_FUNCTION_SPANS)
        if spans is None:
            spans = self.memo[_FUNCTION_SPANS] = LineSpans(self.nodes(ast.FunctionDef, ast.AsyncFunctionDef))
        return spans.innermost(line)

    def parent(self, node: ast.AST) -> ast.AST | None:
        if self._parents is None:
            path = self._path_to(node)
            if path is not None:
                return path[-1] if path else None
            tree = self.tree
            self._parents = parent_map(tree) if tree is not None else {}
        return self._parents.get(id(node))

    def ancestors(self, node: ast.AST):
        if self._parents is None:
            path = self._path_to(node)
            if path is not None:
                yield from reversed(path)
                return
        cur = self.parent(node)
        while cur is not None:
            yield cur
            cur = self.parent(cur)

    def _path_to(self, node: ast.AST) -> list[ast.AST] | None:
        """The nodes from the root down to `node`'s parent, found by following the node's position down the
        tree, or None when that does not find it (then the parent map answers). A hook's file asks for a
        handful of parents (a finding's enclosing try or function), and on a large file the map is a second walk
        of every node (~8 ms for 8,000 lines) where this path is a few dozen; past _DESCENTS_BEFORE_MAP
        lookups on one file the map is cheaper and is built. A parent is only ever a node that holds `node`
        itself (identity), so the answers are the map's (tests/test_fast_paths.py compares them node by node)."""
        tree = self.tree
        if tree is None or self._descents >= _DESCENTS_BEFORE_MAP:
            return None
        self._descents += 1
        if node is tree:
            return []
        line = getattr(node, "lineno", None)
        if line is None:
            return None
        start = (line, node.col_offset)
        path: list[ast.AST] = []
        stack = [(tree, 0)]
        budget = _DESCENT_BUDGET
        fields_of = _CHILD_FIELDS.get
        node_type = ast.AST
        while stack:
            cur, depth = stack.pop()
            del path[depth:]
            path.append(cur)
            budget -= 1
            if budget < 0:
                return None
            cls = type(cur)
            fields = fields_of(cls)
            if fields is None:
                fields = _child_fields(cls)
            for name in fields:
                value = getattr(cur, name, None)
                for child in (value if type(value) is list else (value,)):
                    if child is node:
                        return list(path)
                    if isinstance(child, node_type) and _may_hold(child, start):
                        stack.append((child, depth + 1))
        return None

    def node_selected(self, node: ast.AST) -> bool:
        """Is any line of this node's first line in scope? (multi-line statements count by their first line)."""
        return self.selected(getattr(node, "lineno", None))

    def drop_views(self) -> None:
        """Forget the computed views (lines, lexer output, AST, the text decoded from its packed form) to free
        their memory; they are recomputed if asked for again."""
        self._lines = self._lexed = self._tree = self._nodes = self._parents = self._scan_text = None
        self._lower_text = None
        if self._content is not self._held:
            self._content = None  # a text decoded from its packed form, or the diff's lines joined: made again
        self._parsed = False
        self._descents = 0
        self.memo.clear()

    # --- findings -------------------------------------------------------------
    def finding(self, rule: Rule, line: int | None, message: str, column: int | None = None,
                code: str | None = None, hint: str | None = None, end_line: int | None = None) -> Finding:
        return Finding(rule=rule.code, check=rule.check, severity=rule.severity, path=self.path, line=line,
                       column=column, message=message,
                       code=(code if code is not None else (self.line(line).strip() if line else "")),
                       hint=hint if hint is not None else rule.hint, end_line=end_line)

    def path_matches(self, patterns: list[str]) -> bool:
        return path_matches(self.path, patterns)


class LineSpans:
    """Nodes whose line spans nest or are apart (functions of a tree, statements of a body), asked which is the
    innermost one holding a line: the one starting last at or before it, else the nearest of its enclosing ones
    that reaches the line (a node that holds the line and starts earlier holds that one too)."""

    def __init__(self, nodes) -> None:
        self.nodes = sorted(nodes, key=lambda n: n.lineno)
        self.starts = [n.lineno for n in self.nodes]
        self.ends = [n.end_lineno or n.lineno for n in self.nodes]
        self.enclosing: list[int] = []
        open_: list[int] = []
        for i, start in enumerate(self.starts):
            while open_ and self.ends[open_[-1]] < start:
                open_.pop()
            self.enclosing.append(open_[-1] if open_ else -1)
            open_.append(i)

    def innermost(self, line: int) -> ast.AST | None:
        i = bisect.bisect_right(self.starts, line) - 1
        while i >= 0 and self.ends[i] < line:
            i = self.enclosing[i]
        # statements sharing a line (`a = f(); del f`): the first that holds it, as a scan in order finds
        while i > 0 and self.starts[i - 1] == self.starts[i] and self.ends[i - 1] >= line:
            i -= 1
        return self.nodes[i] if i >= 0 else None


def _parse_copy(text: str) -> str:
    """What ast.parse gets: compile() asks a str for its UTF-8 form, which CPython then keeps inside a non-ASCII
    str for as long as the str lives, as large as the text again — and the file's text lives for the whole run
    (it is the change's lines too). A non-ASCII text is parsed from a copy that goes with the parse (the copy
    and its UTF-8 form are freed with it); an ASCII str is its own UTF-8 form."""
    return text if text.isascii() else text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


class CommentLines:
    """A file's comments (line -> text) and the lines that begin inside a string literal, as the lexer found them."""

    __slots__ = ("comments", "string_inner")

    def __init__(self, comments: dict[int, str], string_inner: set[int]) -> None:
        self.comments = comments
        self.string_inner = string_inner

    def __getstate__(self):
        return self.comments, self.string_inner

    def __setstate__(self, state) -> None:
        self.comments, self.string_inner = state


# Without the file's content the diff's lines stand in for it, at their line numbers, with blank
# lines between: a hunk far down a file the diff alone describes costs a line of memory per line
# above it. Past this, the input is absurd (no content, a million lines) and is refused.
STAND_IN_MAX_LINES = 1_000_000


def _check_stand_in_size(change: FileChange) -> None:
    last = max((h.target_start + h.target_length for h in change.hunks[-1:]), default=0)
    if last > STAND_IN_MAX_LINES:
        from sentinel.errors import InputError
        from sentinel.redact import display_path

        raise InputError(f"{display_path(change.path)}: the diff reaches line {last:,} but the file's content "
                         f"is not available to read, and standing in for it from the diff alone is limited to "
                         f"{STAND_IN_MAX_LINES:,} lines (check the change with --range or staged, where git "
                         "provides the file)")


def stand_in_text(change: FileChange) -> str:
    """What a diff shows of a file's post-change text: its added and context lines at their
    line numbers, blank lines elsewhere."""
    added = change.added
    if isinstance(added, LineMap) and added.text is not None and added.first == 1 and not change.context:
        return added.text  # a file added whole: that very text, not a copy
    known = {**change.context, **change.added}
    if not known:
        return ""
    last = max(known)
    return "\n".join(known.get(i, "") for i in range(1, last + 1)) + "\n"


# Fields that hold only shared leaf singletons (Load/Store contexts, operators). They are a
# large share of every tree, no rule asks for them, and skipping them makes a walk about twice
# as fast as ast.walk on real code (the whole-tree benchmark spends seconds here).
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "type_ignores"})
# Fields that only ever hold strings, numbers or lists of strings in the grammar (Name.id,
# Attribute.attr, MatchClass.kwd_attrs...): no node can be found there, so no getattr is spent on them.
_SCALAR_FIELDS = frozenset({"id", "attr", "name", "asname", "arg", "module", "level", "kind", "conversion",
                            "is_async", "type_comment", "tag", "kwd_attrs"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {ast.Constant: (), ast.Global: (), ast.Nonlocal: ()}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(cls)
    if fields is None:
        fields = _CHILD_FIELDS[cls] = tuple(f for f in cls._fields
                                            if f not in _LEAF_FIELDS and f not in _SCALAR_FIELDS)
    return fields


def walk(tree: ast.AST, parents: dict[int, ast.AST] | None = None,
         index: dict[type, list] | None = None) -> list[ast.AST]:
    """Every node below and including `tree` in ast.walk's breadth-first order, without the
    context and operator leaves. `parents`, when given, is filled with id(child) -> parent;
    `index` with type -> nodes of that type (in the same order).

    Lists in the remaining fields hold only nodes or None (Dict.keys, kw_defaults), so their items
    are tested against None rather than with isinstance: this loop runs once per node of a file."""
    todo = [tree]
    append = todo.append
    node_type = ast.AST
    fields_of = _CHILD_FIELDS.get
    for node in todo:  # the list grows while we iterate: breadth-first, like ast.walk
        cls = type(node)
        if index is not None:
            same = index.get(cls)
            if same is None:
                index[cls] = [node]
            else:
                same.append(node)
        fields = fields_of(cls)
        if fields is None:
            fields = _child_fields(cls)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if item is not None:
                        append(item)
                        if parents is not None:
                            parents[id(item)] = node
            elif isinstance(value, node_type):
                append(value)
                if parents is not None:
                    parents[id(value)] = node
    return todo


# Parent lookups by position before a file's parent map is built, and the nodes one lookup may visit.
_DESCENTS_BEFORE_MAP = 32
_DESCENT_BUDGET = 4_000


def _may_hold(node: ast.AST, start: tuple[int, int]) -> bool:
    """Could `node`'s subtree hold a node that starts at `start`? Nodes without a position (arguments,
    comprehension, withitem, match_case) are looked inside."""
    line = getattr(node, "lineno", None)
    end = getattr(node, "end_lineno", None)
    if line is None or end is None:
        return True
    return (line, node.col_offset) <= start <= (end, node.end_col_offset)


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """id(child) -> parent for every node `walk` visits."""
    parents: dict[int, ast.AST] = {}
    walk(tree, parents)
    return parents


def path_matches(path: str, patterns: list[str]) -> bool:
    """gitignore-like globs: "**/" may match no directory; a pattern without "/" matches the basename."""
    if not patterns:
        return False
    # Most paths match none of the globs: a glob whose fixed text is not in the path cannot
    # match it, and skipping it saves compiling a regex of every configured glob on each run.
    candidates = tuple(p for p in patterns if _required_text(p) in path)
    if not candidates:
        return False
    full, base = _glob_regexes(candidates)
    if full is not None and full.match(path):
        return True
    return base is not None and base.match(path.rsplit("/", 1)[-1]) is not None


@lru_cache(maxsize=1024)
def _required_text(pattern: str) -> str:
    """The longest fixed text every path matching the glob contains ("" when unsure)."""
    if "[" in pattern:
        return ""  # bracket expressions have subtle fnmatch rules: no shortcut
    if pattern.startswith("**/"):
        pattern = pattern[3:]  # "**/" may match no directory at all
    if pattern.endswith("/**"):
        pattern = pattern[:-3]  # "dir/**" also matches "dir" itself
    runs = pattern.replace("?", "*").split("*")
    return max(runs, key=len)


@lru_cache(maxsize=128)
def _glob_regexes(patterns: tuple[str, ...]):
    """All globs of a list as one regex (plus one for basename globs): compiling ~60 globs one by one
    through fnmatch costs more than the rest of a typical hook run."""
    full, base = [], []
    for pat in patterns:
        full.append(fnmatch.translate(pat))
        if pat.startswith("**/"):
            full.append(fnmatch.translate(pat[3:]))
        if "/" not in pat:
            base.append(fnmatch.translate(pat))
        if pat.endswith("/**"):
            full.append(re.escape(pat[:-3]) + r"(?:/.*)?\Z")
    return (re.compile("|".join(f"(?:{p})" for p in full)) if full else None,
            re.compile("|".join(f"(?:{p})" for p in base)) if base else None)


class ChangeContext(Record):
    """What a change-level check sees: the whole change, its text, and the other checks' findings."""

    files: list[FileChange]
    config: Config
    mode: FilterMode
    root: str | None
    message: str | None
    task: str | None
    findings_so_far: list[Finding] = factory(list)
    file_contexts: dict[str, FileContext] = factory(dict)
    options: dict = factory(dict)  # --junit paths etc., passed through
    # check name -> that check's findings on this change as the verdict would keep them (scope, roles, config,
    # suppressions applied), or None when it is disabled or has no per-file analysis. The engine runs a check
    # this invocation skipped (the commit-msg hook runs only the intent checks) on first request.
    findings_of: Callable[[str], list[Finding] | None] | None = None

    def content_files(self) -> list[FileChange]:
        return [f for f in self.files if f.status not in (FileStatus.DELETED, FileStatus.BINARY)]
