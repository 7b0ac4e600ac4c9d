"""Layout fixes, as plain text: trailing whitespace (SEN205), line endings (SEN204), indentation (SEN201).

None changes the number of lines, and each touches only the lines of its finding: a fix is the spans of
those lines it rewrites, computed from facts about the file read once (FileLayout), so a file's thousands
of findings cost one pass over it. Whitespace inside a multi-line string is part of its value, so a line
whose ending (or start) lies inside a string is left alone; in Python the planner checks that the fixes
leave the file's AST as it was, or refuses them.
"""

from __future__ import annotations

import re
from collections import Counter

from sentinel.checks.style import indentation_style
from sentinel.fix.context import FixContext, body_and_ending, finding_lines
from sentinel.fix.model import NotFixable, Outcome
from sentinel.fix.splice import Lines, Span
from sentinel.languages import SLASH_COMMENT
from sentinel.lexer import lex

_CONTINUES = tuple(",([=+-*/%&|^<>?\\")
# Make keeps a variable's trailing spaces in its value, and so do some .env readers (docker's --env-file);
# a trailing "\ " in a shell is an escaped space.
_TRAILING_SIGNIFICANT = frozenset({"make", "dotenv"})


# The lexer models the multi-line literals of Python, JavaScript/TypeScript (template literals), Go (raw
# strings) and SQL. Other languages have literals it does not see — raw strings, text blocks, here-documents,
# block scalars, strings that simply run on — whose whitespace and line endings are data. Where a file may
# hold one, the layout fixes leave it alone: a fix that cannot tell layout from a value is not safe.
_QUOTE_RUNS_ON = {  # quote characters that may open a literal spanning lines in the language
    "rust": '"', "c": '"', "cpp": '"', "csharp": '"', "java": '"', "kotlin": '"', "scala": '"', "swift": '"',
    "groovy": "\"'", "php": "\"'", "shell": "\"'", "ruby": "\"'", "perl": "\"'", "lua": "\"'",
    "yaml": "\"'", "toml": "\"'", "javascript": "\"'", "typescript": "\"'", "docker": "\"'", "css": "\"'",
}
_HEREDOC = re.compile(r"<<[-~]?\s*['\"]?[A-Za-z_]\w*")
_OTHER_LITERALS = {
    "rust": (re.compile(r"(?<![\w])b?r#*\""), "a raw string"),
    "cpp": (re.compile(r"(?<![\w])(?:u8|[uUL])?R\""), "a raw string"),
    "shell": (_HEREDOC, "a here-document"), "ruby": (_HEREDOC, "a here-document"),
    "perl": (_HEREDOC, "a here-document"), "php": (re.compile(r"<<<"), "a heredoc"),
    "lua": (re.compile(r"\[=*\["), "a long string"),
    "groovy": (re.compile(r"\$/"), "a dollar-slashy string"),
    "yaml": (re.compile(r"(?:^|[:\-?]\s)\s*[|>][-+0-9]*\s*$"), "a block scalar"),
    "html": (re.compile(r"<(?:pre|textarea|script|style)\b|xml:space", re.I), "whitespace-preserving markup"),
    "xml": (re.compile(r"xml:space|<!\[CDATA\[", re.I), "whitespace-preserving markup"),
    "sql": (re.compile(r"\$\w*\$"), "a dollar-quoted string"),
}


def _unmodeled_literal(lexed, language: str) -> str | None:
    """Why whitespace in this file may belong to a literal the lexer does not see, or None."""
    if language in ("python", "go"):
        return None  # Python: every result is checked against the AST; Go: modelled in full
    quotes = _QUOTE_RUNS_ON.get(language, "")
    other = _OTHER_LITERALS.get(language)
    for n in range(1, len(lexed.code)):
        code = lexed.code[n]
        for q in quotes:
            if (code.count(q) - code.count("\\" + q)) % 2:
                return f"line {n} opens or closes a string that spans lines"
        if other is not None and other[0].search(code):
            return f"line {n} holds {other[1]}"
    return None


