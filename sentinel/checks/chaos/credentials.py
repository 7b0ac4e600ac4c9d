"""SEN304, the policy and the formats: which roles read names, unmistakable token formats in any
file, and how a finding's line is masked. Secrets never leave this family: every finding carries its line
with the value masked."""

from __future__ import annotations

import re

from sentinel import roles
from sentinel.checks.base import FileContext
from sentinel.checks.chaos.rules import CREDENTIAL
from sentinel.checks.chaos.scope import _LEXED_LANGS, _fixture_marked, _matching_lines
from sentinel.checks.secrets import (
    PRIVATE_KEY_BEGIN,
    RESERVED_HOST,
    TOKEN_GATE,
    find_aws_secret,
    find_tokens,
    find_url_credentials,
    is_high_entropy,
    is_placeholder,
    private_key_at,
    redact_line,
    redact_value,
)
from sentinel.lazyre import lazy_compile
from sentinel.models import Finding

# Configuration templates committed as such (settings.example.py, .env.sample, config.template.yaml): the
# values under secret names there are stand-ins; token formats still count. Folders of examples have a role.
_TEMPLATE_FILE = lazy_compile(r"[._-](?:example|sample|template|dist)s?(?:[._-][^/]*)?$", re.IGNORECASE)

# Roles whose files hold real configuration: a literal under a secret name there is a credential. Elsewhere
# (tests, fixtures, docs, examples, stubs, generated and vendored files) only unmistakable secret formats count.
_NAMES_ROLES = frozenset({roles.PRODUCT, roles.CI})
# Generated files (lock files above all) hold package names and hashes under key-like names, never credentials.
_NO_NAMES_ROLES = frozenset({roles.GENERATED})
_STRICT_NAMES = "chaos.strict-names"
_RANDOM_KEY_MIN = 32


def _random_key(value: str) -> bool:
    """A real key, not a stand-in: long, mixed-case base64 (hex digests are test vectors far more often than
    keys), random by its entropy, and free of the words test values are made of."""
    v = value.strip()
    if len(v) < _RANDOM_KEY_MIN or not (any(c.isupper() for c in v) and any(c.islower() for c in v)
                                        and any(c.isdigit() for c in v)):
        return False
    return is_high_entropy(v, 4.5) and not is_placeholder(v, "", True)
_TRUSTED_ROLES = frozenset({roles.PRODUCT, roles.CI, roles.GENERATED, roles.VENDORED})
# Tests, their data and examples hold only stand-in credentials unless one looks like a real random key; docs
# keep the looser stand-in list (a connection string in a README is as likely a real one pasted as a sample).
_STRICT_URL_ROLES = frozenset({roles.TEST, roles.FIXTURE, roles.EXAMPLE})
_STRICT_URLS = "chaos.strict-urls"


# --- SEN304: token formats (any file) -----------------------------------------------------------

# Lines that could hold a token format, a password inside a URL, or an AWS secret key.
_URL_PASSWORD_SOURCE = r"://[^\s/@]{0,128}:[^\s/@]{1,256}@"
_AWS_SECRET_SOURCE = r"[Aa][Ww][Ss].{0,40}[Ss][Ee][Cc][Rr][Ee][Tt]"
_SECRET_LINE_GATE = lazy_compile(f"{TOKEN_GATE.pattern}|{_URL_PASSWORD_SOURCE}|{_AWS_SECRET_SOURCE}")
_URL_PASSWORD_GATE = lazy_compile(_URL_PASSWORD_SOURCE)
_AWS_SECRET_GATE = lazy_compile(_AWS_SECRET_SOURCE)


