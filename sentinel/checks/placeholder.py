"""placeholder: unfinished work presented as finished — markers, stubs, not-implemented bodies.

Markers and stub comments are looked for in *comments only* (the lexer's view): a string
``'TODO'``, a class ``Todo`` or a docstring saying "Loading..." are not unfinished work.
Stub bodies and ``raise NotImplementedError`` are judged on the Python AST, with the
idioms that legitimately look like stubs left alone: abstract methods, ``Protocol`` and
``ABC`` classes, ``@overload`` signatures, ``.pyi`` stubs, no-op overrides and hooks, and
any stub whose author explained it in a comment.

Decisions, documented so they can be relied on:

* SEN401 markers are case-sensitive words (``TODO``, not ``todo``), plural included
  (``TODOs``); a marker glued to a hyphen or a file extension (``XXX-XXX``, ``TODO.md``) is
  not one. ``placeholder.allowed-form`` (default ``TODO(#123)``, ``FIXME(PROJ-12)``) names
  tracked work and is allowed; a line carrying a marker is not also reported as SEN404.
* SEN402 is exempt in methods decorated ``@abstractmethod`` (or abstractproperty...),
  ``@overload`` or ``@singledispatch``, in methods of classes that are abstract by
  declaration (bases ``ABC``/``Protocol``, ``metaclass=ABCMeta``), by name (``Base*``,
  ``Abstract*``, ``*Base``, ``*Interface``, ``*Mixin``) or by use (subclassed in the same
  file): "subclasses must override this" is what the error means there. A raise whose
  message names the design ("must be implemented by subclasses", "unsupported on this
  system") is a deliberate refusal, and so is one with any message inside ``if``/``except``/
  ``match`` (an unsupported case, not missing code); a bare one there is still flagged.
* SEN403 (a body of only ``pass``/``...``, a docstring allowed) is exempt for the same
  abstract idioms, plus: dunder methods (a protocol fixes their signature, so a no-op
  ``__init__``/``__exit__`` is a choice), ``pass`` overrides in subclasses (the idiom for
  silencing an inherited hook such as ``log_message``), functions defined under ``if``/
  ``try``/``except`` (platform and import fallbacks), nested ``pass`` callbacks, no-op
  names (``noop``, ``do_nothing``), test doubles (``Fake*``, ``Null*``, ``*Stub``...), and
  any stub with a comment in its body or on its lines that explains it (a comment that is
  itself a marker or a stub comment explains nothing).
"""

from __future__ import annotations

import ast
import re
from functools import cache, lru_cache

from sentinel.checks.base import FileContext, walk
from sentinel.checks.style import any_word
from sentinel.languages import HASH_COMMENT, PROSE, SLASH_COMMENT
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity
from sentinel.roles import DOCS, TEST
from sentinel.rules import INFO, SAME, UNFINISHED_ROLES, WARNING, Rule

CHECK = "placeholder"

SEN401 = Rule(
    "SEN401", "todo-marker", CHECK, Severity.ERROR,
    summary="A TODO/FIXME/HACK/XXX marker in a comment of an added line (not in the allowed tracked form).",
    rationale="A marker is a confession that the change is unfinished; untracked, it is forgotten the moment "
              "the change merges. Work that must wait belongs in the tracker, referenced as TODO(#123).",
    example="def load(path):\n    # TODO: handle errors\n    return open(path).read()\n",
    counter_example="def load(path):\n    # TODO(#123): retry on transient errors\n    return open(path).read()\n",
    hint="Finish the work now, or reference the ticket that tracks it: TODO(#123).",
    roles={**UNFINISHED_ROLES, TEST: WARNING, DOCS: WARNING}, existing=INFO,
    noqa=("FIX001", "FIX002", "FIX003", "FIX004", "TD001", "TD002", "TD003", "TD004", "TD005", "TD006", "TD007",
          "T101", "fixme", "W0511"),
)
SEN402 = Rule(
    "SEN402", "not-implemented", CHECK, Severity.ERROR,
    summary="`raise NotImplementedError` (or todo!(), throw new Error('not implemented')...) in code "
            "that is not an abstract method or interface.",
    rationale="Code that raises 'not implemented' passes review and the type checker, then fails at runtime "
              "on the first real call.",
    example="def export(report):\n    raise NotImplementedError\n",
    counter_example="from abc import ABC, abstractmethod\n\n\nclass Exporter(ABC):\n    @abstractmethod\n"
                    "    def export(self, report):\n        raise NotImplementedError\n",
    hint="Implement it, or make it an @abstractmethod of an ABC if subclasses must provide it.",
    roles=UNFINISHED_ROLES, existing=INFO,
)
SEN403 = Rule(
    "SEN403", "stub-body", CHECK, Severity.ERROR,
    summary="A function whose body is only `pass` or `...` (after an optional docstring).",
    rationale="A stub body silently does nothing and returns None: callers and tests that do not check the "
              "result keep passing while the feature is missing.",
    example="def send_invoice(customer):\n    pass\n",
    counter_example="def send_invoice(customer):\n    mailer.send(customer.email, render_invoice(customer))\n",
    hint="Implement the body; if doing nothing is intended, say why in a comment on the `pass` line.",
    roles={**UNFINISHED_ROLES, TEST: SAME}, existing=INFO,
)
SEN404 = Rule(
    "SEN404", "stub-comment", CHECK, Severity.WARNING,
    summary="A comment announcing a placeholder: '# stub', '# placeholder', '# implement me', "
            "'# your code here', '# not implemented', '# fill in', '# dummy implementation'...",
    rationale="These comments mark code written to be replaced; merged, they ship a fake implementation "
              "that looks real to every caller.",
    example="def rate(user):\n    return 0.5  # placeholder\n",
    counter_example="def rate(user):\n    # Implementation details below: a flat rate until pricing ships.\n"
                    "    return 0.5\n",
    hint="Replace the placeholder with the real implementation, or track the work: TODO(#123).",
    roles=UNFINISHED_ROLES, existing=INFO,
)
RULES: tuple[Rule, ...] = (SEN401, SEN402, SEN403, SEN404)

