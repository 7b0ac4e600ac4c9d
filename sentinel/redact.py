"""Text made safe to store, cache, print or post: the one path every output of Sentinel takes.

Untrusted text — code lines, commit messages, PR bodies, file paths — reaches terminals, JSON,
SARIF, markdown, PR comments, MCP clients and the experience memory. Before it goes anywhere:

* :func:`redact` masks secrets (any text, any number of lines) and writes bytes that were not
  UTF-8 as ``\\xNN`` escapes, so the result can be encoded, stored and posted;
* :func:`display_path` writes a path the way git quotes it (``"caf\\351.py"``) when it holds
  bytes that are not UTF-8, control characters or bidi overrides, and as is otherwise;
* :func:`display_text` escapes what must not reach a terminal or a reader raw (ANSI escapes,
  bidi overrides, control characters) in one line of text;
* :func:`scrub_verdict` applies all of that to a whole Verdict: reporters call it first.

The secret catalogue below is **one table for detection and redaction**: the chaos check reports
the token formats of :data:`TOKEN_FORMATS` (through ``sentinel.checks.secrets``) and every output
masks them. A new format is one row here. Redaction also masks what detection reports by name
(``password = "..."``, ``DB_PASSWORD=...``), passwords inside URLs, long random base64 runs
(private key bodies), and — because commit messages and PR text are prose — secrets written as
prose (``password is hunter2!x``, ``db password hunter2!x``, ``secret s3cr3tV4lue``: a secret-like word and a
value that looks like a credential, not a word of prose) and bearer tokens. Redaction errs on the side of masking: a
false mask costs a reader a few characters, a missed one leaks a credential.

This module imports nothing from the checks, the engine or the reporters.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from sentinel.lazyre import lazy_compile

# --- the catalogue: token formats ----------------------------------------------------------------

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
KEY_MATERIAL = lazy_compile(r"[A-Za-z0-9+/]{40,}")
# Substrings one of which every token format contains: a fast ``in`` test before any regex.
TOKEN_LITERALS = ("AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "AIza", "k_live_",
                  "sk-ant-", "T3BlbkFJ", "PRIVATE KEY", "gl", "npm_", "pypi-", "hf_", "SG.", "hooks.slack", "shp",
                  "_v1_", "AGE-SECRET", "eyJ")
# Cheap gate: can this text contain any token format at all? The prefixes AKIA|ASIA|gh[pousr]_|github_pat_|
# xox[baprs]-|AIza|k_live_|sk-ant-|T3BlbkFJ|PRIVATE KEY|gl(?:pat|ptt|dt|rt|cbt|oas)-|npm_|pypi-AgEI|hf_|SG\.|
# hooks\.slack|shp(?:at|ca|pa|ss)_|do[opr]_v1_|AGE-SECRET|eyJ, grouped by first letter: the same strings, but
# Python's re tries each top-level alternative at every offset whose letter starts one, and a whole tree's text
# (20 MB) is scanned a quarter faster with 13 alternatives than with 20 (tests/test_whole_tree_paths.py).
TOKEN_GATE = lazy_compile(r"A(?:KIA|SIA|Iza|GE-SECRET)|g(?:h[pousr]_|ithub_pat_|l(?:pat|ptt|dt|rt|cbt|oas)-)|"
                          r"xox[baprs]-|k_live_|s(?:k-ant-|hp(?:at|ca|pa|ss)_)|T3BlbkFJ|PRIVATE KEY|npm_|pypi-AgEI|"
                          r"h(?:f_|ooks\.slack)|SG\.|do[opr]_v1_|eyJ")
# Credentials inside a URL anywhere in a line (a DSN in a settings file, a private index in requirements.txt).
# The host may be a template's field (f"...@{host}", "...@%s", `...@${HOST}`) or follow the literal's end
# ("...@" + host): the password before it is just as literal.
# Bounded quantifiers and a scheme that starts a word keep a hostile 100 KB line linear.
URL_CREDENTIALS = lazy_compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,24})://"
                               r"(?P<user>[^\s/@:'\"<>`]{0,128}):(?P<pw>[^\s/@'\"<>`]{1,256})@"
                               r"(?=[\w\[{%$'\"`])")
# The user part of a URL (``scheme://user:password@``), for URLs known to name a credential store.
URL_USERINFO = lazy_compile(r"(?<![A-Za-z0-9+.-])(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,24}://)"
                            r"(?P<userinfo>[^@/?#\s]{0,512})@")
# Query parameters of a connection URL or DSN that carry a credential (libpq's sslpassword, token=...).
QUERY_SECRET = lazy_compile(r"(?i)(?P<key>\b(?:password|passwd|pwd|sslpassword|sslkey|token|secret|api[_-]?key|"
                            r"access[_-]?token)[ \t]{0,8}=[ \t]{0,8})(?P<value>'(?:\\.|[^'\\]){0,512}'|[^\s&;#]{1,512})")
# An AWS secret access key: 40 characters of base64 — any base64 run, unless the line names it. ("=" may
# come before it — AWS_SECRET_ACCESS_KEY=... — as padding only ends a run.)
AWS_SECRET_KEY = lazy_compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def names_aws_secret(text: str) -> bool:
    """Does this line say it holds an AWS secret (``aws_secret_access_key``, ``AWS_SECRET``)?"""
    low = text.lower()
    return "aws" in low and "secret" in low


def mixed_key_material(value: str) -> bool:
    """Upper and lower case letters and digits: a random key, not a word, a hex digest or a path."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