def _secret_lines(ctx: FileContext) -> list[int]:
    """The lines in scope where _SECRET_LINE_GATE matches, ascending.

    Over a whole file its three parts scan apart, each only when the text holds what it needs: the one
    alternation costs twice as much in C (its first characters include most lowercase letters, so the engine
    tries every alternative at a third of all offsets), and it is the costliest scan of a whole-tree run. No
    match of any part spans a line, so a line matches the alternation exactly when it matches one part."""
    if not ctx.whole_file_in_scope:
        return list(_matching_lines(ctx, _SECRET_LINE_GATE))
    lines = list(_matching_lines(ctx, TOKEN_GATE))
    text = ctx.text
    more: list[int] = []
    if "://" in text:
        more.extend(_matching_lines(ctx, _URL_PASSWORD_GATE))
    low = ctx.lower_text  # a match has "aws" and "secret" in some case: both in the lowered text
    if "aws" in low and "secret" in low:
        more.extend(_matching_lines(ctx, _AWS_SECRET_GATE))
    return sorted(set(lines).union(more)) if more else lines


def _token_findings(ctx: FileContext, in_test, token_lines: set[int]) -> list[Finding]:
    """Unmistakable secret formats, in every file and every role (a real key in a test still leaks)."""
    out: list[Finding] = []
    for n in _secret_lines(ctx):
        if in_test and _fixture_marked(ctx, n):
            continue
        raw = ctx.line(n)
        found = next(iter(find_tokens(raw, in_test)), None)
        if found is not None:
            kind, column = found[2], found[0] + 1
        elif PRIVATE_KEY_BEGIN.search(raw) and private_key_at(ctx.lines, n, in_test):
            kind, column = "private key block", None
        else:
            url = next(iter(find_url_credentials(raw, in_test)), None)
            if url is not None and (ctx.memo.get(_STRICT_URLS) or in_test and RESERVED_HOST.match(raw, url[1] + 1)) \
                    and not _random_key(raw[url[0]:url[1]]):
                # test vectors of URL parsers ("user:pass@host", "%25DOMAIN:pass@..."), and outside product code a
                # host reserved for documentation (user:pass@example.com): data, unless the password is a real key
                url = None
            if url is not None and not in_test and _documentation_at(ctx, n, url[0]):
                # A connection string in a docstring or comment illustrates usage: stand-ins do not count there.
                url = next(iter(find_url_credentials(raw, True)), None)
            aws = find_aws_secret(raw, in_test) if url is None else None
            if url is not None:
                kind, column = "password inside a URL", url[0] + 1
            elif aws is not None:
                kind, column = "AWS secret access key", aws[0] + 1
            else:
                continue
        token_lines.add(n)
        out.append(ctx.finding(CREDENTIAL, n, f"{kind} in the change", column=column,
                               code=_redacted_line(raw)))
    return out


_DOC_QUOTES = ('"""', "'''")


def _documentation_at(ctx: FileContext, n: int, column: int) -> bool:
    """Is this position in a comment, or in a multi-line string (a docstring, a usage text)?"""
    if ctx.language not in _LEXED_LANGS and ctx.language != "python":
        return False
    lexed = ctx.lexed
    comment = lexed.comments.get(n)
    raw = ctx.line(n)
    if comment is not None and column >= len(raw) - len(comment):
        return True
    return n in lexed.string_inner or (n in lexed.string_lines and any(q in raw for q in _DOC_QUOTES))


def _redacted_line(raw: str) -> str:
    code = redact_line(raw.strip())
    aws = find_aws_secret(code)
    if aws is not None:
        code = code[:aws[0]] + redact_value(code[aws[0]:aws[1]]) + code[aws[1]:]
    return code


def _cred_message(name: str, reason: str) -> str:
    shown = name if len(name) <= 40 else name[:37] + "..."
    if reason == "url":
        return f"password inside a URL assigned to '{shown}'"
    if reason == "entropy":
        return f"high-entropy literal assigned to '{shown}' looks like a secret"
    return f"hardcoded credential assigned to '{shown}'"


def _masked_code(raw: str, value: str, extra: tuple[str, ...], span: tuple[int, int] | None = None) -> str:
    """The line with the value masked; '<redacted>' when masking cannot be proven complete."""
    code = raw
    if span is not None:
        code = code[:span[0]] + redact_value(value) + code[span[1]:]
    elif value and value in code:
        code = code.replace(value, redact_value(value))
    elif len(value) >= 4:
        return "<redacted>"  # a line holding only a part of the value (a literal split over lines) or an escape
    code = redact_line(code.strip(), extra)
    if len(value) >= 4 and value in code:
        return "<redacted>"
    return code
