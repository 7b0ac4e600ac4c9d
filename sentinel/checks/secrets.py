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

Nothing here ever returns a secret: :func:`redact_value` and :func:`redact_line` mask values
so findings, reports and the experience memory can show *where* without showing *what*.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from sentinel.lazyre import lazy_compile

# --- token formats ----------------------------------------------------------------------------

# (kind, pattern, how many leading characters are a public prefix that may stay visible)
TOKEN_FORMATS: tuple[tuple[str, re.Pattern, int], ...] = (
    ("AWS access key id", lazy_compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"), 4),
    ("GitHub token", lazy_compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"), 4),
    ("GitHub fine-grained token", lazy_compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}"), 11),
    ("Slack token", lazy_compile(r"(?<![A-Za-z0-9])xox[baprs]-[0-9A-Za-z]{1,48}(?:-[0-9A-Za-z]{1,64}){2,6}"), 5),
    ("Google API key", lazy_compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"), 4),
    ("Stripe live secret key", lazy_compile(r"(?<![A-Za-z0-9])[sr]k_live_[0-9A-Za-z]{16,247}"), 8),
    ("Anthropic API key", lazy_compile(r"(?<![A-Za-z0-9])sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}"), 7),
    ("OpenAI API key", lazy_compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ"
                                    r"[A-Za-z0-9_-]{20,}"), 3),
    ("GitLab token", lazy_compile(r"(?<![A-Za-z0-9_-])gl(?:pat|ptt|dt|rt|cbt|oas)-[A-Za-z0-9_-]{20,64}"
                                  r"(?![A-Za-z0-9_-])"), 6),
    ("npm token", lazy_compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"), 4),
    ("PyPI token", lazy_compile(r"(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"), 5),
    ("Hugging Face token", lazy_compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z]{34,40}(?![A-Za-z0-9_])"), 3),
    ("SendGrid API key", lazy_compile(r"(?<![A-Za-z0-9_-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"
                                      r"(?![A-Za-z0-9_-])"), 3),
    ("Slack webhook URL", lazy_compile(r"https://hooks\.slack\.com/(?:services|workflows)/T[A-Za-z0-9_]{6,}/"
                                       r"[A-Za-z0-9_]{6,}/[A-Za-z0-9_]{12,}"), 24),
    ("Shopify access token", lazy_compile(r"(?<![A-Za-z0-9_])shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])"), 6),
    ("DigitalOcean token", lazy_compile(r"(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])"), 7),
    ("age secret key", lazy_compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), 15),
    # A signed JSON Web Token: three base64url parts, the first two JSON objects ("eyJ" is base64 of '{"').
    ("JSON Web Token", lazy_compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\."
                                    r"[A-Za-z0-9_-]{16,}(?![A-Za-z0-9_-])"), 3),
)
PRIVATE_KEY_BEGIN = lazy_compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
# Key material: a long run of base64 right after the marker or on the next lines. Without it the
# marker is just a constant (``pem.startswith("-----BEGIN PRIVATE KEY-----")``).
_KEY_MATERIAL = lazy_compile(r"[A-Za-z0-9+/]{40,}")
# Substrings one of which every token format contains: a fast ``in`` test before any regex.
TOKEN_LITERALS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "k_live_",
                  "sk-ant-", "T3BlbkFJ", "PRIVATE KEY", "gl", "npm_", "pypi-", "hf_", "SG.", "hooks.slack", "shp",
                  "_v1_", "AGE-SECRET", "eyJ")
# Cheap gate: can this text contain any token format at all?
TOKEN_GATE = lazy_compile(r"AKIA|ASIA|gh[pousr]_|github_pat_|xox[baprs]-|AIza|k_live_|sk-ant-|T3BlbkFJ|PRIVATE KEY|"
                          r"gl(?:pat|ptt|dt|rt|cbt|oas)-|npm_|pypi-AgEI|hf_|SG\.|hooks\.slack|shp(?:at|ca|pa|ss)_|"
                          r"do[opr]_v1_|AGE-SECRET|eyJ")

# --- secret-like names ------------------------------------------------------------------------

