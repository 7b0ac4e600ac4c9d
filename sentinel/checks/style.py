"""style: an added line must match the conventions of the file it lands in.

Every rule judges a line against *that file's* own habits (its indentation, its line
endings) or the project's own configured limits, never against a style the project did
not choose: a tab-indented file may add tabs, a CRLF file may add CRLF lines, a project
with ``line-length = 88`` is held to 88. Only layout is looked at, so every rule except
the wildcard import is a per-line string test on the added lines; the lexer is consulted
only for the few candidate lines, to leave the contents of multi-line strings alone.

Decisions, documented so they can be relied on:

* SEN201 reads the convention from the file's existing lines (a new file: its own lines).
  Only leading whitespace counts; continuation lines (after ``,``/``(``/an operator, or
  in C/C++ any line before the ``;``) are alignment, as are block-comment bodies and the
  inside of multi-line strings. A space before a tab is always mixed. Emacs/GNU layout (a
  tab for every 8 columns of space indentation) is a convention of its own, and a file
  whose existing lines already mix both styles at scale holds an addition to neither.
  Makefiles are never judged; Go files may always use tabs.
* SEN202 applies only the limit a linter of the project enforces (see :mod:`sentinel.projectconf`), or
  ``style.line-length``; it follows ruff's E501 exemptions (a single word, a URL starting within the limit, a
  trailing pragma comment, an SPDX licence tag); a line long because of a string literal is reported, as ruff
  reports it.
* SEN203 leaves ``.pyi`` stubs, a package ``__init__`` re-exporting its own submodules,
  facades over private modules (``from _decimal import *``) and lines the project already
  accepted with ``# noqa: F403`` alone.
* Consecutive offending lines are one finding (``end_line`` marks the block), not one each.
"""

from __future__ import annotations

import ast
import re

from sentinel import projectconf
from sentinel.checks.base import FileContext
from sentinel.languages import PROSE
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding, Severity
from sentinel.roles import STUB
from sentinel.rules import LAYOUT_ROLES, OFF, QUALITY_ROLES, Rule

CHECK = "style"

SEN201 = Rule(
    "SEN201", "mixed-indentation", CHECK, Severity.WARNING,
    summary="An added line is indented with tabs in a space-indented file, or the other way round, "
            "or mixes spaces and tabs in its indentation.",
    rationale="Mixed indentation renders differently in every editor and diff viewer, hides the real nesting "
              "of code, and in Python can change or break the meaning of a block (TabError).",
    example="function load(path) {\n    const data = read(path);\n\treturn data;\n}\n",
    counter_example="function load(path) {\n    const data = read(path);\n    return data;\n}\n",
    hint="Re-indent the line with the file's own indentation (configure the editor per file type).",
    example_path="example.js",
    roles=LAYOUT_ROLES, noqa=("E101", "W191", "mixed-indentation"), fix="safe",
)
SEN202 = Rule(
    "SEN202", "line-too-long", CHECK, Severity.WARNING,
    summary="An added line is longer than the limit the project's own linter enforces (ruff with E501 selected, "
            "flake8/pycodestyle, flake8-bugbear B950, pylint line-too-long), or style.line-length when set.",
    rationale="Over-long lines are hard to review side by side. The gate holds a change to the limit the "
              "project's own linters enforce, counted their way, and to nothing when none does (a project that "
              "leaves wrapping to its formatter has chosen so); lines long only because of a URL, a trailing "
              "pragma or one string literal are exempt, as in ruff.",
    example="result = compute(" + ", ".join(f"argument_number_{i}" for i in range(12)) + ")\n",
    counter_example="result = compute(\n" + "".join(f"    argument_number_{i},\n" for i in range(12)) + ")\n",
    hint="Wrap the line (break after an opening bracket or split the expression into named steps).",
    example_config={"style": {"line_length": 100}},
    roles=LAYOUT_ROLES, noqa=("E501", "B950", "W505", "line-too-long", "C0301"),
)
SEN203 = Rule(
    "SEN203", "wildcard-import", CHECK, Severity.ERROR,
    summary="A Python `from module import *`.",
    rationale="A wildcard import hides where names come from, silently shadows existing names when the module "
              "grows, and defeats linters and readers alike.",
    example="from os.path import *\n\nprint(join('a', 'b'))\n",
    counter_example="from os.path import join\n\nprint(join('a', 'b'))\n",
    hint="Import the names you use explicitly (or import the module and qualify them).",
    roles={**QUALITY_ROLES, STUB: OFF}, noqa=("F403", "wildcard-import", "W0401"), fix="safe",
)
SEN204 = Rule(
    "SEN204", "mixed-line-endings", CHECK, Severity.WARNING,
    summary="An added line ends in CRLF in a file whose lines end in LF, or in LF in a CRLF file.",
    rationale="Mixed line endings produce whole-file diffs on the next edit, confuse tools that split on one "
              "convention, and usually come from a misconfigured editor or a paste.",
    example="first = 1\nsecond = 2\r\nthird = 3\nfourth = 4\n",
    counter_example="first = 1\nsecond = 2\nthird = 3\nfourth = 4\n",
    hint="Convert the line to the file's line ending (or set `* text=auto` in .gitattributes).",
    roles=LAYOUT_ROLES, noqa=("mixed-line-endings", "C0327", "C0328"), fix="safe",
)
SEN205 = Rule(
    "SEN205", "trailing-whitespace", CHECK, Severity.INFO,
    summary="An added line ends in spaces or tabs.",
    rationale="Trailing whitespace is invisible noise that shows up as spurious changes in later diffs.",
    example="total = 1 \nprint(total)\n",
    counter_example="total = 1\nprint(total)\n",
    hint="Strip trailing whitespace (most editors can do it on save).",
    roles=LAYOUT_ROLES, noqa=("W291", "W293", "trailing-whitespace", "C0303"), fix="safe",
)
RULES: tuple[Rule, ...] = (SEN201, SEN202, SEN203, SEN204, SEN205)