# Languages whose comments the lexer can find; anything else has no comments we could trust.
_COMMENTED = HASH_COMMENT | SLASH_COMMENT | {"sql"}

# Cheap gate: every phrase of _STUB_COMMENT_SOURCE (written with single spaces) contains one of
# these lowercase substrings; the file is lexed for its comments only when one occurs.
_STUB_WORDS = ("stub", "placeholder", "dummy", "stand-in", "standin", "replaced by the real", "replaced with the real",
               "temp impl", "temporary impl", "implement me", "implement later",
               "implementation goes", "implementation comes", "implementation here", "code here", "code goes here",
               "logic here", "logic goes here", "not implemented", "not yet implemented", "unimplemented", "fill in",
               "fill this in", "fill me in", "fill it in")
# Comment bodies (marker and surrounding punctuation stripped) that announce a placeholder.
# Long case-insensitive patterns cost milliseconds to compile: they are compiled on first use.
_STUB_COMMENT_SOURCE = r"""
    ^(?:this\s+is\s+)?(?:(?:a|an|just\s+a)\s+)?(?:stub(?:bed)?(?:\s+out)?|placeholder)
        (?:\s+(?:implementation|impl|body|code|logic|function|method|version|value|return|result|response))?
        (?:\s*[-:,(]?\s*(?:for\s+now|only|until\s+\w.*|to\s+be\s+\w+.*|replace\s.*|implement\s.*))?\W*$
  | ^(?:(?:a|an|just\s+a|this\s+is\s+(?:a|just\s+a)?)\s*)?(?:stub|placeholder|dummy|temporary|temp)
        \s+(?:implementation|impl)\b
  | \b(?:stub|placeholder)\s+body\b
  | \b(?:stub|placeholder|dummy|stand-?in)\s+(?:for|until)\s+(?:the\s+|a\s+|an\s+)?(?:real|actual|proper|final|full)?\s*
        (?:implementation|impl|logic|code|version|function|method|api|call|value|data|response)\b
  | \b(?:to\s+be\s+)?replaced\s+(?:by|with)\s+(?:the\s+|a\s+)?(?:real|actual|proper)\s+
        (?:implementation|impl|logic|code)\b
  | \bimplement\s+(?:me|later)\b
  | \bimplementation\s+(?:goes|comes)\s+here\b
  | \b(?:your|actual|real)\s+(?:code|implementation|logic)\s+(?:goes\s+)?here\b
  | \b(?:add|put|insert|write)\s+(?:your\s+|the\s+|real\s+|actual\s+)?(?:code|implementation|logic)\s+here\b
  | ^(?:not\s+(?:yet\s+)?implemented|unimplemented)(?:\s+(?:yet|for\s+now|here))?\W*$
  | ^fill\s+(?:this\s+|me\s+|it\s+)?in(?:\s+(?:later|here|the\s+blanks|the\s+details|the\s+implementation
        |the\s+logic))?\W*$
"""
_COMMENT_OPEN = lazy_compile(r"^\s*(?:#+!?|//+!?|/\*+!?|\*+(?!/)|--+|;+)?\s*")
_COMMENT_CLOSE = lazy_compile(r"\s*\*+/\s*$")

_AST_GATE = ("NotImplemented", "pass", "...")
_ABSTRACT_DECORATORS = frozenset({"abstractmethod", "abstractproperty", "abstractclassmethod",
                                  "abstractstaticmethod", "overload"})
_DISPATCH_DECORATORS = frozenset({"singledispatch", "singledispatchmethod"})
_ABSTRACT_BASES = frozenset({"ABC", "Protocol", "ABCMeta"})
_ABSTRACT_NAME = lazy_compile(r"^_?(?:Base|Abstract)[A-Z_]|^_?Abstract|(?:Base|Interface|Mixin|ABC)$")
_DOUBLE_NAME = lazy_compile(r"^_?(?:Fake|Dummy|Stub|Mock|Null|Noop|NoOp|Nop)(?=[A-Z0-9_]|$)"
                            r"|[a-z0-9](?:Fake|Dummy|Stub|Mock|Noop|NoOp)$")
_NOOP_NAME = lazy_compile(r"(?:^|_)(?:noop|no_op|nop|do_nothing|nothing|ignore|ignored|dummy|null)(?:_|$)", re.I)
# A message that names the design ("subclasses must override", "unsupported on this
# platform") documents a deliberate refusal, not missing code.
_DELIBERATE = lazy_compile(r"subclass|overrid|abstract|derived class|must be implemented by|not supported|unsupported"
                           r"|does(?: not|n't) support|is undefined|not available|\binstead\b|\buse\s+\S+|"
                           r"cannot|can't|not allowed|(?:should|must) not be (?:called|used)|is not meant|"
                           r"only (?:supported|available)|requires?\b", re.IGNORECASE)
_CONDITIONAL = (ast.If, ast.ExceptHandler, ast.For, ast.AsyncFor, ast.While, ast.match_case)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FALLBACK_BLOCKS = tuple(t for t in (ast.If, ast.Try, getattr(ast, "TryStar", None), ast.ExceptHandler) if t)

