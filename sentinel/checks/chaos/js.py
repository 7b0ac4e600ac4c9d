"""JavaScript and TypeScript, on code lines with strings and comments stripped: eval()/new Function() and
empty catch blocks."""

from __future__ import annotations

import re

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import EVAL_EXEC, SWALLOWED
from sentinel.checks.chaos.scope import _MINIFIED_LINE, _matching_lines
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding

_JS_GATE = lazy_compile(r"\beval\b|\bFunction\b|\bcatch\b")
_JS_EVAL = lazy_compile(r"(?<![\w$.])(?<!function )eval\s*\(|\bnew\s+Function\s*\(")
_JS_EMPTY_CATCH = lazy_compile(r"\bcatch\s*(?:\(\s*[\w$]*\s*(?::\s*[\w$]+\s*)?\)\s*)?\{\s*\}")
_JS_OPEN_CATCH = lazy_compile(r"\bcatch\s*(?:\(\s*[\w$]*\s*(?::\s*[\w$]+\s*)?\)\s*)?\{\s*$")
_JS_PROMISE_CATCH = lazy_compile(r"\.catch\(\s*(?:\(\s*[\w$]*\s*\)|[\w$]+)\s*=>\s*(?:\{\s*\}|null|undefined)\s*\)")


# An identifier may be spelled with escapes, which the engine reads as the characters: `\u0065val(s)` calls eval.
_JS_ESCAPE = lazy_compile(r"\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})")
_JS_GATE_ESCAPED = lazy_compile(r"\beval\b|\bFunction\b|\bcatch\b|\\u")


def _js_identifiers(code: str) -> str:
    """A code line (strings and comments already removed) with its identifier escapes decoded."""
    if "\\u" not in code:
        return code

    def decode(m: re.Match) -> str:
        point = int(m.group(1) or m.group(2), 16)
        return chr(point) if point <= 0x10FFFF else m.group(0)
    return _JS_ESCAPE.sub(decode, code)


def _js(ctx: FileContext) -> list[Finding]:
    out: list[Finding] = []
    lexed = ctx.lexed
    for n in _matching_lines(ctx, _JS_GATE_ESCAPED if "\\u" in ctx.text else _JS_GATE):
        code = _js_identifiers(lexed.code_line(n))
        if len(code) > _MINIFIED_LINE:
            continue
        m = _JS_EVAL.search(code)
        if m:
            what = "eval()" if m.group().startswith("eval") else "new Function()"
            out.append(ctx.finding(EVAL_EXEC, n, f"`{what}` runs arbitrary code from a string",
                                   column=m.start() + 1))
        m = _JS_EMPTY_CATCH.search(code) or _JS_PROMISE_CATCH.search(code)
        if m is None:
            m = _JS_OPEN_CATCH.search(code)
            if m is not None and not _next_code_closes(lexed, n):
                m = None
        if m is not None:
            out.append(ctx.finding(SWALLOWED, n, "empty catch swallows every error", column=m.start() + 1))
    return out


def _next_code_closes(lexed, n: int) -> bool:
    for i in range(n + 1, min(n + 50, len(lexed.code))):
        text = lexed.code_line(i).strip()
        if text:
            return text.startswith("}")
    return False