# --- the catalogue: names that hold secrets -------------------------------------------------------

STRONG_WORDS = frozenset({
    "password", "passwords", "passwd", "pwd", "passphrase", "secret", "secrets", "apikey", "apikeys",
    "token", "credential", "credentials", "privatekey", "secretkey", "accesskey", "authtoken",
    "accesstoken", "clientsecret",
})
STRONG_PAIRS = frozenset({
    ("api", "key"), ("api", "keys"), ("access", "key"), ("secret", "key"), ("private", "key"),
    ("pass", "word"), ("pass", "phrase"), ("auth", "token"), ("client", "secret"),
})
# Weak heads are secrets only with a high-entropy value: most ``*_key`` names are dict keys.
WEAK_WORDS = frozenset({"key", "keys", "salt", "authorization", "bearer", "hmac"})
# Trailing words that do not change what the name holds (``password_value``, ``API_KEY_B64``).
NEUTRAL_SUFFIX = frozenset({"value", "val", "str", "string", "plain", "plaintext", "raw", "b64", "base64",
                            "hex", "bytes", "literal", "override", "default", "base"})
# A word before the head that makes it something other than the credential itself:
# limits and flags (max_token), hashes (hashed_password), public halves (public_key), tokenizer
# vocabulary (pad_token, eos_token), deliberately wrong values in tests (invalid_token).
QUALIFIER_PREFIX = frozenset({
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


def stem_words(name: str) -> list[str]:
    """Words without numbering: password2 -> password, access_token_1 -> access, token (b64 stays)."""
    out = []
    for w in name_words(name):
        if w.isdigit():
            continue
        out.append(w if w in NEUTRAL_SUFFIX else w.rstrip("0123456789"))
    return out


@lru_cache(maxsize=4096)
def classify_name(name: str, extra: tuple[str, ...] = ()) -> int:
    """STRONG when the name's head word is a credential word, WEAK for ``*_key``-like heads."""
    words = stem_words(name)
    while len(words) > 1 and words[-1] in NEUTRAL_SUFFIX:
        words.pop()
    if not words:
        return NOT_SECRET
    head, before = words[-1], words[:-1]
    level = NOT_SECRET
    for phrase in extra:
        pw = stem_words(phrase)
        if pw and words[-len(pw):] == pw:
            level, before = STRONG, words[:-len(pw)]
            break
    if level == NOT_SECRET:
        if len(words) >= 2 and (words[-2], head) in STRONG_PAIRS:
            level, before = STRONG, words[:-2]
        elif head in STRONG_WORDS:
            level = STRONG
        elif head in WEAK_WORDS:
            level = WEAK
    if level and any(w in QUALIFIER_PREFIX for w in before):
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


# --- entropy ------------------------------------------------------------------------------------

_B64ISH = lazy_compile(r"^[A-Za-z0-9+/=_\-]+$")
_HEXISH = lazy_compile(r"^[0-9a-fA-F\-]+$")
MIN_ENTROPY_LENGTH = 20


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


# --- redaction ----------------------------------------------------------------------------------

def redact_value(value: str) -> str:
    """'hunter2' -> 'hu***': enough to recognise which value, never enough to use it."""
    return value[:2] + "***" if len(value) >= 6 else "***"


_ASSIGNED = lazy_compile(
    r"""(?P<key>[A-Za-z_$@][\w$.\-]*)["']?\]?[ \t]*(?::[ \t]*[A-Za-z_][\w.\[\]|]*[ \t]*=|:=|=>|=|:)(?!=)[ \t]*"""
    # An unquoted value ends the statement (then a comment, a ';' or the end), which is looked at, not consumed:
    # the rest of the line ("x=0; token = '...'") is scanned for its own assignments.
    r"""(?:(?P<q>["'`])(?P<qval>[^"'`\n]*)(?P=q)|(?P<val>[^\s"'`,;(){}\[\]#]+)(?=[ \t]*(?:[#;]|$)))""")
# Shell: VAR=value before a command or among others (PGPASSWORD=x psql ..., export A=1 TOKEN=x).
_ENV_ASSIGN = lazy_compile(r"(?<![\w$.\-])(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<val>[^\s\"'`(),;<>]+)")
_B64_RUN = lazy_compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/_-])")
# Prose: "the password is hunter2!x", "pwd: Tr0ub4dor", "API key was sk9...", and with nothing between the word
# and its value: "db password Tr0ub4dor&3", "passwd hunter2!x", "secret s3cr3tV4lue". A credential word, then a verb
# or an operator or only a space, then one word. Only values that look like credentials are masked (see
# _credential_like): "the secret sauce", "password reset flow", "secret: SecretStr" are prose. A character
# reference (&#95; in Markdown a PR comment escaped) is part of the value, not its end.
_PROSE_SECRET = lazy_compile(r"(?i)\b(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[ _-]?key|access[ _-]?key"
                             r"|auth[ _-]?token|client[ _-]?secret)s?\b"
                             r"(?:[ \t]+(?:is|was)[ \t]+|[ \t]*:[ \t]+|(?<!\bpass)(?<!\bpasses)[ \t]+)"  # "pass" alone is a verb
                             r"[\"'`]?(?P<val>(?:&#?[A-Za-z0-9]{1,8};|[^\s\"'`()\[\]{}<>,;]){6,256})")