# Other languages' spelling of "not implemented", matched on the raw line and confirmed
# to start in code (not in a comment or string) through the lexer's code view. A cheap
# case-sensitive gate per language decides whether the full pattern is needed at all.
_THROW = (r"""\bthrow\s+new\s+(?:NotImplementedException\s*\(|NotImplementedError\s*\(|
        (?:Error|UnsupportedOperationException|RuntimeException|IllegalStateException|Exception)\s*\(\s*["'`]
        (?:(?:method|function|feature)\s+)?(?:is\s+)?(?:not\s+(?:yet\s+)?implemented|unimplemented)\b)""",
          re.IGNORECASE | re.VERBOSE, ("throw",))
_NOT_IMPL_SOURCES = {
    "rust": ((r"\b(?:todo|unimplemented)!\s*[(\[{]", 0, ("todo!", "unimplemented!")),),
    "kotlin": ((r"\bTODO\s*\(", 0, ("TODO",)), _THROW),
    "go": ((r"""\bpanic\(\s*["`](?:not\s+(?:yet\s+)?implemented|unimplemented|todo)\b""", re.IGNORECASE,
            ("panic(",)),),
    **{lang: (_THROW,) for lang in ("javascript", "typescript", "java", "csharp", "php", "scala")},
}


@cache
def _compiled(source: str, flags: int) -> re.Pattern:
    return re.compile(source, flags)


def _stub_comment(comment: str) -> bool:
    """Does this comment announce a placeholder?"""
    lower = comment.lower()
    if not any(w in lower for w in _STUB_WORDS):
        return False
    body = _comment_body(comment)
    return bool(body) and _compiled(_STUB_COMMENT_SOURCE, re.IGNORECASE | re.VERBOSE).search(body) is not None


@lru_cache(maxsize=16)
def _marker_patterns(markers: tuple[str, ...], allowed_form: str | None):
    """(marker words, marker regex, allowed-form regex) for a config, compiled once."""
    words = tuple(sorted((m for m in markers if m), key=len, reverse=True))
    if not words:
        return None, None, None
    alternation = "|".join(re.escape(w) for w in words)
    # Glued to a word, a hyphen or a dot it is a name or a format (XXX-XX-XXXX, 10.0.XXX.XXX, TODO.md).
    marker = re.compile(rf"(?<![\w.-])(?:{alternation})s?(?![\w-]|\.\w)")
    allowed = None
    if allowed_form:
        try:
            allowed = re.compile(allowed_form)
        except re.error as exc:
            raise ValueError(f"placeholder.allowed-form is not a valid regular expression: {exc}") from None
    return words, marker, allowed


def check_file(ctx: FileContext) -> list[Finding]:
    language = ctx.language
    cfg = ctx.config.placeholder
    if ctx.change.is_binary:
        return []
    if language in PROSE:
        return _prose_markers(ctx) if cfg.scan_prose else []
    if language not in _COMMENTED:
        return []
    out = _comments(ctx)
    if language == "python":
        if not ctx.path.endswith(".pyi") and (ctx.tree_in_hand or _needs_ast(ctx)):
            out.extend(_python_stubs(ctx))
    else:
        out.extend(_other_not_implemented(ctx))
    return out


# A `pass`/`...` statement or a NotImplemented name in code (strings blanked, comments gone).
_STUB_CODE = lazy_compile(r"(?:^|[:;])\s*(?:pass|\.\.\.)\s*$")


# The same test on raw lines of the whole text (the code part is what precedes the first "#"):
# one scan in C instead of a Python loop over every selected line of a large file.
_STUB_LINE = lazy_compile(r"^[^#\n]*NotImplemented|^(?:[^#\n]*[:;])?[ \t\f]*(?:pass|\.\.\.)[ \t\f\r]*(?:#|$)",
                          re.M)
# Every line _STUB_LINE matches holds one of these (its matches start at a line start and end on that line).
_STUB_HINT = lazy_compile(r"NotImplemented|pass|\.\.\.")


def _needs_ast(ctx: FileContext) -> bool:
    """Parse only when a line in scope has stub-like *code*: "password", "passed", an ellipsis in a
    docstring or NotImplementedError named in a comment must not cost a parse of a 5,000-line module."""
    if not any_word(ctx, _AST_GATE):
        return False
    # Raw lines first (a trailing comment cut naively), then the lexer's code view to confirm:
    # lexing a large file costs more than this scan.
    for line in _stub_like_lines(ctx):
        code = ctx.lexed.code_line(line)
        if "NotImplemented" in code or _STUB_CODE.search(code):
            return True
    return False


def _stub_like_lines(ctx: FileContext):
    """Selected lines whose raw code part looks like a stub, in order."""
    selected = ctx.selected_lines()
    if len(selected) * 8 < ctx.line_count:  # a few lines of a large file: look at those only
        for n in selected:
            code = ctx.line(n).split("#", 1)[0]
            if "NotImplemented" in code or _STUB_CODE.search(code):
                yield n
        return
    # Most of the file: a scan of the whole text in C for what every such line holds, then _STUB_LINE at
    # the start of each line that holds it (run at every line start, its backtracking costs 5x as much).
    text = ctx.text
    line, pos, tried = 1, 0, -1
    match = _STUB_LINE.match
    for m in _STUB_HINT.finditer(text):
        at = m.start()
        if at <= tried:
            continue  # a line already tried
        start = text.rfind("\n", 0, at) + 1
        tried = text.find("\n", at)
        if tried < 0:
            tried = len(text)
        if match(text, start):
            line += text.count("\n", pos, start)
            pos = start
            if ctx.selected(line):
                yield line


# --- SEN401 / SEN404: comments ------------------------------------------------------------------------