# Languages whose line length is a code-style matter; prose, data, lock and markup files
# have lines nobody should wrap by hand.
LINE_LENGTH_LANGUAGES = frozenset({
    "python", "javascript", "typescript", "shell", "go", "rust", "java", "kotlin", "ruby", "c", "cpp",
    "csharp", "php", "swift", "scala", "lua", "perl", "sql", "groovy", "make", "docker",
})
# Layout is judged in every file we know the language of, except prose (markdown hard
# breaks are trailing spaces); Makefile recipes must be tabs, so their indentation is not.
_LAYOUT_SKIP = PROSE | {"unknown"}
_INDENT_SKIP = _LAYOUT_SKIP | {"make"}

_WILDCARD = lazy_compile(r"import\s*\*")  # a literal prefix: a fast scan of the whole text
_WILDCARD_LINE = lazy_compile(r"^\s*from\s+(\.*[\w.]*)\s+import\s*\*")
# ruff's E501 exemptions: pragma comments and URLs that start before the limit.
_NOQA_F403 = re.compile(r"noqa(?!:)|noqa:[^#]*\bF40[36]\b")
_TRAILING_URL = lazy_compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+$")
# A line ending in one of these continues its statement, so its successor may be aligned
# with spaces even in a tab-indented file ("smart tabs").
_CONTINUES = tuple(",([=+-*/%&|^<>?\\")
_C_FAMILY = frozenset({"c", "cpp"})
_C_ENDS = (";", "{", "}", ":")
_C_CONTROL = lazy_compile(r"\s*(?:\}\s*)?(?:if|else|for|while|do|switch)\b")


def check_file(ctx: FileContext) -> list[Finding]:
    language = ctx.language
    if language in PROSE or ctx.change.is_binary:
        return []
    last = len(ctx.lines) - 1
    selected = [n for n in ctx.selected_lines() if n <= last]
    out: list[Finding] = []
    if language not in _INDENT_SKIP:
        out.extend(_indentation(ctx, selected))
    if language not in _LAYOUT_SKIP:
        out.extend(_trailing_whitespace(ctx, selected))
        out.extend(_line_endings(ctx, selected))
    if language in LINE_LENGTH_LANGUAGES:
        out.extend(_line_length(ctx, selected))
    if language == "python":
        out.extend(_wildcard_imports(ctx, selected))
    return out


# --- helpers -----------------------------------------------------------------------------

def any_word(ctx: FileContext, words: tuple[str, ...], fold: bool = False) -> bool:
    """Cheap gate: does a line in scope contain one of these substrings (lowercased text when fold)?

    Substring search runs at memory speed, where a regex alternation (worse, a case-insensitive
    one) costs microseconds per line; when every line is in scope the whole text is searched at once.
    """
    if ctx.whole_file_in_scope:
        text = ctx.lower_text if fold else ctx.text
        return any(w in text for w in words)
    for n in ctx.selected_lines():
        line = ctx.line(n).lower() if fold else ctx.line(n)
        if any(w in line for w in words):
            return True
    return False