class FileLayout:
    """What the layout fixes of one file need, read once however many findings it has: its lines, the
    lines inside strings, a reason no layout fix may touch it, its line endings and indentation."""

    def __init__(self, text: str, ctx: FixContext):
        self.ctx = ctx
        self.lines = Lines(text)
        self.lexed = lex(text, ctx.language)
        self.inner = self.lexed.string_inner
        why = _unmodeled_literal(self.lexed, ctx.language)
        self.refusal = f"{why}: whitespace there may be part of a value, not layout" if why else None
        self._endings: tuple[list[str], int, int] | None = None
        self._indent: tuple | None = None

    def body_and_ending(self, n: int) -> tuple[str, str]:
        return body_and_ending(self.lines.line(n))

    def endings(self) -> tuple[list[str], int, int]:
        """(each line's ending, how many lines end in CRLF, how many in LF)."""
        if self._endings is None:
            endings = [self.body_and_ending(n)[1] for n in range(1, len(self.lines) + 1)]
            self._endings = (endings, endings.count("\r\n"), endings.count("\n"))
        return self._endings

    def indentation(self) -> tuple:
        """(style, {line: width} of the space-indented lines that say what the step is, their widths counted)."""
        if self._indent is None:
            stripped = [(n, self.body_and_ending(n)[0]) for n in range(1, len(self.lines) + 1)]
            allow_tab8 = self.ctx.language not in ("python", "yaml")
            added = self.ctx.added
            style = indentation_style(((n, ln) for n, ln in stripped if n not in added), allow_tab8, mixed_share=0.25)
            if style is None:
                style = indentation_style(((n, ln) for n, ln in stripped if n in added), allow_tab8)
            widths = _indent_widths(stripped, self.inner)
            self._indent = (style, widths, Counter(widths.values()))
        return self._indent


def _indent_widths(stripped: list[tuple[int, str]], skip: set[int]) -> dict[int, int]:
    """Line -> indentation width of every space-indented line that counts towards the file's step."""
    widths: dict[int, int] = {}
    prev = ""
    for n, line in stripped:
        continued = prev.rstrip().endswith(_CONTINUES)
        prev = line
        if n in skip or continued or not line.startswith(" "):
            continue
        body = line.lstrip(" ")
        if not body or body[0] in "*\t":
            continue
        widths[n] = len(line) - len(body)
    return widths


def _indent_unit(counts: Counter) -> int | None:
    """The file's indentation step in spaces: its shallowest space indentation, provided (nearly) every
    space-indented line is a multiple of it. None when the file does not say."""
    present = [w for w, c in counts.items() if c > 0]
    if not present:
        return None
    unit = min(present)
    total = sum(counts.values())
    if unit not in (2, 3, 4, 8) or sum(c for w, c in counts.items() if w % unit == 0) < 0.9 * total:
        return None
    return unit


def _changed(spans: list[Span], what: str) -> list[Span]:
    if not spans:
        raise NotFixable(f"no line of the finding could be {what} safely")
    return spans


def trailing_whitespace(layout: FileLayout, finding) -> tuple[list[Span], str]:
    ctx = layout.ctx
    if ctx.language in _TRAILING_SIGNIFICANT:
        raise NotFixable(f"trailing whitespace can be significant in {ctx.language} files")
    if layout.refusal:
        raise NotFixable(layout.refusal)
    spans = []
    for n in finding_lines(finding, len(layout.lines)):
        if n + 1 in layout.inner:
            continue  # the line break is inside a string: the spaces belong to its value
        body, _ = layout.body_and_ending(n)
        kept = body.rstrip(" \t")
        if kept == body or kept.endswith("\\"):
            continue  # "\ " escapes the space (shell) or would turn into a line continuation
        if ctx.language == "xml" and kept and not kept.endswith(">"):
            continue  # after text, the spaces are part of an XML text node's value
        start = layout.lines.start(n)
        spans.append((start + len(kept), start + len(body), ""))
    return _changed(spans, "stripped"), "strip trailing whitespace"