_DOTTED_NAME = lazy_compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")  # settings.SECRET_KEY, os.environ
_BEARER = lazy_compile(r"(?i)\b(?:bearer|token)[ \t]+(?P<val>[^\s\"'`<>]{8,512})")
# Stand-ins that are never worth masking (what detection calls placeholders, in short).
_STAND_IN = frozenset({"none", "null", "nil", "true", "false", "undefined", "changeme", "example", "redacted",
                       "placeholder", "password", "passwd", "secret", "token", "required", "optional", "missing"})
_TEMPLATED = lazy_compile(r"^(?:\$\{.*\}|\$[A-Za-z_]\w*|\{\{.*\}\}|\{.*\}|<.*>|%\(.*\)s|%[A-Za-z_]\w*%)$|^your[\W_A-Z]",
                          re.I | re.S)
# Words of prose, not values: letters only, maybe joined by - or _, in one of the cases words are written in
# (lower, UPPER, Title, CamelCase, snake_case, SCREAMING_SNAKE); a version; a reference, a flag, a mention, a path.
_WORDS_ONLY = lazy_compile(r"^[A-Za-z]+(?:[_-][A-Za-z]+)*$")
_WORD_CASES = lazy_compile(r"^(?:[a-z]+|[A-Z]+|(?:[A-Z][a-z]+)+|[A-Z]{2,}(?:[A-Z][a-z]+)+)$")
_NOT_A_VALUE = lazy_compile(r"^(?:v?\d+(?:\.\d+)+\w*|[#@-].*|[A-Z]+-\d+|~?\.{0,2}/.*|\w+://.*)$")