def code_matches(ctx: FileContext, pattern: re.Pattern, selected: list[int]) -> list[int]:
    """Selected lines where the pattern matches in code (not inside a comment or a string)."""
    text = ctx.text
    found: list[int] = []
    line, pos = 1, 0
    for m in pattern.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if not found or found[-1] != line:
            found.append(line)
    if not found:
        return []
    wanted = set(selected)
    lexed = ctx.lexed
    out = []
    for n in found:
        if n in wanted and pattern.search(lexed.code_line(n)):
            out.append(n)
    return out


def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Consecutive line numbers grouped as (first, last): one finding per block, not per line."""
    runs: list[tuple[int, int]] = []
    for n in lines:
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _span(first: int, last: int) -> str:
    return "" if first == last else f" (lines {first}-{last})"


def _leading(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


# --- SEN201 mixed-indentation ----------------------------------------------------------------

def indentation_style(lines, allow_tab8: bool = True, mixed_share: float | None = None) -> str | None:
    """The convention of these lines: 'tab', 'space', 'tab8', 'any' or None (nothing indented).

    'tab8' is the Emacs/GNU convention: indentation in spaces, each 8 columns written as a
    tab, so shallow lines start with spaces and deep ones with tabs. It is recognised when
    space-led lines are common yet the lines 8 columns deep or more are (nearly) all
    written with tabs. Otherwise the majority wins (ties go to the first indented line),
    unless the minority reaches ``mixed_share`` of the votes: then the lines already mix
    both and hold an addition to neither ('any'). Single-space leads, lines starting with "*"
    (block-comment bodies) and lines continuing the previous one are alignment, not
    indentation, and do not vote.
    """
    tabs = spaces = deep_spaces = 0
    first: str | None = None
    prev = ""
    for _, line in lines:
        continued = prev.endswith(_CONTINUES)
        prev = line.rstrip()
        if continued:
            continue
        c = line[:1]
        if c == "\t":
            tabs += 1
            first = first or "tab"
        elif c == " " and line[1:2] in (" ", "\t"):
            body = line.lstrip(" \t")
            if not body or body[0] == "*":
                continue
            spaces += 1
            if line.startswith("        "):
                deep_spaces += 1
            first = first or "space"
    deep = tabs + deep_spaces  # lines 8 columns deep or more (a tab is 8 columns)
    if allow_tab8 and tabs >= 3 and spaces >= 3 and spaces * 10 >= tabs + spaces:
        if deep_spaces * 20 <= deep:
            return "tab8"
        if mixed_share is not None and min(tabs, deep_spaces) >= mixed_share * deep:
            return "any"  # tabs for 8 columns, but not consistently
    if mixed_share is not None and tabs and spaces and min(tabs, spaces) >= mixed_share * (tabs + spaces):
        return "any"
    if tabs == spaces:
        return first
    return "tab" if tabs > spaces else "space"


_INDENT_MESSAGES = {
    "mixed": "indentation mixes spaces and tabs (a space before a tab)",
    "tab": "indented with tabs; this file indents with spaces",
    "space": "indented with spaces; this file indents with tabs",
    "spaces8": "8 or more columns of spaces; this file writes every 8 columns as a tab",
    "tabspace": "indentation mixes tabs and spaces (spaces after the tabs)",
}


def _indentation(ctx: FileContext, selected: list[int]) -> list[Finding]:
    # Without a tab anywhere, nothing can be mixed: the common case costs one C-level scan.
    if "\t" not in ctx.text:
        return []
    lines = ctx.lines
    added = ctx.change.added
    # Python rejects tab/space mixing that depends on the tab width (TabError); YAML rejects tabs.
    allow_tab8 = ctx.language not in ("python", "yaml")
    # A file whose existing lines already mix both at scale has no convention to hold a change to.
    style = indentation_style(((n, lines[n]) for n in range(1, len(lines)) if n not in added), allow_tab8,
                              mixed_share=0.25)
    if style is None:  # a new file (or one without indented lines): its own majority decides
        style = indentation_style(((n, lines[n]) for n in sorted(added) if n < len(lines)), allow_tab8)
    go = ctx.language == "go"
    python = ctx.language == "python"
    candidates: list[tuple[int, str]] = []
    for n in selected:
        line = lines[n]
        c = line[:1]
        if c != " " and c != "\t":
            continue
        ws = _leading(line)
        if len(ws) == len(line):
            continue  # whitespace-only: trailing-whitespace territory
        if " \t" in ws:
            candidates.append((n, "mixed"))
        elif style == "tab8":
            if ws.startswith("        "):
                candidates.append((n, "spaces8"))
        elif "\t" in ws and style == "space" and not go:
            candidates.append((n, "tab"))
        elif c == " " and style == "tab" and not (len(ws) == 1 and line[1:2] == "*"):
            candidates.append((n, "space"))
        elif c == "\t" and style == "tab" and ws[-1] == " " and python:
            # Python's blocks are their indentation: spaces after the tabs are alignment only on a
            # continued line. Elsewhere "\t  public:" or a comment aligned after tabs is common style.
            candidates.append((n, "tabspace"))
    if not candidates:
        return []
    lexed = ctx.lexed
    inner = lexed.string_inner
    comments = lexed.comments
    c_family = ctx.language in _C_FAMILY
    flagged: dict[str, list[int]] = {}
    for n, kind in candidates:
        if n in inner:
            continue
        comment = comments.get(n)
        if comment is not None and lines[n].startswith(comment):
            continue  # the line begins inside a block comment: its layout is prose
        if kind != "mixed" and _continues(lexed, n, c_family):
            continue  # a continuation line is aligned, not indented
        flagged.setdefault(kind, []).append(n)
    out = []
    for kind, numbers in flagged.items():
        for first, last in _runs(numbers):
            out.append(ctx.finding(SEN201, first, _INDENT_MESSAGES[kind] + _span(first, last), column=1,
                                   end_line=last))
    return out


def _continues(lexed, n: int, c_family: bool = False) -> bool:
    """Does the previous code line continue onto line n (so n may be aligned, not indented)?

    In C and C++ a statement or declaration runs until ";", "{" or "}", so any other line
    ending (a return type above its function name) continues it, except a control header
    (``if (x)``, ``else``), whose next line is an indented body.
    """
    for prev in range(n - 1, max(n - 50, 0), -1):
        code = lexed.code_line(prev).rstrip()
        if code:
            if code.endswith(_CONTINUES):
                return True
            return (c_family and not code.endswith(_C_ENDS) and not code.lstrip().startswith("#")
                    and not _C_CONTROL.match(code))
    return False


# --- SEN202 line-too-long -----------------------------------------------------------------------

def line_limit(ctx: FileContext) -> tuple[int | None, str, str]:
    """(limit, where it comes from, how characters are counted); limit None: nothing enforces one here."""
    cfg = ctx.config.style
    if cfg.line_length is not None:
        return cfg.line_length, "style.line-length", projectconf.CHARS
    if ctx.language != "python":
        return None, "", projectconf.CHARS  # the linters whose limits we know lint Python only
    policy = projectconf.project_policy(ctx.root)
    if not policy.applies_to(ctx.path):
        return None, "", projectconf.CHARS
    return policy.limit, policy.source or "the project's linter", policy.counting


def _line_length(ctx: FileContext, selected: list[int]) -> list[Finding]:
    limit, source, counting = line_limit(ctx)
    if not limit:
        return []
    lines = ctx.lines
    out = []
    comments = None
    for n in selected:
        line = lines[n]
        if len(line) <= limit and (counting != projectconf.WIDTH or line.isascii()):
            continue
        size = _width(line) if counting == projectconf.WIDTH else len(line)
        if size <= limit:
            continue
        if comments is None:
            comments = ctx.lexed.comments if ctx.language in _PRAGMA_LANGS else {}
        if _long_line_exempt(line, limit, comments.get(n), counting, ctx.language):
            continue
        out.append(ctx.finding(SEN202, n, f"line is {size} characters, over the limit of {limit} ({source})",
                               column=limit + 1))
    return out


_PRAGMA_LANGS = frozenset({"python"})
# Trailing comments that tools need on the very line they apply to: a line long only because of one is not
# reported (ruff's rule), provided the code before it fits.
# ruff's pragmas (noqa, type:, pyright:, pylint:, nosec, isort:, ruff:) and Sentinel's own; coverage's
# `# pragma: no cover` and black's `# fmt: skip` are not among them: ruff reports a line long because of one.
_PRAGMA = lazy_compile(r"#\s*(?:noqa\b|type:\s*ignore|pyright:\s*ignore|nosec\b|pylint:|isort:|ruff:|sentinel:)",
                       re.I)
# A machine-readable licence tag: ruff never wraps or reports it.
_SPDX = lazy_compile(r"^\s*(?:#|//|/\*|--)\s*SPDX-License-Identifier:")


def _width(line: str) -> int:
    """ruff's width: East Asian wide and fullwidth characters take two columns."""
    if line.isascii():
        return len(line)
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line)


