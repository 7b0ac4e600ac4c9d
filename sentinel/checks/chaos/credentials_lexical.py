"""SEN304 in other languages, line by line: names bound to literals in code (key = "value") and in
configuration files (.env, YAML, INI, shell: unquoted values too)."""

from __future__ import annotations

from sentinel.checks.base import FileContext
from sentinel.checks.chaos.credentials import _STRICT_NAMES, _cred_message, _masked_code, _random_key
from sentinel.checks.chaos.rules import CREDENTIAL
from sentinel.checks.chaos.scope import _LEXED_LANGS, _MINIFIED_LINE, _fixture_marked, _matching_lines
from sentinel.checks.secrets import NOT_SECRET, assess_value, classify_name, secret_binding_pattern
from sentinel.languages import SLASH_COMMENT
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding

# Languages where name-based credentials are read lexically; config languages allow unquoted values.
_CONFIG_LANGS = frozenset({"dotenv", "yaml", "toml", "ini", "shell", "make", "docker", "unknown"})
_CODE_LANGS = frozenset(SLASH_COMMENT | {"ruby", "perl", "lua", "json", "python"})

_Q = (r"""(?:"(?P<v1>[^"\\\n]*(?:\\.[^"\\\n]*)*)"|'(?P<v2>[^'\\\n]*(?:\\.[^'\\\n]*)*)'|"""
      r"""`(?P<v3>[^`\\\n]*(?:\\.[^`\\\n]*)*)`)""")
# A type annotation between a name and "=" (TypeScript, Kotlin, Python): string, Map<K, V>, T[] | null.
_TYPE = r"[A-Za-z_][\w.]*(?:<[^<>=\n]*>)?(?:\[\])*(?:[ \t]*\|[ \t]*[A-Za-z_][\w.]*(?:<[^<>=\n]*>)?(?:\[\])*)*\??"
_CODE_KV = lazy_compile(
    r"""(?P<key>(?<![\w$.\-])[A-Za-z_$@][\w$.\-]*|"[\w.\-]{1,80}"|'[\w.\-]{1,80}'|(?<![\w:]):[A-Za-z_]\w*)"""
    r"""\]?[ \t]*(?::[ \t]*""" + _TYPE + r"""[ \t]*=|:=|=>|=|:)(?!=)[ \t]*(?P<val>""" + _Q + ")")
_CFG_KV = lazy_compile(
    r"""^[ \t]*(?:(?:export|ENV|ARG|set|setenv|declare(?:[ \t]+-\w+)?)[ \t]+|-[ \t]+|--?)?"""
    r"""(?P<key>"[\w.\-]{1,80}"|'[\w.\-]{1,80}'|[A-Za-z_][\w.\-]*)[ \t]*(?:[:?+]?=|:(?=[ \t]|$))[ \t]*"""
    r"""(?P<rest>.*)$""")
_QUOTED_START = lazy_compile(_Q)
_UNQUOTED_OK = lazy_compile(r"""^[^\s'"`$!&*|>{\[(%@<][^\s'"`]*$""")
_DOTENV_COMMENT = lazy_compile(r"[ \t]+#.*$")


def _lexical_credentials(ctx: FileContext, names_on, extra: tuple[str, ...], in_test,
                         token_lines: set[int]) -> list[Finding]:
    lang = ctx.language
    config_style = lang in _CONFIG_LANGS
    if not config_style and lang not in _CODE_LANGS:
        return []
    gate = secret_binding_pattern(extra)
    threshold = ctx.config.chaos.entropy_threshold
    lexed = ctx.lexed if lang in _LEXED_LANGS else None
    out: list[Finding] = []
    for n in _matching_lines(ctx, gate, lowered=True):
        if n in token_lines:
            continue
        raw = ctx.line(n)
        if len(raw) > _MINIFIED_LINE:
            continue
        code = lexed.code_line(n) if lexed is not None else raw
        pairs = _config_pairs(raw, code, lang, lexed is not None) if config_style else []
        if not pairs:
            pairs = _code_pairs(raw, code, lexed is not None)
        for key, value, start, end in pairs:
            level = classify_name(key, extra)
            if level == NOT_SECRET:
                continue
            if not names_on:
                return []
            reason = assess_value(value, level, key, threshold, in_test)
            if reason is None or (in_test and _fixture_marked(ctx, n)):
                continue
            if ctx.memo.get(_STRICT_NAMES) and not _random_key(value):
                continue
            out.append(ctx.finding(CREDENTIAL, n, _cred_message(key, reason), column=start + 1,
                                   code=_masked_code(raw, value, extra, (start, end))))
            break
    return out


def _key_name(key: str) -> str:
    return key.strip("\"'").lstrip("$@:")


def _code_pairs(raw: str, code: str, lexed: bool) -> list[tuple[str, str, int, int]]:
    pairs = []
    for m in _CODE_KV.finditer(raw):
        ks, ke = m.span("key")
        vs, ve = m.span("val")
        if lexed and not (_is_code(raw, code, ks, ke) and _is_string(code, vs, ve)):
            continue
        group = "v1" if m.group("v1") is not None else ("v2" if m.group("v2") is not None else "v3")
        pairs.append((_key_name(m.group("key")), m.group(group), *m.span(group)))
    return pairs


def _config_pairs(raw: str, code: str, lang: str, lexed: bool) -> list[tuple[str, str, int, int]]:
    m = _CFG_KV.match(raw)
    if m is None:
        return []
    ks, ke = m.span("key")
    if lexed and not _is_code(raw, code, ks, ke):
        return []
    rs = m.start("rest")
    q = _QUOTED_START.match(raw, rs)
    if q is not None:
        group = "v1" if q.group("v1") is not None else ("v2" if q.group("v2") is not None else "v3")
        return [(_key_name(m.group("key")), q.group(group), *q.span(group))]
    if lexed:
        end = len(code.rstrip())  # comments are blanked in the code line
    else:
        end = rs + len(_DOTENV_COMMENT.sub("", raw[rs:]).rstrip())
    value = raw[rs:end].strip()
    if not value or not _UNQUOTED_OK.match(value) or "${" in value or "$(" in value:
        return []
    start = raw.index(value, rs)
    return [(_key_name(m.group("key")), value, start, start + len(value))]


def _is_code(raw: str, code: str, start: int, end: int) -> bool:
    """Is raw[start:end] code: an identifier outside strings/comments, or one whole string token?"""
    if raw[start] in "\"'":
        return _is_string(code, start, end)
    return code[start:end] == raw[start:end]


def _is_string(code: str, start: int, end: int) -> bool:
    """In the lexed line a whole literal keeps its quotes and has its contents blanked."""
    if end - start < 2 or end > len(code):
        return False
    return code[start] in "\"'`" and code[end - 1] == code[start] and not code[start + 1:end - 1].strip()