def _stand_in(value: str, key: str = "") -> bool:
    low = value.lower()
    return (len(value) < 4 or "***" in value or low in _STAND_IN or set(low) <= {"x", "*", "."} or value[0] == "<"
            or _TEMPLATED.match(value) is not None or (key != "" and low == key.lower()))


def _credential_like(value: str) -> bool:
    """For prose: a word with a digit, a symbol or a case words are not written in ("hunter2!", "Tr0ub4dor",
    "hUnTeR"), not an ordinary word ("required", "expired", "rotated"), a name (SecretStr, SECRET_KEY,
    settings.SECRET_KEY), a version (v1.2.3), a reference (#12, GH-12), a flag (--stdin) or a path."""
    v = value.rstrip(".,;:!?)")
    if len(v) < 6 or _stand_in(v) or _DOTTED_NAME.match(v) or _NOT_A_VALUE.match(v):
        return False
    if _WORDS_ONLY.match(v):
        return not all(_WORD_CASES.match(part) for part in re.split(r"[_-]", v))
    return True


def redact_line(line: str, extra: tuple[str, ...] = ()) -> str:
    """Mask anything credential-like in one line of text: the token formats of the catalogue,
    private key material, passwords inside URLs, literals bound to secret-like names, secrets
    written as prose and bearer tokens. Safe on any string; linear in its length.

    A name spelled with compatibility characters (``ＤＢ_ＰＡＳＳＷＯＲＤ = '...'``, which Python reads as
    ``DB_PASSWORD``: PEP 3131) is a secret-like name too: such a line is searched in its NFKC form, and when
    that form holds a secret, the line is shown in that form, masked."""
    if not line:
        return line
    if not line.isascii():
        import unicodedata

        folded = unicodedata.normalize("NFKC", line)
        if folded != line:
            masked = _redact_line(folded, extra)
            if masked != folded:
                return masked
    return _redact_line(line, extra)


def _redact_line(line: str, extra: tuple[str, ...]) -> str:
    out = line
    if any(lit in out for lit in TOKEN_LITERALS) and TOKEN_GATE.search(out):
        for _, pattern, keep in TOKEN_FORMATS:
            out = pattern.sub(lambda m, k=keep: m.group()[:k] + "***", out)
        pk = PRIVATE_KEY_BEGIN.search(out)
        if pk:
            out = out[:pk.end()] + KEY_MATERIAL.sub("<redacted>", out[pk.end():])
    if "://" in out and "@" in out:
        out = URL_CREDENTIALS.sub(_mask_url_password, out)
    if names_aws_secret(out):
        out = AWS_SECRET_KEY.sub(lambda m: "<redacted>" if mixed_key_material(m.group()) else m.group(), out)
    if len(out) >= 40 and _B64_RUN.search(out):
        out = _B64_RUN.sub(_mask_key_material, out)
    lowered = out.lower()
    if secret_binding_pattern(extra, weak=False).search(lowered):
        out = _ASSIGNED.sub(lambda m: _mask_assignment(m, extra), out)
        out = _ENV_ASSIGN.sub(lambda m: _mask_env(m, extra), out)
        lowered = out.lower()
    if any(w in lowered for w in ("pass", "pwd", "secret", "token", "api", "access")):
        out = _PROSE_SECRET.sub(lambda m: _mask_group(m, "val") if _credential_like(m.group("val")) else m.group(),
                                out)
    if ("bearer" in lowered or "token" in lowered) and _BEARER.search(out):
        out = _BEARER.sub(lambda m: _mask_group(m, "val") if _credential_like(m.group("val")) and "***" not in m.group()
                          else m.group(), out)
    return out


