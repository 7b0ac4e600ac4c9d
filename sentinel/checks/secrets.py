"""Credential detection helpers and redaction, shared by the chaos check and the output layers.

Two independent signals, because each alone is either noisy or blind:

* **Token formats** (AWS, GitHub, Slack, Google, Stripe, OpenAI, Anthropic, PEM private key
  blocks) are specific enough to report wherever they appear, in any file type.
* **Secret-like names** (``password``, ``api_key``, ``github_token``...) bound to a literal.
  The secret word must be the *head* of the name (its last word), so ``token_count``,
  ``password_field`` or ``max_token`` are not secrets, and the value must look like a real
  value rather than a placeholder, a template, an identifier or a URL without credentials.
  Weaker names (``signing_key``, ``salt``, ``Authorization``) only count when the value is
  a long high-entropy string: raw entropy alone flags hashes, ids and test vectors.

The catalogue both signals draw on — token formats, credential words, entropy — is one table in
:mod:`sentinel.redact`, shared with the redaction every output goes through (:func:`redact_value`
and :func:`redact_line` mask values so findings, reports and the experience memory can show
*where* without showing *what*). A new token format is a row there.
"""

from __future__ import annotations

import re

from sentinel.lazyre import lazy_compile
from sentinel.redact import (  # noqa: F401 - the shared catalogue, re-exported for the checks
    AWS_SECRET_KEY,
    KEY_MATERIAL as _KEY_MATERIAL,
    NEUTRAL_SUFFIX as _NEUTRAL_SUFFIX,
    NOT_SECRET,
    PRIVATE_KEY_BEGIN,
    STRONG,
    STRONG_PAIRS as _STRONG_PAIRS,
    STRONG_WORDS as _STRONG_WORDS,
    TOKEN_FORMATS,
    TOKEN_GATE,
    TOKEN_LITERALS,
    URL_CREDENTIALS,
    WEAK,
    classify_name,
    is_high_entropy,
    mixed_key_material,
    name_words,
    names_aws_secret,
    redact_line,
    redact_value,
    secret_binding_pattern,
    shannon_entropy,
)
from sentinel.redact import stem_words as _stem_words

# --- values -----------------------------------------------------------------------------------

_PLACEHOLDER_EXACT = frozenset({
    "test", "testing", "secret", "password", "passwd", "pass", "token", "key", "apikey", "api_key", "none",
    "null", "nil", "undefined", "empty", "sample", "default", "changeme", "dummy", "example", "fake",
    "placeholder", "redacted", "hidden", "notset", "not_set", "unset", "missing",
    # enum-like settings that sit under credential names (fetch's credentials: "include"...)
    "include", "omit", "same-origin", "required", "optional", "disabled", "enabled", "true", "false",
    "inherit", "prompt", "keyring", "environment", "bearer", "basic", "oauth", "oauth2", "plain", "auto",
})
# DER public keys (SubjectPublicKeyInfo) in base64: high entropy, under names like "key", not secret.
_PUBLIC_KEY_DER = lazy_compile(r"^(?:MFkwEwYH|MHYwEAYH|MIGbMBAGByqGSM49|MCowBQYDK2V|MIIBIjANBgkq|MIICIjANBgkq|"
                               r"MIGfMA0GCSq|MIIBojANBgkq)")
_PLACEHOLDER_PARTS = ("changeme", "change_me", "change-me", "changethis", "change_this", "change-this",
                      "replaceme", "replace_me", "replace-me", "replace_with", "replace-with", "placeholder",
                      "example", "dummy", "fake", "redacted", "notreal", "not_real", "not-real", "not_a_real",
                      "not-a-real", "notasecret", "not_a_secret", "not-a-secret", "xxxx", "****", "....", "your_",
                      "your-", "<your", "insert_", "insert-", "${", "{{", "%(", "<%", "[redacted")