_STRONG_WORDS = frozenset({
    "password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "apikey", "apikeys",
    "token", "credential", "credentials", "privatekey", "secretkey", "accesskey", "authtoken",
    "accesstoken", "clientsecret",
})
_STRONG_PAIRS = frozenset({
    ("api", "key"), ("api", "keys"), ("access", "key"), ("secret", "key"), ("private", "key"),
    ("pass", "word"), ("pass", "phrase"), ("auth", "token"), ("client", "secret"),
})
# Weak heads are secrets only with a high-entropy value: most ``*_key`` names are dict keys.
_WEAK_WORDS = frozenset({"key", "keys", "salt", "authorization", "bearer", "hmac"})
# Trailing words that do not change what the name holds (``password_value``, ``API_KEY_B64``).
_NEUTRAL_SUFFIX = frozenset({"value", "val", "str", "string", "plain", "plaintext", "raw", "b64", "base64",
                             "hex", "bytes", "literal", "override", "default", "base"})
# A word before the head that makes it something other than the credential itself:
# limits and flags (max_token), hashes (hashed_password), public halves (public_key), tokenizer
# vocabulary (pad_token, eos_token), deliberately wrong values in tests (invalid_token).
_QUALIFIER_PREFIX = frozenset({
    "max", "min", "num", "n", "is", "has", "use", "uses", "enable", "enabled", "disable", "disabled", "no",
    "require", "requires", "required", "allow", "allowed", "show", "hide", "total", "count", "len",
    "length", "should", "can", "must", "hash", "hashed", "encrypted", "masked", "redacted", "obfuscated",
    "public", "pub", "publishable", "pad", "eos", "bos", "unk", "sep", "mask", "cls", "stop", "start",
    "end", "special", "next", "prev", "previous", "last", "first", "invalid", "wrong", "bad", "incorrect",
    "expired", "revoked", "fake", "dummy", "mock", "sample", "example", "placeholder", "get", "set",
    # pagination and concurrency tokens name a request field or a cursor, not a credential
    "input", "output", "page", "paging", "pagination", "continuation", "cursor", "sync", "resume",
    "idempotency", "update", "lock", "csrf", "xsrf",
})
_NAME_WORDS = lazy_compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")

STRONG, WEAK, NOT_SECRET = 2, 1, 0


def name_words(name: str) -> list[str]:
    """``githubToken`` / ``GITHUB_TOKEN`` / ``github-token`` -> ["github", "token"]."""
    return [w.lower() for w in _NAME_WORDS.findall(name)]


def _stem_words(name: str) -> list[str]:
    """Words without numbering: password2 -> password, access_token_1 -> access, token (b64 stays)."""
    out = []
    for w in name_words(name):
        if w.isdigit():
            continue
        out.append(w if w in _NEUTRAL_SUFFIX else w.rstrip("0123456789"))
    return out


@lru_cache(maxsize=4096)
def classify_name(name: str, extra: tuple[str, ...] = ()) -> int:
    """STRONG when the name's head word is a credential word, WEAK for ``*_key``-like heads."""
    words = _stem_words(name)
    while len(words) > 1 and words[-1] in _NEUTRAL_SUFFIX:
        words.pop()
    if not words:
        return NOT_SECRET
    head, before = words[-1], words[:-1]
    level = NOT_SECRET
    for phrase in extra:
        pw = _stem_words(phrase)
        if pw and words[-len(pw):] == pw:
            level, before = STRONG, words[:-len(pw)]
            break
    if level == NOT_SECRET:
        if len(words) >= 2 and (words[-2], head) in _STRONG_PAIRS:
            level, before = STRONG, words[:-2]
        elif head in _STRONG_WORDS:
            level = STRONG
        elif head in _WEAK_WORDS:
            level = WEAK
    if level and any(w in _QUALIFIER_PREFIX for w in before):
        return NOT_SECRET
    return level


# Gates run over lowercased text: a case-insensitive alternation is several times slower in ``re``
# than ``str.lower()`` plus a case-sensitive one, and the leading letters are factored for speed.
_STRONG_GATE_WORDS = r"p(?:ass(?:wd|word|phrase)?|wd|rivate.?key)|secret|a(?:pi.?key|ccess.?key)|token|credential"
_WEAK_GATE_WORDS = r"key|salt|auth|bearer|hmac"
# The rest of a key after the secret word, then the binding operator: "password": / API_KEY_2 = / token:=
_BINDING_TAIL = r"""[\w$.\-]*["'\]]*[ \t]*[:=]"""