def _long_line_exempt(line: str, limit: int, comment: str | None, counting: str, language: str) -> bool:
    """ruff's E501 exemptions: one word, a URL starting within the limit, a trailing pragma, an SPDX licence
    tag. A line long because of a string literal is reported, as ruff and pycodestyle report it (the string
    can be split into implicitly concatenated pieces)."""
    stripped = line.strip()
    body = stripped[1:].strip() if language == "python" and stripped.startswith("#") else stripped
    if body and not any(ch.isspace() for ch in body):
        return True
    m = _TRAILING_URL.search(line)
    if m and m.start() < limit:
        return True
    if comment is not None and _PRAGMA.match(comment):
        code = line[:len(line) - len(comment)].rstrip() if line.endswith(comment) else line.split("#", 1)[0]
        if (_width(code) if counting == projectconf.WIDTH else len(code)) <= limit:
            return True
    return _SPDX.match(line) is not None


# --- SEN203 wildcard-import ------------------------------------------------------------------------

def _wildcard_imports(ctx: FileContext, selected: list[int]) -> list[Finding]:
    if ctx.path.endswith(".pyi"):
        return []
    # Mentions in docstrings and comments are common; only one in code is worth a parse.
    candidates = code_matches(ctx, _WILDCARD, selected)
    if not candidates:
        return []
    package_init = ctx.path.rsplit("/", 1)[-1] == "__init__.py"
    out = []
    tree = ctx.tree
    if tree is not None:
        for node in ctx.nodes(ast.ImportFrom):
            if node.names[0].name != "*" or not ctx.node_selected(node):
                continue
            module = "." * node.level + (node.module or "")
            if _wildcard_accepted(ctx, node.lineno, module, package_init):
                continue
            out.append(ctx.finding(SEN203, node.lineno, f"wildcard import from {module}",
                                   column=node.col_offset + 1))
        return out
    # The file does not parse: the lexer still knows what is code.
    lexed = ctx.lexed
    for n in candidates:
        m = _WILDCARD_LINE.match(lexed.code_line(n))
        if m and not _wildcard_accepted(ctx, n, m.group(1), package_init):
            out.append(ctx.finding(SEN203, n, f"wildcard import from {m.group(1)}", column=1))
    return out