def _comments(ctx: FileContext) -> list[Finding]:
    cfg = ctx.config.placeholder
    words, marker, allowed = _marker_patterns(tuple(cfg.markers), cfg.allowed_form)
    if ctx.language in HASH_COMMENT and not _hash_tails_may_hold(ctx, words or (), _STUB_WORDS):
        return []  # _hash_comment_candidate would say no: spared the two scans of the whole text below
    want_markers = words is not None and any_word(ctx, words)
    want_stubs = any_word(ctx, _STUB_WORDS, fold=True)
    if not want_markers and not want_stubs:
        return []
    if ctx.language in HASH_COMMENT and not _hash_comment_candidate(ctx, words if want_markers else (),
                                                                    _STUB_WORDS if want_stubs else ()):
        return []
    comments = ctx.lexed.comments
    if not comments:
        return []
    out = []
    existing = None
    for n, comment in sorted(comments.items()):
        if not ctx.selected(n):
            continue
        if want_markers and any(w in comment for w in words):
            hits = _marker_hits(comment, marker, allowed)
            if hits is not None:  # the line carries a marker: it is judged as one, never also as SEN404
                if existing is None:
                    existing = _PreImageMarkers(ctx, words)
                if existing.claims(comment[hits[0][0]:], n, comment):
                    continue  # the change touched a marker that was already there (a typo fix, a move)
                for i, (start, word, tracked) in enumerate(hits[:_MARKERS_PER_LINE]):
                    column = _column(ctx.line(n), comment, start)
                    # a marker is described by the text up to the next marker on the line: each is graded
                    # on its own words, and a line of thousands of markers costs linear time, not quadratic
                    end = hits[i + 1][0] if i + 1 < len(hits) else len(comment)
                    severity, why = _marker_grade(ctx, n, comment[:end], start, word, tracked)
                    f = ctx.finding(SEN401, n, f"{word} marker ({why}): {_excerpt(comment)}", column=column)
                    f.severity = severity
                    out.append(f)
                continue
        if _stub_comment(comment):
            f = ctx.finding(SEN404, n, f"placeholder comment: {_excerpt(comment)}",
                            column=_column(ctx.line(n), comment, 0))
            func = _does_nothing_at(ctx, n) if ctx.language == "python" else None
            if func is not None:
                # The comment says the code is a stand-in and the function does nothing: a fake implementation.
                f.severity = Severity.ERROR
                f.message = f"placeholder comment in {func}(), whose body does nothing: {_excerpt(comment)}"
            out.append(f)
    return out


def _does_nothing_at(ctx: FileContext, n: int) -> str | None:
    """The name of the innermost function around line n when its body does nothing but `pass`, `...`, a
    docstring, `return` / `return None` / a constant, or raise NotImplementedError."""
    tree = ctx.tree
    if tree is None:
        return None
    best = None
    for fn in ctx.nodes(*_FUNCS):
        if fn.lineno <= n <= (fn.end_lineno or fn.lineno) and (best is None or fn.lineno >= best.lineno):
            best = fn
    if best is None:
        return None
    body = best.body[1:] if _is_docstring(best.body[0]) else best.body
    if all(_inert(stmt) for stmt in body):
        return best.name
    return None