def secret_binding_pattern(extra: tuple[str, ...] = (), weak: bool = True) -> re.Pattern:
    """Gate for *lowercased* text: a secret-like word inside a key followed by ``=`` or ``:``."""
    return _binding_pattern(tuple(sorted(extra)), weak)


@lru_cache(maxsize=64)
def _binding_pattern(extra: tuple[str, ...], weak: bool) -> re.Pattern:
    words = _STRONG_GATE_WORDS + (f"|{_WEAK_GATE_WORDS}" if weak else "")
    words += "".join(f"|{re.escape(w.lower())}" for w in extra if w)
    return re.compile(f"(?:{words}){_BINDING_TAIL}")


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
_B64ISH = lazy_compile(r"^[A-Za-z0-9+/=_\-]+$")
_HEXISH = lazy_compile(r"^[0-9a-fA-F\-]+$")
MIN_NAMED_LENGTH = 6
MIN_ENTROPY_LENGTH = 20


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def is_placeholder(value: str, name: str = "", in_test: bool = False) -> bool:
    """Values that say they are not a real secret: empty, templates, "changeme", "xxx", "<password>"..."""
    v = value.strip()
    if not v:
        return True
    low = v.lower()
    if low in _PLACEHOLDER_EXACT or (name and _squash(v) == _squash(name)):
        return True
    if len(set(low)) <= 2 or _TEMPLATE.match(v) or _YOUR.match(v):
        return True
    if any(p in low for p in _PLACEHOLDER_PARTS):
        return True
    return in_test and (any(p in low for p in _TEST_PARTS) or _WEAK_PASSWORD.match(v) is not None)


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


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    n = len(text)
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def is_high_entropy(value: str, threshold: float) -> bool:
    """At least 20 characters of base64/hex alphabet whose entropy is high for its length.

    ``threshold`` is in bits per character for base64 (at most 6). A string cannot carry more
    than log2(len) bits per character, and hex at most 4, so the threshold is scaled by the
    maximum reachable entropy: 4.5 means 75% of the maximum (4.5 for long base64, 3.0 for hex).
    """
    if len(value) < MIN_ENTROPY_LENGTH or not _B64ISH.match(value):
        return False
    # Random keys of this length all but surely mix digits and letters; long words do not.
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    alphabet_bits = 4.0 if _HEXISH.match(value) else 6.0
    reachable = min(math.log2(len(value)), alphabet_bits)
    return shannon_entropy(value) >= threshold * reachable / 6.0


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


# Credentials inside a URL anywhere in a line (a DSN in a settings file, a private index in requirements.txt).
# Bounded quantifiers keep a hostile 100 KB line linear.
URL_CREDENTIALS = lazy_compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,24})://"
                               r"(?P<user>[^\s/@:'\"<>`]{0,128}):(?P<pw>[^\s/@'\"<>`]{1,256})@(?=[\w\[])")
_URL_PLACEHOLDER_PW = frozenset({"pass", "password", "passwd", "pw", "pwd", "secret", "user", "username", "token",
                                 "apikey", "api_key", "key", "x", "xx", "xxx", "****", "changeme", "foo", "bar",
                                 "mypassword", "yourpassword", "pass123", "password123", "secret123", "admin",
                                 "postgres", "root", "guest", "test", "testing"})
_LOOPBACK = lazy_compile(r"(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|0\.0\.0\.0)(?=[:/?#\s'\"]|$)", re.I)
_TEMPLATED = lazy_compile(r"[${}<>%]|^\*+$|^x+$", re.I)


def find_url_credentials(text: str, in_test: bool = False):
    """(start, end) of each password inside a URL of the line, placeholders and templates skipped.

    In product code and configuration any literal password counts, even a weak one; in tests, docs and examples
    the usual stand-ins (pass, password, secret, changeme, password123...) do not. Templates never count."""
    if "://" not in text or "@" not in text:
        return
    for m in URL_CREDENTIALS.finditer(text):
        pw = m.group("pw")
        if _TEMPLATED.search(pw) or pw.isdigit() and len(pw) < 4:
            continue
        if _LOOPBACK.match(text, m.end()):
            continue  # a database on this machine: a developer's or a test run's, not a secret anyone can use
        if in_test and (pw.lower() in _URL_PLACEHOLDER_PW or is_placeholder(pw, "password", True)
                        or _WEAK_PASSWORD.match(pw)):
            continue
        yield m.start("pw"), m.end("pw")