def _wildcard_accepted(ctx: FileContext, line: int, module: str, package_init: bool) -> bool:
    """The idioms wildcard imports exist for, and the ones the project's linter was told to accept."""
    if package_init and module.startswith("."):
        return True  # a package's __init__ re-exporting its own submodules
    if module.rsplit(".", 1)[-1].startswith("_"):
        return True  # a public facade over a private (often C) implementation: from _decimal import *
    comment = ctx.lexed.comments.get(line, "")
    return "noqa" in comment and _NOQA_F403.search(comment) is not None


# --- SEN204 mixed-line-endings ----------------------------------------------------------------------

def _line_endings(ctx: FileContext, selected: list[int]) -> list[Finding]:
    added = ctx.change.added
    text = ctx.text
    # Only real content can hold a "\r" (the stand-in built from the diff drops them), and
    # real content without one has no CRLF line to report.
    if "\r" in text:
        raw = text.split("\n")
        terminated = len(raw) - 1  # the last piece has no line ending at all
        crlf = {n for n in range(1, terminated + 1) if raw[n - 1].endswith("\r")}
        existing = [n for n in range(1, terminated + 1) if n not in added]
        if not existing:
            existing = [n for n in sorted(added) if n <= terminated]
        selected = [n for n in selected if n <= terminated]
    else:
        crlf = ctx.change.crlf_lines
        if not crlf:
            return []
        existing = sorted(added)
        selected = [n for n in selected if n in added]  # other lines' endings are unknown
    crlf_count = sum(1 for n in existing if n in crlf)
    lf_count = len(existing) - crlf_count
    if crlf_count == lf_count:
        return []  # no convention to hold the change to
    file_crlf = crlf_count > lf_count
    offending = [n for n in selected if (n in crlf) != file_crlf]
    want, got = ("CRLF", "LF") if file_crlf else ("LF", "CRLF")
    return [ctx.finding(SEN204, first, f"line ends in {got}; this file uses {want}" + _span(first, last),
                        end_line=last)
            for first, last in _runs(offending)]


# --- SEN205 trailing-whitespace -----------------------------------------------------------------------

def _trailing_whitespace(ctx: FileContext, selected: list[int]) -> list[Finding]:
    lines = ctx.lines
    candidates = [n for n in selected if lines[n][-1:] in (" ", "\t")]
    if not candidates:
        return []
    # Whitespace before the newline of a multi-line string is part of the string's value.
    inner = ctx.lexed.string_inner
    kept = [n for n in candidates if n + 1 not in inner]
    out = []
    for first, last in _runs(kept):
        line = lines[first]
        out.append(ctx.finding(SEN205, first, "trailing whitespace" + _span(first, last),
                               column=len(line.rstrip(" \t")) + 1, end_line=last))
    return out