def _inert(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
        return True
    if isinstance(stmt, ast.Return):
        return stmt.value is None or isinstance(stmt.value, ast.Constant)
    return isinstance(stmt, ast.Raise) and _dotted_tail(stmt.exc) in ("NotImplementedError", "NotImplemented")


# --- SEN401 grading: what a marker says about the change ---------------------------------------------

# Markers reported on one comment line: prose has one or two; a generated line of thousands would otherwise
# become thousands of findings, each carrying the whole line through the engine and every report.
_MARKERS_PER_LINE = 5

# A marker standing for work that is not done: the change is unfinished.
_MISSING_WORK = lazy_compile(
    r"\b(?:implement(?:ed|ation)?|finish|fill\s+(?:in|out|this)|placeholder|stub(?:bed)?|unimplemented|"
    r"not\s+(?:yet\s+)?(?:implemented|done|finished|working|supported\s+yet)|incomplete|wip\b|"
    r"write\s+(?:the\s+|this\s+|a\s+|real\s+)?(?:code|logic|implementation|body|function|method|tests?)|"
    r"add\s+(?:the\s+|real\s+|actual\s+|proper\s+)?(?:implementation|code|logic|body)|"
    r"handle\s+(?:errors?|exceptions?|failures?|the\s+error|this\s+case|edge\s+cases?|invalid\s+input)|"
    r"make\s+(?:this|it)\s+work|does(?:\s+not|n't)\s+work|remove\s+(?:this\s+)?before\s+(?:merg|releas|commit))",
    re.IGNORECASE)
# An owner or a tracked issue: TODO(alice), TODO(#123), TODO: ... (#123), GH-12, PROJ-12, an issue URL.
_TRACKED = lazy_compile(
    r"^\s*(?:\(\s*@?[\w.-]+\s*\)|\[\s*@?[\w.-]+\s*\])|#\d+\b|\bGH-\d+\b|\b[A-Z][A-Z0-9]+-\d+\b|"
    r"https?://\S+/(?:issues?|pull|browse|tickets?)/\S+|\b(?:see|tracked\s+(?:in|by)|issue)\s+#?\d+", re.IGNORECASE)
_MARKER_LEAD = lazy_compile(r"^[\s:,.\-–—]*")


def _marker_grade(ctx: FileContext, n: int, comment: str, start: int, word: str, tracked: bool):
    """(severity, why) of a marker the change adds: missing work blocks, a note about later improvement in
    finished code is a warning, a marker naming its owner or issue is information."""
    rest = comment[start + len(word):].lstrip("s")
    if tracked or _TRACKED.search(rest):
        return Severity.INFO, "tracked"
    text = _MARKER_LEAD.sub("", rest)
    if len(text.strip(" .:!-")) < 3:
        # A marker closing a comment that says something (`"ANN401",  # any-type  # FIXME`) is described by it.
        text = _comment_body(_MARKER_TAIL.sub("", comment[:start]))
        if len(text.strip(" .:!-")) < 3:
            return Severity.ERROR, "no description of what is left"
    if _MISSING_WORK.search(text):
        return Severity.ERROR, "work left undone"
    if ctx.language == "python" and _near_stub(ctx, n):
        return Severity.ERROR, "next to a stub body"
    return Severity.WARNING, "a note for later"


# Comment openers and the separators between comments on one line, as they end the text before a marker.
_MARKER_TAIL = lazy_compile(r"[\s#;/*-]*$")


def _near_stub(ctx: FileContext, n: int) -> bool:
    """Is a stub this check would report (a `pass` / `...` body, a `raise NotImplementedError`) within two lines of
    the marker? The idioms that look like stubs and are not (an `@overload` signature, an abstract method, a
    Protocol) do not make a note next to them missing work."""
    near = range(max(1, n - 2), min(ctx.line_count, n + 2) + 1)
    if ctx.tree is not None and not ctx.path.endswith(".pyi"):
        stubs = ctx.memo.get(_STUB_LINES)
        if stubs is None:
            stubs = ctx.memo[_STUB_LINES] = _reportable_stub_lines(ctx)
        return any(i in stubs for i in near)
    lexed = ctx.lexed
    for i in near:
        code = lexed.code_line(i)
        if "NotImplemented" in code or _STUB_CODE.search(code):
            return True
    return False


_STUB_LINES = "placeholder.stub-lines"


def _reportable_stub_lines(ctx: FileContext) -> set[int]:
    """Lines of every stub statement SEN402/SEN403 would report anywhere in the file."""
    raises, funcs, subclassed = _collect(ctx.tree, lambda _line: True)
    lines = {node.lineno for node, outer in raises if _not_implemented(ctx, node, outer, subclassed) is not None}
    for func, outer in funcs:
        if _stub_body(ctx, func, outer, subclassed, anywhere=True) is not None:
            body = func.body[1:] if _is_docstring(func.body[0]) else func.body
            lines.update(stmt.lineno for stmt in body)
    return lines


_NORMALIZE = lazy_compile(r"[\W_]+")


class _PreImageMarkers:
    """Markers that were in the file before the change (on lines the change removed or rewrote).

    A marker on an added line is the change's own only if it is not one of these: a line edited around an
    existing TODO, a typo fixed in one, or a block moved elsewhere in the file brings no new unfinished work.
    Each pre-image marker accounts for one added marker with the same or similar text, and only where the marker
    stayed in its place (the same spot of the same hunk) or came with its code: the code on its line, or the code
    around it, is unchanged or moved, not newly written. A bare `# TODO` in a new function is new work even when
    the same commit removes another bare `# TODO` elsewhere in the file."""

    def __init__(self, ctx: FileContext, words: tuple[str, ...]):
        self._ctx = ctx
        self._texts: list[tuple[str, int]] = []  # (normalized marker text, old line)
        self._removed_lines: set[str] | None = None
        for old_line, text in ctx.change.removed:
            if any(w in text for w in words):
                at = min((text.find(w) for w in words if w in text))
                self._texts.append((self._key(text[at:]), old_line))

    @staticmethod
    def _key(text: str) -> str:
        return _NORMALIZE.sub(" ", text.lower()).strip()

    def claims(self, marker_text: str, n: int, comment: str) -> bool:
        """Does this marker (its text from the marker on, on new line n) stand for one of the pre-image's?"""
        if not self._texts:
            return False
        key = self._key(marker_text)
        candidates = [entry for entry in self._texts if entry[0] == key]
        if not candidates:
            from difflib import SequenceMatcher

            candidates = [entry for entry in self._texts if SequenceMatcher(None, entry[0], key).ratio() >= 0.6]
        if not candidates:
            return False
        chosen = next((e for e in candidates if self._same_place(e[1], n)), None)
        if chosen is None and self._came_with_its_code(n, comment):
            chosen = candidates[0]
        if chosen is None:
            return False
        self._texts.remove(chosen)
        return True

    def _same_place(self, old_line: int, n: int) -> bool:
        """Old line and new line at the same spot of one hunk (an edit in place, give or take two lines)."""
        for h in self._ctx.change.hunks:
            if (h.source_start <= old_line < h.source_start + max(h.source_length, 1)
                    and h.target_start <= n < h.target_start + max(h.target_length, 1)):
                return abs((old_line - h.source_start) - (n - h.target_start)) <= 2
        return False

    def _came_with_its_code(self, n: int, comment: str) -> bool:
        ctx = self._ctx
        line = ctx.line(n)
        at = line.find(comment)
        code = line[:at].strip() if at > 0 else ""
        if code:
            return self._state(n) != _NEW_CODE
        neighbours = [m for m in (self._code_line(n, -1), self._code_line(n, 1)) if m is not None]
        return bool(neighbours) and all(self._state(m) != _NEW_CODE for m in neighbours)

    def _code_line(self, n: int, step: int) -> int | None:
        """The nearest line above (step -1) or below (+1) that holds code, within a few lines."""
        lexed = self._ctx.lexed
        m = n + step
        while 1 <= m <= self._ctx.line_count and abs(m - n) <= 8:
            if lexed.code_line(m).strip():
                return m
            m += step
        return None

    def _state(self, m: int) -> str:
        """Kept (not added), moved (added with the text of a removed line) or newly written."""
        if m not in self._ctx.change.added:
            return "kept"
        if self._removed_lines is None:
            self._removed_lines = {text.strip() for _, text in self._ctx.change.removed}
        return "moved" if self._ctx.line(m).strip() in self._removed_lines else _NEW_CODE


_NEW_CODE = "new"


def _hash_comment_candidate(ctx: FileContext, words: tuple[str, ...], folded: tuple[str, ...]) -> bool:
    """In '#'-comment languages a comment word always follows a '#' on its own line: check that on raw
    lines before lexing the whole file ("placeholder" in SQL strings, "dummy" in names are common)."""
    selected = ctx.selected_lines()
    if len(selected) * 8 >= ctx.line_count and (not selected or selected[-1] < len(ctx.lines)):
        return any(_has_word(tail, words, folded) for tail in _hash_tails(ctx, set(selected)))
    for n in selected:
        line = ctx.line(n)
        hash_at = line.find("#")
        if hash_at >= 0 and _has_word(line[hash_at:], words, folded):
            return True
    return False


_HASH_TAIL = lazy_compile(r"#[^\n]*")  # from the first "#" of a line to its end


def _hash_tails_may_hold(ctx: FileContext, words: tuple[str, ...], folded: tuple[str, ...]) -> bool:
    """False only when _hash_comment_candidate(ctx, w, f) is False for every w ⊆ words, f ⊆ folded: no "#" tail
    of any line of the text holds a word. Where the gate would search the whole text (a new file, a file mode),
    the tails of all lines, joined and searched once per word, are a tenth of the text or less: a whole tree's
    files are mostly code, and a file with no marker and no stub word in a comment was searched for each of ~30
    words through all its code. True (let the exact path decide) when a line in scope is not a line of the
    text (its stand-in comes from the diff) or the gate would look at a few lines only."""
    if not ctx.whole_file_in_scope:
        return True
    selected = ctx.selected_lines()
    if selected and selected[-1] > ctx.line_count:
        return True
    tails = "\n".join(_HASH_TAIL.findall(ctx.text))  # no word holds a line break: none spans two tails
    return _has_word(tails, words, folded)


def _hash_tails(ctx: FileContext, wanted: set[int]):
    """Of each line in `wanted` that holds a "#", the text from its first "#" on, as ctx.line(n) gives it:
    found by one scan of the whole text in C instead of a Python loop over every line of the file."""
    text = ctx.text
    cr = "\r" in text  # ctx.lines strips a line's trailing CRs then
    line, pos = 1, 0
    for m in _HASH_TAIL.finditer(text):
        start = m.start()
        line += text.count("\n", pos, start)
        pos = start
        if line in wanted:
            yield m.group().rstrip("\r") if cr else m.group()


def _has_word(tail: str, words: tuple[str, ...], folded: tuple[str, ...]) -> bool:
    if any(w in tail for w in words):
        return True
    if folded:
        low = tail.lower()
        return any(w in low for w in folded)
    return False


def _marker_hits(text: str, marker: re.Pattern, allowed: re.Pattern | None) -> list[tuple[int, str, bool]] | None:
    """Markers in a text as (offset, word, in the allowed tracked form); None when it carries no marker."""
    found = list(marker.finditer(text))
    if not found:
        return None
    found = [m for m in found if not _in_capital_name(text, m.start(), m.end())]
    if not found:
        return None
    spans = [m.span() for m in allowed.finditer(text)] if allowed is not None else []
    return [(m.start(), m.group().rstrip("s"), any(a <= m.start() < b for a, b in spans)) for m in found]


# A word in capitals: the words around a marker inside a name written in capitals.
_CAPS_BEFORE = lazy_compile(r"(?:^|[^\w])[A-Z]{2,}[ _]$")
_CAPS_AFTER = lazy_compile(r"[ _][A-Z]{2,}(?!\w)")


def _in_capital_name(text: str, start: int, end: int) -> bool:
    """Is the marker one word of a name in capitals, between two others (a Unicode character name such as
    `MONGOLIAN TODO SOFT HYPHEN` in a data table, a constant's words), rather than a note?"""
    return (_CAPS_BEFORE.search(text, max(0, start - 40), start) is not None
            and _CAPS_AFTER.match(text, end) is not None)


def _comment_body(comment: str) -> str:
    return _COMMENT_CLOSE.sub("", _COMMENT_OPEN.sub("", comment, count=1)).strip()


def _excerpt(comment: str, limit: int = 80) -> str:
    text = " ".join(comment.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _column(line: str, comment: str, offset: int) -> int:
    at = line.find(comment)
    return max(at, 0) + offset + 1


_INLINE_CODE = lazy_compile(r"`[^`\n]*`")


def _prose_markers(ctx: FileContext) -> list[Finding]:
    cfg = ctx.config.placeholder
    words, marker, allowed = _marker_patterns(tuple(cfg.markers), cfg.allowed_form)
    if words is None or not any_word(ctx, words):
        return []
    out = []
    for n in ctx.selected_lines():
        line = ctx.line(n)
        if not any(w in line for w in words):
            continue
        # Markers quoted as `code` are being talked about, not left behind.
        text = _INLINE_CODE.sub(lambda m: " " * len(m.group()), line)
        for start, word, tracked in _marker_hits(text, marker, allowed) or ():
            if not tracked:
                out.append(ctx.finding(SEN401, n, f"{word} marker: {_excerpt(line.strip())}", column=start + 1))
    return out


# --- SEN402 / SEN403: Python ----------------------------------------------------------------------------

def _python_stubs(ctx: FileContext) -> list[Finding]:
    tree = ctx.tree
    if tree is None:
        return []
    raises, funcs, subclassed = _collect(tree, ctx.selected)
    out: list[Finding] = []
    for node, outer in raises:
        finding = _not_implemented(ctx, node, outer, subclassed)
        if finding is not None:
            out.append(finding)
    for func, outer in funcs:
        finding = _stub_body(ctx, func, outer, subclassed)
        if finding is not None:
            out.append(finding)
    return out


# The blocks of each compound statement. Only statements are visited: expressions, most
# of a tree's nodes, cannot hold a function definition or a raise, so this walk costs a
# fraction of ``ast.walk``.
_BLOCKS: dict[type, tuple[str, ...]] = {
    ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"), ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"), ast.ExceptHandler: ("body",),
    ast.Match: ("cases",), ast.match_case: ("body",),
}
if hasattr(ast, "TryStar"):
    _BLOCKS[ast.TryStar] = _BLOCKS[ast.Try]


def _collect(tree: ast.AST, selected) -> tuple[list, list, set[str]]:
    """Selected raises and all functions, each with the blocks around it (outermost first),
    and the names every class of the file derives from."""
    raises: list[tuple[ast.Raise, tuple]] = []
    funcs: list[tuple[ast.AST, tuple]] = []
    subclassed: set[str] = set()
    stack = [(child, ()) for child in reversed(getattr(tree, "body", ()))]
    pop, push = stack.pop, stack.extend
    blocks = _BLOCKS
    while stack:
        node, outer = pop()
        kind = type(node)
        if kind is ast.Raise:
            if selected(node.lineno):
                raises.append((node, outer))
            continue
        fields = blocks.get(kind)
        if fields is None:
            continue
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            funcs.append((node, outer))
        elif kind is ast.ClassDef:
            subclassed.update(name for name in map(_dotted_tail, node.bases) if name)
        inner = outer + (node,)
        for name in fields:
            children = getattr(node, name)
            if children:
                push([(child, inner) for child in reversed(children)])
    return raises, funcs, subclassed


def _abstract_class(cls: ast.ClassDef, subclassed: set[str]) -> bool:
    """Abstract by declaration (ABC, Protocol, ABCMeta), by name (Base*, *Mixin...) or by use (subclassed here)."""
    if any(_dotted_tail(b) in _ABSTRACT_BASES for b in cls.bases):
        return True
    if any(k.arg == "metaclass" and _dotted_tail(k.value) == "ABCMeta" for k in cls.keywords):
        return True
    return bool(_ABSTRACT_NAME.search(cls.name)) or cls.name in subclassed


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


# Decorators that give a function its behaviour or only declare it: the body is empty by design.
_REGISTERING_DECORATORS = frozenset({"command", "group", "callback", "hookspec", "hookimpl", "fixture",
                                     "result_callback", "overload", "override", "abstractmethod",
                                     "register", "setter", "deleter", "validator", "field_validator", "signal",
                                     "receiver", "event", "listens_for", "hybrid_property", "expression"})
_EXPLAINS_NOOP = lazy_compile(r"\bno[- ]?op\b|nothing|intentional|deliberate|on purpose|ignored?\b|override|"
                              r"subclass|hook|placeholder for subclasses|by default", re.IGNORECASE)


def _dotted_tail(node: ast.AST) -> str | None:
    """The last name of `x`, `a.b.x`, `x[...]` or `x(...)`."""
    while isinstance(node, (ast.Subscript, ast.Call)):
        node = node.value if isinstance(node, ast.Subscript) else node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _decorators(func) -> set[str]:
    return {name for name in map(_dotted_tail, func.decorator_list) if name}


def _abstract_function(func, parent, subclassed: set[str]) -> bool:
    if _decorators(func) & _ABSTRACT_DECORATORS:
        return True
    if not isinstance(parent, ast.ClassDef):
        return False
    return _abstract_class(parent, subclassed) or _template_hook(func, parent)


def _template_hook(func, cls: ast.ClassDef) -> bool:
    """A method the class's other methods reach through `self.name`: the class relies on a subclass to
    provide it (the template-method pattern), so its own body is not missing work."""
    reached = _self_attributes(cls)
    return any(method is not func for method in reached.get(func.name, ()))


def _self_attributes(cls: ast.ClassDef) -> dict[str, list]:
    """`self.x` / `cls.x` names -> the methods of the class that use them; walked once per class (a class
    with hundreds of stub methods would otherwise walk its whole body once per stub) and kept on the node."""
    found = getattr(cls, "_sentinel_self_attributes", None)
    if found is None:
        found = {}
        for method in cls.body:
            if not isinstance(method, _FUNCS):
                continue
            for node in walk(method):  # ast.walk's nodes but the Load/Store and operator leaves
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and node.value.id in ("self", "cls")):
                    users = found.setdefault(node.attr, [])
                    if not users or users[-1] is not method:
                        users.append(method)
        cls._sentinel_self_attributes = found
    return found