def _mask_group(m: re.Match, group: str) -> str:
    start, end = m.span(group)
    base = m.start()
    text = m.group()
    return text[:start - base] + redact_value(m.group(group)) + text[end - base:]


def _mask_url_password(m: re.Match) -> str:
    return m.group() if _stand_in(m.group("pw")) and m.group("pw") not in ("pass", "password") else \
        _mask_group(m, "pw")


def _mask_key_material(m: re.Match) -> str:
    """A long mixed-case base64 run (a PEM body line, a raw key) reported on its own line by some
    other rule; hex digests and identifiers are left alone."""
    run = m.group()
    if mixed_key_material(run) and is_high_entropy(run.rstrip("="), 4.5):
        return "<redacted>"
    return run


def _mask_env(m: re.Match, extra: tuple[str, ...]) -> str:
    if classify_name(m.group("key"), extra) != STRONG or _stand_in(m.group("val"), m.group("key")) \
            or m.group("val").startswith("$"):
        return m.group()
    return _mask_group(m, "val")


def _mask_assignment(m: re.Match, extra: tuple[str, ...]) -> str:
    key = m.group("key").lstrip("$@")
    if classify_name(key, extra) != STRONG:
        return m.group()
    group = "qval" if m.group("q") else "val"
    value = m.group(group)
    if value is None or _stand_in(value, key):
        return m.group()
    return _mask_group(m, group)


# Texts repeat (one message per rule, the same code line in several formats): recent answers are kept.
_REDACTED: dict[str, str] = {}
_CACHE_SIZE = 8192
_SURROGATE = lazy_compile("[\ud800-\udfff]")


def redact(text: str) -> str:
    """Any text (several lines too) with its secrets masked and bytes that were not UTF-8 written as
    ``\\xNN``: safe to store, cache, print and post."""
    if not text:
        return text
    done = _REDACTED.get(text)
    if done is not None:
        return done
    out = "\n".join(redact_line(line) for line in text.split("\n")) if "\n" in text else redact_line(text)
    if not out.isascii():
        out = _SURROGATE.sub(_escape_surrogate, out)
    if len(_REDACTED) >= _CACHE_SIZE:
        _REDACTED.clear()
    _REDACTED[text] = out
    return out


def redact_url(url: str) -> str:
    """A URL known to name a credential store (a database URL from a CI secret), fit for any message:
    the password of its user part and every credential parameter replaced by ``***`` — stand-ins
    included, since this URL is a real one — then :func:`redact` like any other text
    (``postgresql://user:***@host/db?sslpassword=***``)."""
    if not url:
        return url

    def userinfo(m: re.Match) -> str:
        user, sep, _ = m.group("userinfo").partition(":")
        return f"{m.group('scheme')}{user}{':***' if sep else ''}@"

    out = URL_USERINFO.sub(userinfo, url) if "@" in url else url
    if "=" in out:
        out = QUERY_SECRET.sub(lambda m: m.group("key") + "***", out)
    return redact(out)


def _escape_surrogate(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


# --- display --------------------------------------------------------------------------------------

# Characters no output may carry raw: C0/C1 controls (ANSI escapes start with \x1b), DEL, bidi
# embeddings/overrides/isolates, line and paragraph separators, and lone surrogates (bytes that
# were not UTF-8).
_UNSAFE = lazy_compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_NEWLINES = lazy_compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_C_NAMES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
            '"': '\\"', "\\": "\\\\"}
_PATH_ESCAPED = lazy_compile('["\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]')


