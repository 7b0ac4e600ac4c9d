"""Failure signatures: the same mistake made with other names, or on a line of another shape, is one pattern;
different mistakes stay apart.

A signature is `rule|mechanism`: the rule, and the tokens of the finding's message that name the mechanism the
rule caught — the builtin (`eval()` and `exec()` are two patterns), the standard-library call (`os.system()`,
`shutil.rmtree()`), the kind of credential, the handler (`except:`, `except Exception`) and the context the check
judged it in (it re-raises, best-effort cleanup, an optional import), the source of a None (`re.match()`,
`<id>.get()`). The offending line itself is not in it: `return eval(a, {...})` and `x = 100 - eval(b)` are one
pattern (the line is kept beside the finding, as what the attempt did). What varies between two occurrences of
one mistake is removed from the message: the author's names wherever a check quotes them (a call `f()`, a
dotted name, the expression a check names after `:` or `to`, a comment it quotes), paths (POSIX and Windows,
with `:line:col`), positions, string literals, numbers, hashes, UUIDs and timestamps.

The reference tracker made two mistakes we test against: every test failure collapsed into one signature
("Tests failed (rc=1)"), and raw drift scores made every drift signature unique.
"""

from __future__ import annotations

import re
import sys

from sentinel.lazyre import lazy_compile

_KEYWORDS = frozenset("""
False None True and as assert async await break class continue def del elif else except finally for from global
if import in is lambda nonlocal not or pass raise return try while with yield case
function var let const new this null undefined true false catch throw typeof instanceof switch default do void
static public private protected extends implements interface package func go defer chan struct impl fn mut pub
use mod enum trait where loop unsafe nil end then begin rescue ensure unless elsif module require echo local
SELECT DELETE DROP TRUNCATE FROM WHERE TABLE INSERT UPDATE SET INTO ALTER CREATE DATABASE INDEX VALUES AND OR NOT
""".split())
_CODE_TOKEN = re.compile(
    r"""(?P<str>[rRbBfFuU]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'?"""
    r"""|"(?:\\.|[^"\\\n])*"?|`(?:\\.|[^`\\])*`?))"""
    r"""|(?P<num>\b0[xXoObB][0-9a-fA-F_]+\b|(?<![\w.])\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?[jJlLuUfF]?\b)"""
    r"""|(?P<kept><(?:path|str|num|id)>)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)""")