def _wraps_an_object(cls: ast.ClassDef) -> bool:
    """A wrapper: its `__init__` keeps an object it is given (`self._stream = stream`) and its methods pass calls
    on to it (`self._stream.write(...)`, or `__getattr__` forwarding). Such a class exists to change how some of
    those calls behave, so a `pass` method there is the point (not closing what it wraps), not missing work."""
    init = next((m for m in cls.body if isinstance(m, _FUNCS) and m.name == "__init__"), None)
    if init is None:
        return False
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs)} - {"self"}
    kept = {t.attr for stmt in walk(init) if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Name)
            and stmt.value.id in params
            for t in stmt.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            and t.value.id == "self"}
    if not kept:
        return False
    if any(isinstance(m, _FUNCS) and m.name in ("__getattr__", "__getattribute__") for m in cls.body):
        return True
    users = _self_attributes(cls)
    for attr in kept:
        if any(m is not init for m in users.get(attr, ())):
            return True
    return False


def _not_implemented(ctx: FileContext, node: ast.Raise, outer: tuple, subclassed: set[str]) -> Finding | None:
    exc = node.exc
    name = _dotted_tail(exc) if exc is not None else None
    if name not in ("NotImplementedError", "NotImplemented"):
        return None
    # The innermost function around the raise (a class body in between means there is none).
    at = len(outer) - 1
    while at >= 0 and not isinstance(outer[at], (*_FUNCS, ast.ClassDef)):
        at -= 1
    func = outer[at] if at >= 0 and isinstance(outer[at], _FUNCS) else None
    if func is not None:
        parent = outer[at - 1] if at > 0 else None
        if _abstract_function(func, parent, subclassed) or _decorators(func) & _DISPATCH_DECORATORS:
            return None
    message = _message(exc)
    if message is not None and (_DELIBERATE.search(message)
                                or any(isinstance(b, _CONDITIONAL) for b in outer[at + 1:])):
        return None
    if message is not None and func is not None and _dunder(func.name):
        return None  # a protocol method refusing on purpose (__bool__ of a lazy object: "use .exists()")
    where = f"{func.name}()" if func is not None else "module level"
    return ctx.finding(SEN402, node.lineno, f"raise {name} in {where}", column=node.col_offset + 1)