def _octal(ch: str) -> str:
    """git's escape of one character: the octal bytes of its UTF-8 form (a surrogate is one raw byte)."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
        return f"\\{code - 0xDC00:03o}"
    return "".join(f"\\{b:03o}" for b in ch.encode("utf-8", "surrogatepass"))


def display_path(path: str) -> str:
    """A repository path for any output: as is when every character is safe to show, else in git's
    C-quoted form ("caf\\351.py", "tab\\there.py") — bytes that are not UTF-8, control characters and
    bidi overrides as escapes. Valid non-ASCII UTF-8 stays readable (git's core.quotepath=false)."""
    if path.isascii() and path.isprintable() or not _UNSAFE.search(path):
        return path
    return '"' + _PATH_ESCAPED.sub(lambda m: _C_NAMES.get(m.group()) or _octal(m.group()), path) + '"'


def _visible(m: re.Match) -> str:
    ch = m.group()
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if ch in ("\t", "\n", "\r"):
        return _C_NAMES[ch]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def display_text(text: str, multiline: bool = False) -> str:
    """Text with every character no output may carry raw written as an escape (\\x1b, \\u202e,
    \\xe9 for a byte that was not UTF-8); newlines kept when `multiline`."""
    if text.isascii() and text.isprintable():
        return text
    return (_UNSAFE_KEEP_NEWLINES if multiline else _UNSAFE).sub(_visible, text)


# --- a whole verdict ------------------------------------------------------------------------------

_PATH_FIELDS = frozenset({"path"})
# Fields that are codes or enum values we wrote ourselves: nothing to mask.
_OWN_FIELDS = frozenset({"rule", "check", "severity", "status", "fail_level", "urgency", "card_id"})


# What no text field of a finding may carry raw into any output: display_text's characters except the line
# breaks (\n, \r) and tab, which every reporter handles in its own way (escapes them, folds them, keeps them).
_UNSAFE_IN_FIELDS = lazy_compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                                 "\ud800-\udfff]")


def _shown(text: str) -> str:
    """Free text of a finding for any output: secrets masked, and no character a terminal, a log viewer or
    a workflow-command reader would act on (an ESC from a file name quoted in a message, a bidi override)."""
    text = redact(text)
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE_IN_FIELDS.sub(_visible, text)


def scrub_verdict(verdict, memo: dict[int, object] | None = None):
    """A copy of `verdict` fit for any output: every path through :func:`display_path`, every other
    string through :func:`redact` and :func:`display_text`. A finding listed twice (at the top and under its check) stays
    one object, so reporters that rely on that still can; `memo`, when given, receives id(original)
    -> copy for every record (to re-key data kept by identity). Idempotent."""
    from enum import Enum

    from sentinel.record import Record

    memo = {} if memo is None else memo

    def walk(value):
        if isinstance(value, Enum):
            return value
        if isinstance(value, str):
            return _shown(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, Record):
            hit = memo.get(id(value))
            if hit is not None:
                return hit
            fields = {}
            for name in value._fields:
                v = getattr(value, name)
                if isinstance(v, str) and not isinstance(v, Enum):
                    if name in _PATH_FIELDS:
                        v = redact(display_path(v))
                    elif name not in _OWN_FIELDS:
                        v = _shown(v)
                elif isinstance(v, (list, Record)):
                    v = walk(v)
                fields[name] = v
            copy = type(value)(**fields)
            memo[id(value)] = copy
            return copy
        return value

    return walk(verdict)


def redact_tree(value, keep: frozenset[str] = frozenset()):
    """JSON-like data (dicts, lists, strings) with every string redacted; dict keys in `keep` (identifiers
    we made ourselves) stay as they are. For data that is stored or sent whole: a learned card, an MCP answer."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: v if k in keep else redact_tree(v, keep) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v, keep) for v in value]
    return value


def safe_to_post(data) -> bool:
    """Can this JSON-like data (a fix, a suggestion) be posted as it is? Not when redaction would change
    any of its text: masking it would make it wrong, and sending it would leak the secret."""
    if isinstance(data, str):
        return redact(data) == data
    if isinstance(data, dict):
        return all(safe_to_post(k) and safe_to_post(v) for k, v in data.items())
    if isinstance(data, (list, tuple)):
        return all(safe_to_post(v) for v in data)
    return True