# Words that mark a value as a stand-in wherever they appear as a word of it ("mock-key").
_MARKER_WORDS = frozenset({"mock", "fake", "dummy", "sample", "example", "placeholder", "redacted"})
_TEST_PARTS = ("test", "mock", "fake", "dummy", "example", "sample", "stub", "fixture")
# Whole-value templates and references: ${VAR}, {password}, <password>, $VAR, %VAR%, [PAD],
# and pointers to a secret store rather than the secret itself.
_TEMPLATE = lazy_compile(
    r"^(?:\$\{.*\}|\$[A-Za-z_]\w*|\{.*\}|<.*>|%[A-Za-z_]\w*%|\[[\w .|-]*\]|:[a-z_]\w*)$|"
    r"^(?:env|vault|ssm|secret|secrets|keyring|file|op|sm|awssm|gcpsm|azkv|arn)(?::|://)|^os\.environ\b|^urn:",
    re.I | re.S)
_YOUR = lazy_compile(r"^your(?:[\W_]|[A-Z]|$)", re.I)
# Identifiers used as field or variable names: access_token, auth.token, DB_PASSWORD, accessToken.
_IDENTIFIER = lazy_compile(r"^_*(?:[a-z][a-z0-9]*(?:[._][a-z0-9]+)+|[A-Z][A-Z_]*|[a-z]+(?:[A-Z][a-z]+)+|"
                           r"(?:[A-Z][a-z]+){2,})_*$")
_WORD_SPLIT = lazy_compile(r"[-_.:/+]+")
# Type expressions in generated models: 'list[V1LocalObjectReference]', 'dict(str, str)'.
_TYPE_EXPR = lazy_compile(r"^[A-Za-z_][\w.]*[\[(][\w., \[\]()]*[\])]$")
_REGEX_LIKE = lazy_compile(r"\\[dwsbDWSB.\\]|\(\?|\[\^|\[[^\]]*\w-\w[^\]]*\]|\][*+?{]|\)[*+?]")
_HEADER = lazy_compile(r"^[Xx]-[A-Za-z0-9-]+$")
_PATH_LIKE = lazy_compile(r"^(?:\.{0,2}/|~/|#/|[A-Za-z]:\\)")
_URL_CREDS = lazy_compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?P<user>[^/@:\s]*):(?P<pw>[^/@\s]+)@")
_AUTH_SCHEME = lazy_compile(r"^(?:Bearer|Basic|Token|token|bearer)\s+(?=\S+$)")
_VERSION = lazy_compile(r"^[~^<>=v]*\d+(?:\.[\dx*]+)+\S*$")
_UUID = lazy_compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
MIN_NAMED_LENGTH = 6


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def is_placeholder(value: str, name: str = "", in_test: bool = False) -> bool:
    """Values that say they are not a real secret: empty, templates, "changeme", "xxx", "<password>"..."""
    v = value.strip()
    if not v:
        return True
    low = v.lower()
    if low in _PLACEHOLDER_EXACT or (name and _squash(v) == _squash(name)) or declared_placeholder(v):
        return True
    return in_test and (any(p in low for p in _TEST_PARTS) or _WEAK_PASSWORD.match(v) is not None)


def declared_placeholder(value: str) -> bool:
    """A value that says it is a stand-in, in any file: a template (${VAR}, {password}, <password>), "xxx",
    "***", "changeme", "your_password", "placeholder"... (not a weak but possible password such as "pass")."""
    v = value.strip()
    low = v.lower()
    return (not v or len(set(low)) <= 2 or _TEMPLATE.match(v) is not None or _YOUR.match(v) is not None
            or any(p in low for p in _PLACEHOLDER_PARTS))


def _basic_auth_placeholder(encoded: str, in_test: bool) -> bool:
    """HTTP Basic credentials are base64("user:password"): judge the password inside."""
    import base64
    import binascii

    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    _, sep, password = decoded.partition(":")
    return bool(sep) and (len(password) < 4 or is_placeholder(password, "password", in_test))


def _label_like(value: str) -> bool:
    """Slugs and field names rather than values: "failed-to-connect", "ui-token", "AWSSecretKey"."""
    words = [w for w in _WORD_SPLIT.split(value) if w]
    if not words or not all(w.isalnum() and w.isascii() for w in words):
        return False
    if len(words) >= 2 and all(w.isalpha() for w in words):
        return True
    parts = [p for w in words for p in name_words(w) if not p.isdigit()]
    return len(parts) >= 2 and (any(p in _STRONG_WORDS or p in _MARKER_WORDS for p in parts)
                                or any(pair in _STRONG_PAIRS for pair in zip(parts, parts[1:])))