def _message(exc: ast.AST) -> str | None:
    """The exception's message: its literal text ("" for a computed one), None when it has none."""
    if not isinstance(exc, ast.Call) or not (exc.args or exc.keywords):
        return None
    first = exc.args[0] if exc.args else None
    if isinstance(first, ast.Constant):
        return str(first.value) if first.value else None
    if isinstance(first, ast.JoinedStr):
        return "".join(str(v.value) for v in first.values if isinstance(v, ast.Constant))
    return ""


def _stub_statement(stmt: ast.stmt) -> str | None:
    if isinstance(stmt, ast.Pass):
        return "pass"
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis:
        return "..."
    return None


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _stub_body(ctx: FileContext, func, outer: tuple, subclassed: set[str], anywhere: bool = False) -> Finding | None:
    """SEN403 for this function, or None; ``anywhere``: whether or not its stub line is in scope."""
    body = func.body
    stmts = body[1:] if _is_docstring(body[0]) else body
    if not stmts:
        return None  # a docstring alone documents a deliberate no-op
    kinds = {_stub_statement(s) for s in stmts}
    if None in kinds:
        return None
    stub = stmts[-1]
    if not anywhere and not ctx.selected(stub.lineno):
        return None
    kind = "pass" if kinds == {"pass"} else "..."
    name = func.name
    if _dunder(name) or _NOOP_NAME.search(name):
        return None
    if ctx.change.role == TEST and not name.startswith("test"):
        return None  # in tests an empty body is a double, a hook or a fixture; an empty *test* tests nothing
    parent = outer[-1] if outer else None
    if _abstract_function(func, parent, subclassed):
        return None
    if _decorators(func) & _REGISTERING_DECORATORS:
        return None  # the decorator is the behaviour: a click/typer group, a pluggy hookspec, a fixture
    if body is not stmts and (isinstance(parent, ast.ClassDef) or _EXPLAINS_NOOP.search(body[0].value.value)):
        return None  # a no-op method whose docstring says what it is for
    if isinstance(parent, _FALLBACK_BLOCKS):
        return None  # a platform or import fallback
    if isinstance(parent, _FUNCS) and kind == "pass":
        return None  # a local no-op callback
    if isinstance(parent, ast.ClassDef):
        if _DOUBLE_NAME.search(parent.name):
            return None
        if kind == "pass" and any(_dotted_tail(b) not in (None, "object") for b in parent.bases):
            return None  # a no-op override silencing an inherited hook
        if kind == "pass" and _wraps_an_object(parent):
            return None  # a null-object method: the wrapper deliberately does not pass this call on
    if _explained(ctx, func.lineno, max(func.end_lineno or stub.lineno, stub.lineno)):
        return None
    what = "method" if isinstance(parent, ast.ClassDef) else "function"
    return ctx.finding(SEN403, stub.lineno, f"{what} {name}() has only a stub body ({kind})",
                       column=stub.col_offset + 1)