# A path outside a string (shell commands, messages quoting code): a drive, `~`, `.` or `..`, or a separator
# right after a space or an opening, then names; never `a/b` (division).
_CODE_PATH = re.compile(r"(?<![\w)\].<>])(?:[A-Za-z]:|~|\.{1,2})?[\\/](?:[\w.$@+-]+[\\/])*[\w.$@+-]*[\w$@+-]")
_SPACE = re.compile(r"\s+")
_ID_RUN = re.compile(r"<id>(?:(?:\s+|\s*\.\s*)<id>)+")  # prose of names, or a dotted chain of them
_TEXT_SOURCES = [
    (r"\b(?:https?|wss?|ftp)://[^\s'\"<>`]+", re.I, "<url>"),
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b", 0, "<time>"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I, "<uuid>"),
    (r"\b0x[0-9a-f]+\b", re.I, "<hex>"),
    (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", 0, "<sha>"),
    # paths: Windows drive or UNC, POSIX absolute or relative, with an optional :line[:col]
    (r"(?:\b[A-Za-z]:[\\/]|\\\\|~?/|\.{1,2}[\\/])?(?:[\w.$@+-]+[\\/])+[\w.$@+-]+(?::\d+)*", 0, "<path>"),
    (r"\b[\w.-]+\.(?:py|pyi|js|ts|tsx|jsx|go|rs|java|rb|c|h|cc|cpp|toml|cfg|ini|ya?ml|json|md|txt|sh)\b(?::\d+)*",
     0, "<path>"),
    (r"\bline \d+\b|\bcol(?:umn)? \d+\b", re.I, "<pos>"),
    (r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", 0, "<str>"),
    # names the author chose, written in prose: snake_case, lowerCamel, dotted names that are not a call
    (r"(?<![\w.<])(?:[a-z_]\w*\.)+[a-z_]\w*(?![\w(<])", 0, "<dotted>"),
    (r"(?<![\w<])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*(?![\w(])", 0, "<id>"),
    (r"(?<![\w<])[a-z]+[0-9]*[A-Z]\w*(?![\w(])", 0, "<id>"),
    (r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w>])", re.I, "<num>"),
]
_COMPILED: list = []
_NAMES: dict[str, frozenset] = {}


def _subs() -> list:
    # compiled on first use: a passing run records no finding and never needs them
    if not _COMPILED:
        _COMPILED.extend((re.compile(src, flags), repl) for src, flags, repl in _TEXT_SOURCES)
    return _COMPILED


def _names() -> dict[str, frozenset]:
    # builtins count only when called and modules only before a dot: `cmd`, `code`, `id` are variables too
    if not _NAMES:
        import builtins

        _NAMES["builtins"] = frozenset(n for n in dir(builtins) if not n.startswith("_"))
        _NAMES["modules"] = frozenset(getattr(sys, "stdlib_module_names", ()))
    return _NAMES


def _dotted(match: re.Match) -> str:
    first = match.group().split(".", 1)[0]
    return match.group() if first in _names()["modules"] else "<id>"


def normalize_code(code: str, limit: int = 200) -> str:
    """The offending code with the author's names, literals and paths replaced; the mechanism kept."""
    names = _names()
    builtin_names, modules = names["builtins"], names["modules"]
    text = _CODE_PATH.sub("<path>", code or "")
    out: list[str] = []
    pos = 0
    prev_kept_module = False
    for m in _CODE_TOKEN.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        kind = m.lastgroup
        if kind == "str":
            out.append("<str>")
            prev_kept_module = False
            continue
        if kind == "kept":
            out.append(m.group())
            prev_kept_module = False
            continue
        if kind == "num":
            out.append("<num>")
            prev_kept_module = False
            continue
        name = m.group()
        before = text[:m.start()].rstrip()
        after = text[m.end():].lstrip()
        after_dot = before.endswith(".")
        called = after.startswith("(")
        kwarg = after.startswith("=") and not after.startswith("==") and before[-1:] in ("(", ",")
        module = not after_dot and name in modules and after.startswith(".")
        if name in _KEYWORDS or module or (called and not after_dot and name in builtin_names) \
                or (after_dot and (called or prev_kept_module)) or kwarg \
                or (name[:1].isupper() and any(c.islower() for c in name)):
            out.append(name)
            prev_kept_module = module
        else:
            out.append("<id>")
            prev_kept_module = False
    out.append(text[pos:])
    norm = _ID_RUN.sub("<id>", _SPACE.sub(" ", "".join(out)).strip())
    return norm[:limit]


def normalize_text(text: str) -> str:
    """A message with its volatile parts (paths, positions, literals, the author's names) replaced."""
    out = text or ""
    out = re.sub(r"`([^`]*)`", lambda m: "`" + normalize_code(m.group(1)) + "`", out)
    for pattern, repl in _subs():
        out = pattern.sub(_dotted if repl == "<dotted>" else repl, out)
    return _SPACE.sub(" ", out).strip()


# A comment a message quotes (a placeholder's marker line): the author's words, not the mechanism.
_QUOTED_COMMENT = lazy_compile(r"(?:(?<=\s)|^)(?:#|//|/\*|<!--)(?=\s|$|[^\W\d_])")
_CODE_SPAN = lazy_compile(r"(`[^`]*`)")
# A call written in a message: `f()`, `cursor.execute()`, `os.kill()`, `subprocess.call(..., shell=True)`
_PROSE_CALL = lazy_compile(r"(?<![\w.<`])(?P<chain>(?:[A-Za-z_]\w*\.)*)(?P<name>[A-Za-z_]\w*)"
                           r"\((?P<args>[^()`]{0,120})\)")
# The expression a check names in a slot of its message: after `: ` or ` to `, alone up to the clause's end
_SLOT = lazy_compile(r"(?:(?<=: )|(?<=\bto ))(?P<expr>[A-Za-z_][\w.]*(?:\[[^\]\s]*\])?)(?=$|[;,)])")
_WORD = lazy_compile(r"[A-Za-z_]\w*")


def _prose_call(match: re.Match) -> str:
    chain, name, args = match.group("chain"), match.group("name"), match.group("args")
    names = _names()
    if chain:
        head = chain.split(".", 1)[0]
        chain = chain if head in names["modules"] else "<id>."
    elif name not in names["builtins"] and not (name[:1].isupper() and any(c.islower() for c in name)):
        name = "<id>"
    return f"{chain}{name}({normalize_code(args) if args.strip() else args})"


def mechanism(message: str, code: str = "", limit: int = 200) -> str:
    """The tokens of a finding's message that name the mechanism, in the message's order (its words kept):
    the author's names, literals and positions replaced.

    `code` (the offending line, or its normalized form: the result is the same) only says which words of the
    message may be the author's: an expression a check names in a slot (`deletes a directory tree: p`,
    `sends signal.SIGKILL to pid`) is replaced when the line has names of its own and the word is none of the
    line's mechanism tokens (`os`, `kill`, `SIGKILL`)."""
    parts: list[str] = []
    for n, part in enumerate(_CODE_SPAN.split(message or "")):
        if n % 2:  # a code span: its own normalisation
            parts.append("`" + normalize_code(part[1:-1]) + "`")
            continue
        comment = _QUOTED_COMMENT.search(part)
        if comment:  # the comment runs to the message's end
            parts.append(part[:comment.start()] + "<comment>")
            break
        parts.append(part)
    text = "".join(parts)
    text = _PROSE_CALL.sub(_prose_call, text)
    kept = normalize_code(code) if code else ""
    if "<id>" in kept:
        mechanism_words = set(_WORD.findall(kept.replace("<id>", " ")))
        text = _SLOT.sub(lambda m: m.group() if _WORD.match(m.group()).group() in mechanism_words else "<id>", text)
    for pattern, repl in _subs():
        text = pattern.sub(_dotted if repl == "<dotted>" else repl, text)
    return _ID_RUN.sub("<id>", _SPACE.sub(" ", text).strip())[:limit]


def signature(rule: str, message: str, code: str = "") -> str:
    """`rule|mechanism` (see the module's docstring). Secrets are masked before anything is normalised: a
    signature is stored, printed by `memory patterns` and shown in recall, and a credential on the offending
    line must reach none of them."""
    from sentinel.redact import redact

    return f"{rule}|{mechanism(redact(message), redact(code))}"


def mechanism_of(sig: str) -> str:
    """The mechanism part of a signature (what `memory patterns` shows)."""
    return sig.split("|", 1)[-1]


def signature_id(sig: str) -> str:
    from sentinel.digest import sha256

    return sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:16]