# Dictionary stand-ins followed by digits: password123, secret1, admin2024.
_WEAK_PASSWORD = lazy_compile(r"^(?:pass(?:word)?|secret|admin|user|test|demo|guest|root|qwerty|letmein|changeme|"
                              r"foo|bar|example|sample)[\W_]*\d*$", re.I)
# An AWS secret access key: 40 characters of base64 on a line that names it.
_AWS_SECRET = lazy_compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def find_aws_secret(text: str, in_test: bool = False):
    """(start, end) of an AWS secret access key on a line that says it is one."""
    low = text.lower()
    if "aws" not in low or "secret" not in low:
        return None
    for m in _AWS_SECRET.finditer(text):
        v = m.group()
        if (any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v)
                and not token_is_placeholder(v, in_test)):
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


# --- redaction --------------------------------------------------------------------------------

def redact_value(value: str) -> str:
    """'hunter2' -> 'hu***': enough to recognise which value, never enough to use it."""
    return value[:2] + "***" if len(value) >= 6 else "***"


_ASSIGNED = lazy_compile(
    r"""(?P<key>[A-Za-z_$@][\w$.\-]*)["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\]|]*[ \t]*=|:=|=>|=|:)(?!=)[ \t]*"""
    r"""(?:(?P<q>["'`])(?P<qval>[^"'`\n]*)(?P=q)|(?P<val>[^\s"'`,;(){}\[\]#]+)[ \t]*(?:[#;].*)?$)""")
_B64_RUN = lazy_compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/_-])")
_URL_CREDS_ANY = lazy_compile(r"(?P<pre>[A-Za-z][A-Za-z0-9+.-]*://[^/@:\s\"']*:)(?P<pw>[^/@\s\"']+)(?=@)")


def redact_line(line: str, extra: tuple[str, ...] = ()) -> str:
    """Mask anything credential-like in a line of text: known token formats, private key material,
    passwords inside URLs, and literals bound to secret-like names. Safe to call on any string
    (reporters and the memory layer use it as a last line of defence)."""
    if not line:
        return line
    out = line
    if any(lit in out for lit in TOKEN_LITERALS) and TOKEN_GATE.search(out):
        for _, pattern, keep in TOKEN_FORMATS:
            out = pattern.sub(lambda m, k=keep: m.group()[:k] + "***", out)
        pk = PRIVATE_KEY_BEGIN.search(out)
        if pk:
            out = out[:pk.end()] + _KEY_MATERIAL.sub("<redacted>", out[pk.end():])
    if "://" in out and "@" in out:
        out = _URL_CREDS_ANY.sub(lambda m: m.group("pre") + "***", out)
    if len(out) >= 40 and _B64_RUN.search(out):
        out = _B64_RUN.sub(_mask_key_material, out)
    if secret_binding_pattern(extra, weak=False).search(out.lower()):
        out = _ASSIGNED.sub(lambda m: _mask_assignment(m, extra), out)
    return out


def _mask_key_material(m: re.Match) -> str:
    """A long mixed-case base64 run (a PEM body line, a raw key) reported on its own line by some
    other rule; hex digests and identifiers are left alone."""
    run = m.group()
    if any(c.isupper() for c in run) and any(c.islower() for c in run) and any(c.isdigit() for c in run) \
            and is_high_entropy(run.rstrip("="), 4.5):
        return "<redacted>"
    return run


def _mask_assignment(m: re.Match, extra: tuple[str, ...]) -> str:
    key = m.group("key").lstrip("$@")
    if classify_name(key, extra) != STRONG:
        return m.group()
    group = "qval" if m.group("q") else "val"
    value = m.group(group)
    if value is None or len(value) < 4 or is_placeholder(value, key) or "***" in value:
        return m.group()
    start, end = m.span(group)
    base = m.start()
    text = m.group()
    return text[:start - base] + redact_value(value) + text[end - base:]
