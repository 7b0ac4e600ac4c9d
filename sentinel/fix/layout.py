"""Layout fixes, as plain text: trailing whitespace (SEN205), line endings (SEN204), indentation (SEN201).

None changes the number of lines, and each touches only the lines of its finding. Whitespace inside a
multi-line string is part of its value, so a line whose ending (or start) lies inside a string is left
alone; in Python every result must parse to the same AST as before, or the fix is refused.
"""

from __future__ import annotations

import re

from sentinel.checks.style import indentation_style
from sentinel.fix.context import FixContext, body_and_ending, finding_lines, lines_of, same_python
from sentinel.fix.model import NotFixable
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


def _unmodeled_literal(text: str, language: str) -> str | None:
    """Why whitespace in this file may belong to a literal the lexer does not see, or None."""
    if language in ("python", "go"):
        return None  # Python: every result is checked against the AST; Go: modelled in full
    lexed = lex(text, language)
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


def _refuse_literals(text: str, ctx: FixContext) -> None:
    why = _unmodeled_literal(text, ctx.language)
    if why:
        raise NotFixable(f"{why}: whitespace there may be part of a value, not layout")


def _finish(ctx: FixContext, before: str, lines: list[str], what: str) -> str:
    after = "".join(lines)
    if after == before:
        raise NotFixable(f"no line of the finding could be {what} safely")
    if ctx.language == "python" and not same_python(before, after):
        raise NotFixable("the file does not parse to the same code after the fix")
    return after


def trailing_whitespace(text: str, finding, ctx: FixContext) -> tuple[str, str]:
    if ctx.language in _TRAILING_SIGNIFICANT:
        raise NotFixable(f"trailing whitespace can be significant in {ctx.language} files")
    _refuse_literals(text, ctx)
    lines = lines_of(text)
    inner = lex(text, ctx.language).string_inner
    for n in finding_lines(finding, len(lines)):
        if n + 1 in inner:
            continue  # the line break is inside a string: the spaces belong to its value
        body, ending = body_and_ending(lines[n - 1])
        kept = body.rstrip(" \t")
        if kept.endswith("\\"):
            continue  # "\ " escapes the space (shell) or would turn into a line continuation
        if ctx.language == "xml" and kept and not kept.endswith(">"):
            continue  # after text, the spaces are part of an XML text node's value
        lines[n - 1] = kept + ending
    return _finish(ctx, text, lines, "stripped"), "strip trailing whitespace"


def line_endings(text: str, finding, ctx: FixContext) -> tuple[str, str]:
    _refuse_literals(text, ctx)
    lines = lines_of(text)
    span = set(finding_lines(finding, len(lines)))
    endings = [body_and_ending(ln)[1] for n, ln in enumerate(lines, 1) if n not in span]
    crlf, lf = endings.count("\r\n"), endings.count("\n")
    if crlf == lf:
        raise NotFixable("the file has no majority line ending to convert to")
    want = "\r\n" if crlf > lf else "\n"
    inner = lex(text, ctx.language).string_inner
    for n in sorted(span):
        body, ending = body_and_ending(lines[n - 1])
        if ending and ending != want and n + 1 not in inner:
            lines[n - 1] = body + want
    label = "CRLF" if want == "\r\n" else "LF"
    return _finish(ctx, text, lines, "converted"), f"end the line(s) in {label}, as the rest of the file"


def _indent_unit(lines: list[str], skip: set[int]) -> int | None:
    """The file's indentation step in spaces: its shallowest space indentation, provided (nearly) every
    space-indented line is a multiple of it. None when the file does not say."""
    counts: list[int] = []
    prev = ""
    for n, raw in enumerate(lines, 1):
        line = body_and_ending(raw)[0]
        continued = prev.rstrip().endswith(_CONTINUES)
        prev = line
        if n in skip or continued or not line.startswith(" "):
            continue
        body = line.lstrip(" ")
        if not body or body[0] in "*\t":
            continue
        counts.append(len(line) - len(body))
    if not counts:
        return None
    unit = min(counts)
    if unit not in (2, 3, 4, 8) or sum(1 for c in counts if c % unit == 0) < 0.9 * len(counts):
        return None
    return unit


def _columns(ws: str) -> int:
    col = 0
    for ch in ws:
        col = (col // 8 + 1) * 8 if ch == "\t" else col + 1
    return col


# Where re-indenting cannot change what the file means: Python (every result is checked against the AST)
# and the C-family languages, whose indentation is layout outside strings. Elsewhere it can matter (YAML,
# a shell's `<<-` here-document strips tabs, Makefile recipes): left alone.
_REINDENTABLE = frozenset(SLASH_COMMENT | {"python"})


def indentation(text: str, finding, ctx: FixContext) -> tuple[str, str]:
    if ctx.language not in _REINDENTABLE:
        raise NotFixable(f"indentation can be significant in {ctx.language} files")
    _refuse_literals(text, ctx)
    lines = lines_of(text)
    stripped = [(n, body_and_ending(ln)[0]) for n, ln in enumerate(lines, 1)]
    allow_tab8 = ctx.language not in ("python", "yaml")
    style = indentation_style(((n, ln) for n, ln in stripped if n not in ctx.added), allow_tab8, mixed_share=0.25)
    if style is None:
        style = indentation_style(((n, ln) for n, ln in stripped if n in ctx.added), allow_tab8)
    inner = lex(text, ctx.language).string_inner
    if style == "space":
        unit = _indent_unit(lines, set(finding_lines(finding, len(lines))) | inner)
        if unit is None:
            raise NotFixable("the file's indentation step cannot be told from its other lines")
        describe = f"indent with spaces ({unit} per tab), as the rest of the file"
    elif style == "tab8":
        unit = 0
        describe = "write every 8 columns of indentation as a tab, as the rest of the file"
    else:
        raise NotFixable("converting spaces to tabs needs a tab width the file does not state")
    for n in finding_lines(finding, len(lines)):
        if n in inner:
            continue
        body, ending = body_and_ending(lines[n - 1])
        code = body.lstrip(" \t")
        ws = body[:len(body) - len(code)]
        if not code:
            continue
        if style == "space" and "\t" in ws:
            ws = ws.replace("\t", " " * unit)
        elif style == "tab8":
            cols = _columns(ws)
            ws = "\t" * (cols // 8) + " " * (cols % 8)
        lines[n - 1] = ws + code + ending
    return _finish(ctx, text, lines, "re-indented"), describe