def line_endings(layout: FileLayout, finding) -> tuple[list[Span], str]:
    if layout.refusal:
        raise NotFixable(layout.refusal)
    endings, crlf, lf = layout.endings()
    span = finding_lines(finding, len(layout.lines))
    for n in span:  # the majority of the other lines
        crlf -= endings[n - 1] == "\r\n"
        lf -= endings[n - 1] == "\n"
    if crlf == lf:
        raise NotFixable("the file has no majority line ending to convert to")
    want = "\r\n" if crlf > lf else "\n"
    spans = []
    for n in span:
        ending = endings[n - 1]
        if ending and ending != want and n + 1 not in layout.inner:
            end = layout.lines.end(n)
            spans.append((end - len(ending), end, want))
    label = "CRLF" if want == "\r\n" else "LF"
    return _changed(spans, "converted"), f"end the line(s) in {label}, as the rest of the file"


def _columns(ws: str) -> int:
    col = 0
    for ch in ws:
        col = (col // 8 + 1) * 8 if ch == "\t" else col + 1
    return col


# Where re-indenting cannot change what the file means: Python (every result is checked against the AST)
# and the C-family languages, whose indentation is layout outside strings. Elsewhere it can matter (YAML,
# a shell's `<<-` here-document strips tabs, Makefile recipes): left alone.
_REINDENTABLE = frozenset(SLASH_COMMENT | {"python"})


def indentation(layout: FileLayout, finding) -> tuple[list[Span], str]:
    ctx = layout.ctx
    if ctx.language not in _REINDENTABLE:
        raise NotFixable(f"indentation can be significant in {ctx.language} files")
    if layout.refusal:
        raise NotFixable(layout.refusal)
    style, widths, counts = layout.indentation()
    lines = finding_lines(finding, len(layout.lines))
    if style == "space":
        # the step is read from the other lines: this finding's own are what is wrong with it
        own = [widths[n] for n in lines if n in widths]
        counts.subtract(own)
        try:
            unit = _indent_unit(counts)
        finally:
            counts.update(own)
        if unit is None:
            raise NotFixable("the file's indentation step cannot be told from its other lines")
        describe = f"indent with spaces ({unit} per tab), as the rest of the file"
    elif style == "tab8":
        unit = 0
        describe = "write every 8 columns of indentation as a tab, as the rest of the file"
    else:
        raise NotFixable("converting spaces to tabs needs a tab width the file does not state")
    spans = []
    for n in lines:
        if n in layout.inner:
            continue
        body, _ = layout.body_and_ending(n)
        code = body.lstrip(" \t")
        ws = body[:len(body) - len(code)]
        if not code:
            continue
        if style == "space" and "\t" in ws:
            new = ws.replace("\t", " " * unit)
        elif style == "tab8":
            cols = _columns(ws)
            new = "\t" * (cols // 8) + " " * (cols % 8)
        else:
            continue
        if new != ws:
            start = layout.lines.start(n)
            spans.append((start, start + len(ws), new))
    return _changed(spans, "re-indented"), describe


def batch(rule_fix):
    """A layout fix for every finding of a file: (text, findings, ctx) -> one result per finding, the file
    read once for all of them."""
    def run(text: str, findings: list, ctx: FixContext) -> list:
        layout = ctx.memo("layout", lambda: FileLayout(text, ctx))
        out = []
        for f in findings:
            try:
                spans, description = rule_fix(layout, f)
            except NotFixable as exc:
                out.append(exc)
                continue
            out.append(Outcome(spans=spans, description=description))
        return out

    run.__name__ = rule_fix.__name__
    run.__doc__ = rule_fix.__doc__
    return run