def assess_value(value: str, level: int, name: str = "", threshold: float = 4.5,
                 in_test: bool = False) -> str | None:
    """Why a literal bound to a secret-like name is a credential, or None when it is not.

    Returns "literal", "url" (password inside a URL) or "entropy" (weak name, random value).
    """
    if level == NOT_SECRET:
        return None
    v = value.strip()
    m = _URL_CREDS.match(v)
    if m:
        pw = m.group("pw")
        ok = len(pw) >= 3 and not is_placeholder(pw, "", in_test) and not pw.isdigit()
        return "url" if ok and _squash(pw) not in {"pass", "password", "passwd", "pw", "secret"} else None
    if "://" in v:
        return None  # a URL without credentials is an address, not a secret
    if level == WEAK:
        scheme = _AUTH_SCHEME.match(v)
        if scheme:
            v = v[scheme.end():]
            if scheme.group().lower().startswith("basic") and _basic_auth_placeholder(v, in_test):
                return None
    if len(v) < MIN_NAMED_LENGTH or v.isdigit() or is_placeholder(v, name, in_test):
        return None
    free_text = level == STRONG and _password_family(name)
    if any(c.isspace() for c in v) or _PATH_LIKE.match(v) or _VERSION.match(v):
        return None
    # A password or secret is free text: "my_secret_pass" is a value, not a field name. Other credential names
    # hold identifiers far more often than values (token = "access_token", api_key = "X-Api-Key").
    if _IDENTIFIER.match(v) and not (free_text and _free_text_value(v)):
        return None
    if (_label_like(v) and not (free_text and _free_text_value(v))) or _REGEX_LIKE.search(v) \
            or _HEADER.match(v) or _TYPE_EXPR.match(v):
        return None
    if v.isalpha() and v[0].isupper() and v[1:].islower():
        return None  # a title-case word is a label ("Passwort" in a translation file)
    if level == WEAK:
        if _PUBLIC_KEY_DER.match(v) or _UUID.match(v):
            return None  # a public key or an identifier, however random it looks
        return "entropy" if is_high_entropy(v, threshold) else None
    return "literal"


_PASSWORD_HEADS = frozenset({"password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets",
                             "secretkey", "clientsecret"})
_ENV_NAME = lazy_compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_CAMEL = lazy_compile(r"^(?:[a-z]+(?:[A-Z][a-z0-9]+)+|(?:[A-Z][a-z0-9]+){2,}|[A-Z]+[A-Z][a-z]+(?:[A-Z][a-z]+)*)$")


def _password_family(name: str) -> bool:
    words = _stem_words(name)
    while len(words) > 1 and words[-1] in _NEUTRAL_SUFFIX:
        words.pop()
    if not words:
        return False
    return words[-1] in _PASSWORD_HEADS or tuple(words[-2:]) in {("pass", "word"), ("pass", "phrase"),
                                                                   ("secret", "key"), ("client", "secret")}


def _free_text_value(v: str) -> bool:
    """Could this identifier-looking string be a password? Not an environment variable's name (a reference
    to where the secret lives), not a dotted attribute path, and not made only of credential words."""
    if _ENV_NAME.match(v) or "." in v or _CAMEL.match(v):
        return False
    words = [w for w in name_words(v) if not w.isdigit()]
    return any(w not in _STRONG_WORDS and w not in _NEUTRAL_SUFFIX and w not in ("pass", "key", "word")
               for w in words)


def token_is_placeholder(token: str, in_test: bool = False) -> bool:
    low = token.lower()
    if any(p in low for p in ("example", "xxxx", "fake", "dummy", "sample", "placeholder", "redacted", "your")):
        return True
    if in_test and any(p in low for p in _TEST_PARTS):
        return True
    body = re.sub(r"^(?:AKIA|ASIA|gh[pousr]_|github_pat_|xox[baprs]-|AIza|[sr]k_live_|sk-ant-|sk-)", "", token)
    return len(set(body)) < 6  # ghp_000000..., AKIAAAAAAAAAAAAAAAAA