def _explained(ctx: FileContext, first: int, last: int) -> bool:
    """Is there a comment on the function's lines that explains the stub (not a marker or stub comment)?"""
    comments = ctx.lexed.comments
    cfg = ctx.config.placeholder
    _, marker, _ = _marker_patterns(tuple(cfg.markers), cfg.allowed_form)
    for n in range(first, last + 1):
        comment = comments.get(n)
        if comment is None:
            continue
        body = _comment_body(comment)
        if not body:
            continue
        if marker is not None and marker.search(comment):
            continue
        if _stub_comment(comment):
            continue
        return True
    return False


# --- SEN402 in other languages -----------------------------------------------------------------------------

def _other_not_implemented(ctx: FileContext) -> list[Finding]:
    sources = _NOT_IMPL_SOURCES.get(ctx.language, ())
    patterns = [_compiled(source, flags) for source, flags, gate in sources if any_word(ctx, gate)]
    if not patterns:
        return []
    lexed = ctx.lexed
    out = []
    for n in ctx.selected_lines():
        line = ctx.line(n)
        code = lexed.code_line(n)
        for p in patterns:
            m = p.search(line)
            # The match must start in code: the lexer keeps code columns where they were.
            if m and code[m.start():m.start() + 3] == line[m.start():m.start() + 3]:
                out.append(ctx.finding(SEN402, n, f"not-implemented placeholder: {_excerpt(m.group(), 60)}",
                                       column=m.start() + 1))
                break
    return out