def find_tokens(text: str, in_test: bool = False):
    """(start, end, kind) of each known token format in one line of text (placeholders skipped)."""
    if not any(lit in text for lit in TOKEN_LITERALS) or not TOKEN_GATE.search(text):
        return
    for kind, pattern, _ in TOKEN_FORMATS:
        for m in pattern.finditer(text):
            if not token_is_placeholder(m.group(), in_test):
                yield m.start(), m.end(), kind


_URL_PLACEHOLDER_PW = frozenset({"pass", "password", "passwd", "pw", "pwd", "secret", "user", "username", "token",
                                 "apikey", "api_key", "key", "x", "xx", "xxx", "****", "changeme", "foo", "bar",
                                 "mypassword", "yourpassword", "pass123", "password123", "secret123", "admin",
                                 "postgres", "root", "guest", "test", "testing"})
_LOOPBACK = lazy_compile(r"(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|0\.0\.0\.0)(?=[:/?#\s'\"]|$)", re.I)
# Hosts reserved for documentation and testing (RFC 2606, RFC 6761): no server anyone could use a credential on.
RESERVED_HOST = lazy_compile(r"(?:[\w-]+\.)*(?:example\.(?:com|net|org)|[\w-]+\.(?:example|test|invalid|localhost))"
                              r"(?=[:/?#\s'\"]|$)", re.I)
_TEMPLATED = lazy_compile(r"[${}<>%]|^\*+$|^x+$", re.I)


def find_url_credentials(text: str, in_test: bool = False):
    """(start, end) of each password inside a URL of the line, placeholders and templates skipped.

    In product code and configuration any literal password counts, even a weak one; in tests, docs and examples
    the usual stand-ins (pass, password, secret, password123, a name such as SAS_KEY...) do not. Templates and values that say they are
    stand-ins (changeme, xxx, ***, your_password) never count."""
    if "://" not in text or "@" not in text:
        return
    for m in URL_CREDENTIALS.finditer(text):
        pw = m.group("pw")
        if _TEMPLATED.search(pw) or pw.isdigit() and len(pw) < 4 or _REGEX_LIKE.search(pw) \
                or declared_placeholder(pw):
            continue  # a field, a short number, a pattern that matches URLs ("[^@]+@"), or "changeme"
        if _LOOPBACK.match(text, m.end()):
            continue  # a database on this machine: a developer's or a test run's, not a secret anyone can use
        if in_test and (pw.lower() in _URL_PLACEHOLDER_PW or is_placeholder(pw, "password", True)
                        or _WEAK_PASSWORD.match(pw) or _ENV_NAME.match(pw)):
            continue
        yield m.start("pw"), m.end("pw")


# Dictionary stand-ins followed by digits: password123, secret1, admin2024.
_WEAK_PASSWORD = lazy_compile(r"^(?:pass(?:word)?|secret|admin|user|test|demo|guest|root|qwerty|letmein|changeme|"
                              r"foo|bar|example|sample)[\W_]*\d*$", re.I)


def find_aws_secret(text: str, in_test: bool = False):
    """(start, end) of an AWS secret access key on a line that says it is one."""
    if not names_aws_secret(text):
        return None
    for m in AWS_SECRET_KEY.finditer(text):
        v = m.group()
        if mixed_key_material(v) and not token_is_placeholder(v, in_test):
            return m.start(), m.end()
    return None


def private_key_at(lines: list[str], n: int, in_test: bool = False) -> re.Match | None:
    """The PRIVATE KEY marker on line n when real key material follows it (same or next 2 lines)."""
    m = PRIVATE_KEY_BEGIN.search(lines[n])
    if m is None:
        return None
    following = [lines[n][m.end():]] + [lines[i] for i in range(n + 1, min(n + 3, len(lines)))]
    for chunk in following:
        km = _KEY_MATERIAL.search(chunk)
        if km:
            return None if token_is_placeholder(km.group(), in_test) else m
    return None
