"""Property-based fuzzing of the gate's inputs (issue 11): diffs, paths, encodings, line endings,
configs and long lines. Sized for CI (a few hundred examples per property). The properties:

* never a traceback: anything malformed is an InputError/ConfigError (exit 2), nothing else;
* never a pass when a known-bad line is hidden by a mutation Python ignores (line endings, form
  feeds, declared encodings, BOMs, odd but valid paths): the finding is still reported;
* every report format renders whatever the input, as valid, encodable text, with no secret in it;
* bounded time on long lines and long messages.
"""

from __future__ import annotations

import json
import os
import time

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sentinel import engine
from sentinel.config import Config, validate
from sentinel.diffparse import decode_diff, parse_diff
from sentinel.errors import ConfigError, InputError
from sentinel.redact import display_path, redact
from sentinel.report import render
from sentinel.sources import Change
from tests.harden_util import widen_identifiers

# The suite's run is reproducible (a fixed sequence of examples: a red CI names a real regression, not a new
# draw); SENTINEL_FUZZ_EXPLORE=1 draws fresh examples, as benchmarks/fuzz.py does at scale.
_DERANDOMIZE = not os.environ.get("SENTINEL_FUZZ_EXPLORE")
FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                derandomize=_DERANDOMIZE)
FORMATS = ("text", "concise", "json", "sarif", "github", "markdown")

# Known-bad Python, each with the rule that must fire (error level in a product file), and benign
# code around it. Lines are joined with "\n" here; mutations change that.
BAD = {
    "eval": (["def run(data):", "    return eval(data)"], "SEN303"),
    "exec": (["def run(data):", "    exec(data)"], "SEN303"),
    "bare": (["def f():", "    try:", "        g()", "    except:", "        pass"], "SEN301"),
    "todo": (["def f():", "    # TODO: handle errors", "    return 1"], "SEN401"),
    "star": (["from os import *"], "SEN203"),
    "token": (["API = 'ghp_Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2'"], "SEN304"),
}
BENIGN = [["import sys"], ["X = 1", "Y = 2"], ["def helper(a, b):", "    return a + b"], ["# a comment"],
          ["class K:", "    pass"], ['"""docstring"""']]


def _diff_bytes(path: bytes, content: bytes) -> bytes:
    """A git diff adding `content` (raw bytes: any line ending, any encoding) as `path` (raw bytes)."""
    lines = content.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    quoted = _git_quote(path)
    a, b = (quoted.replace(b'"', b'"a/', 1), quoted.replace(b'"', b'"b/', 1)) if quoted.startswith(b'"') \
        else (b"a/" + path, b"b/" + path)
    body = b"".join(b"+" + line + b"\n" for line in lines)
    tail = b"" if content.endswith(b"\n") or not lines else b"\\ No newline at end of file\n"
    return (b"diff --git " + a + b" " + b + b"\nnew file mode 100644\n--- /dev/null\n+++ " + b + b"\n"
            + b"@@ -0,0 +1,%d @@\n" % len(lines) + body + tail)


def _git_quote(path: bytes) -> bytes:
    """git's C-quoting of a name (core.quotepath=false)."""
    names = {7: b"\\a", 8: b"\\b", 9: b"\\t", 10: b"\\n", 11: b"\\v", 12: b"\\f", 13: b"\\r", 34: b'\\"', 92: b"\\\\"}
    if not any(c < 32 or c == 127 or c in (34, 92) for c in path) and not _not_utf8(path):
        return path
    out = bytearray(b'"')
    for c in path:
        if c in names:
            out += names[c]
        elif c < 32 or c == 127 or c >= 128:
            out += b"\\%03o" % c
        else:
            out.append(c)
    return bytes(out + b'"')


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _gate(diff: bytes, message: str | None = None):
    cs = parse_diff(decode_diff(diff), source="fuzz")
    return engine.run(Change(cs, content_rev=None), Config(), engine.RunOptions(message=message))


# --- mutations Python ignores ---------------------------------------------------------------------

JUNK = "\v\x1c\u2028"  # characters str.splitlines() breaks at and Python does not, inside a comment


def _apply(lines: list[str], mutation: str, junk: str = JUNK) -> tuple[bytes, int]:
    """The file's bytes under `mutation`, and how many lines it puts before the original first line."""
    if mutation == "lf":
        return ("\n".join(lines) + "\n").encode(), 0
    if mutation == "crlf":
        return ("\r\n".join(lines) + "\r\n").encode(), 0
    if mutation == "cr":  # lone CRs: one line for git, many for Python
        return ("\r".join(lines) + "\r").encode(), 0
    if mutation == "mixed":
        ends = ["\n", "\r\n", "\r"]
        return "".join(line + ends[i % 3] for i, line in enumerate(lines)).encode(), 0
    if mutation == "formfeed":  # a form feed starting top-level lines is whitespace to Python
        return ("\n".join("\f" + ln if ln and not ln[0].isspace() else ln for ln in lines) + "\n").encode(), 0
    if mutation == "comment-junk":  # characters str.splitlines() breaks at, inside comments
        return ("\n".join(ln + f"  # note{junk}eval(x)" if ln.strip() and not ln.strip().startswith(('"', "#"))
                          and not ln.rstrip().endswith(":") else ln for ln in lines) + "\n").encode(), 0
    if mutation == "latin-1":
        text = "# -*- coding: latin-1 -*-\n# caf\u00e9\n" + "\n".join(lines) + "\n"
        return text.encode("latin-1"), 2
    if mutation == "utf-7":
        body = ("\n".join(lines) + "\n").encode("utf-7")
        return b"# coding: utf-7\n" + body, 1
    if mutation == "bom":
        return b"\xef\xbb\xbf" + ("\n".join(lines) + "\n").encode(), 0
    if mutation == "no-final-newline":
        return "\n".join(lines).encode(), 0
    if mutation == "wide-names":  # identifiers in fullwidth letters: Python reads them in NFKC form (PEP 3131)
        return widen_identifiers("\n".join(lines) + "\n").encode(), 0
    raise AssertionError(mutation)


MUTATIONS = ["lf", "crlf", "cr", "mixed", "formfeed", "comment-junk", "latin-1", "utf-7", "bom", "no-final-newline",
             "wide-names"]
ODD_NAMES = [b"app/core.py", b"Plan b/core.py", b"sp ace/a b.py", b"tab\there.py", b'q"uote.py', b"caf\xe9.py",
             b"\xc3\xbcn\xc3\xafc\xc3\xb6de.py", b"new\nline.py", b"back\\slash.py", b"esc\x1b[2J.py"]


@FUZZ
@given(bad=st.sampled_from(sorted(BAD)), before=st.lists(st.sampled_from(BENIGN), max_size=3),
       after=st.lists(st.sampled_from(BENIGN), max_size=3), mutation=st.sampled_from(MUTATIONS),
       name=st.sampled_from(ODD_NAMES))
def test_mutations_python_ignores_never_hide_a_known_bad_line(bad, before, after, mutation, name):
    lines_bad, rule = BAD[bad]
    lines = [ln for block in before for ln in block] + lines_bad + [ln for block in after for ln in block]
    content, _shift = _apply(lines, mutation)
    # The mutated file is still what Python runs (the premise of the property).
    code = compile(content, "fuzz.py", "exec")
    assert code is not None
    verdict = _gate(_diff_bytes(name, content))
    assert not verdict.errored, [c.reason for c in verdict.checks if c.reason]
    assert rule in {f.rule for f in verdict.findings}, (mutation, name, [f.rule for f in verdict.findings],
                                                         [(n.path, n.reason) for n in verdict.not_checked])
    # What Python sees is unchanged, so is the verdict: the known-bad line is reported as it is in the same
    # code written plainly (LF endings, the comments' junk as spaces, a plain name).
    reference = _gate(_diff_bytes(b"app/core.py", _apply(lines, "comment-junk", " " * len(JUNK))[0]
                                  if mutation == "comment-junk" else _apply(lines, "lf")[0]))
    assert _severities(verdict, rule) == _severities(reference, rule) and verdict.passed == reference.passed
    if mutation != "comment-junk":  # a comment may explain a handler; with none the block stands
        assert not verdict.passed


def _severities(verdict, rule: str) -> list[str]:
    return sorted(f.severity.value for f in verdict.findings if f.rule == rule)


@FUZZ
@given(bad=st.sampled_from(sorted(BAD)), mutation=st.sampled_from(MUTATIONS), name=st.sampled_from(ODD_NAMES),
       fmt=st.sampled_from(FORMATS))
def test_every_format_renders_any_name_and_content_without_leaking(bad, mutation, name, fmt):
    lines, _ = BAD[bad]
    content, _ = _apply(lines + ["DB_PASSWORD = 'Zq7-s3cret-pw-81'  # TODO: rotate"], mutation)
    verdict = _gate(_diff_bytes(name, content), message="All tests pass; the admin password is Zq7-s3cret-pw-81")
    out = render(verdict, fmt)
    out.encode("utf-8")  # no surrogate, whatever the name's bytes
    assert "Zq7-s3cret-pw-81" not in out and "ghp_Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2" not in out
    assert "\x1b" not in out
    if fmt in ("json", "sarif"):
        json.loads(out)


# --- malformed and hostile diffs ------------------------------------------------------------------

_LINES = st.sampled_from([
    b"diff --git a/x.py b/x.py\n", b"diff --git a/Plan b/x.py b/Plan b/x.py\n", b'diff --git "a/q\\"x.py" "b/q\\"x.py"\n',
    b"--- a/x.py\n", b"+++ b/x.py\n", b"--- /dev/null\n", b"+++ /dev/null\n", b"@@ -1,2 +1,3 @@\n",
    b"@@ -0,0 +1 @@\n", b"@@ -1 +99999999 @@\n", b"@@ -1 +1,99999999 @@\n", b"@@@ -1 -1 +1 @@@\n",
    b"+except:\n", b"+    pass\n", b"+eval(x)\r\n", b"+a\rb\n", b" ctx\n", b"-old\n", b"\\ No newline at end of file\n",
    b"Binary files a/x and b/x differ\n", b"GIT binary patch\n", b"literal 3\n", b"+\tx = '\xe9'\n",
    b"new file mode 100644\n", b"deleted file mode 100644\n", b"rename from a b.py\n", b"rename to c d.py\n",
    b"+# TODO\n", b"+++ b/../../etc/passwd\n", b"+++ /abs/path.py\n", b"+++ \"b/nul\\000.py\"\n", b"-- \n",
    b"index 0000000..1111111 100644\n", b"\n", b"garbage line\n", b"+" + b"A" * 3000 + b"\n",
])


@FUZZ
@given(st.one_of(st.lists(_LINES, max_size=40).map(b"".join), st.binary(max_size=600)))
def test_random_and_spliced_diffs_are_parsed_or_refused_never_crash(data):
    text = decode_diff(data)
    t0 = time.perf_counter()
    try:
        cs = parse_diff(text, source="fuzz")
    except InputError as exc:
        assert "line" in str(exc) or "diff" in str(exc)
        with pytest.raises(InputError) as from_bytes:  # the bytes git wrote (the CLI's way) say the same
            parse_diff(data, source="fuzz")
        assert str(from_bytes.value) == str(exc)
        return
    assert _shape(parse_diff(data, source="fuzz")) == _shape(cs)
    for fc in cs.files:
        assert "\0" not in fc.path and not fc.path.startswith("/") and ".." not in fc.path.split("/")
    try:
        verdict = engine.run(Change(cs, content_rev=None), Config())
    except InputError:
        return  # e.g. a far hunk with no content to stand in for it
    assert not verdict.errored, [c.reason for c in verdict.checks if c.reason]
    for fmt in FORMATS:
        render(verdict, fmt).encode("utf-8")
    assert time.perf_counter() - t0 < 60


def _shape(cs):
    return [(f.path, f.old_path, f.status, f.added, f.context, f.removed, sorted(f.crlf_lines), f.hunks)
            for f in cs.files]


@FUZZ
@given(content=st.text(st.characters(codec="utf-8"), max_size=200), name=st.binary(min_size=1, max_size=20))
def test_any_name_git_could_have_round_trips(content, name):
    assume(b"\0" not in name and b"/" not in name and name not in (b".", b".."))
    diff = _diff_bytes(name + b".py", content.encode("utf-8", "surrogatepass") if False else content.encode())
    try:
        cs = parse_diff(decode_diff(diff), source="fuzz")
    except InputError:
        # only what the parser refuses on purpose: a body a diff cannot carry (e.g. a lone "\r" ending it)
        return
    (fc,) = cs.files
    assert fc.path.encode("utf-8", "surrogateescape") == name + b".py"
    shown = display_path(fc.path)
    shown.encode("utf-8")
    assert not any(c in shown for c in "\x1b\n\r\t\x00")


# --- long lines and messages: bounded time --------------------------------------------------------

_UNITS = ["a", "A1", " ", "\t", '\\"', "'", "://", "a:", "a=", "(", "[", "{", "#", "*/", "/*", "--", "@", ".",
          "password=", "token: ", "all tests pass ", "fixed ", "not ", "eval(", "rm -rf ", "import ", "TODO ",
          "http://a.b/", "${", "%(", "'''", '"""', "DROP TABLE ", ";", ",", "\\"]
_PATHS = ["a.py", "a.js", "a.sh", "requirements.txt", "q.sql", "p.toml", "c.yaml", "r.md", "Dockerfile", ".env",
          "package.json", "setup.cfg", "pyproject.toml"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=_DERANDOMIZE)
@given(units=st.lists(st.sampled_from(_UNITS), min_size=1, max_size=3), path=st.sampled_from(_PATHS),
       in_message=st.booleans())
@example(units=["#", "TODO "], path="a.py", in_message=False)  # 10,000 markers on one line: minutes, once
def test_long_lines_and_messages_take_bounded_time(units, path, in_message):
    line = ("".join(units) * (60_000 // len("".join(units)) + 1))[:60_000]
    if in_message:
        diff, message = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+x = 1\n".encode(), line
    else:
        diff, message = f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{line}\n".encode(), None
    t0 = time.perf_counter()
    verdict = _gate(diff, message=message)
    for fmt in ("text", "json"):
        render(verdict, fmt)
    elapsed = time.perf_counter() - t0
    # Linear work on 60 KB takes well under a second here; a quadratic path takes minutes.
    assert elapsed < 20, (units, path, in_message, elapsed)


# --- redaction ------------------------------------------------------------------------------------

SECRETS = ["ghp_Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2", "AKIAZ7Q4XW2LM9RT4YP8",
           "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6y",
           "xoxb-1234567890-0987654321-Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1"]
TEMPLATES = ["token = '{s}'", "curl -H 'Authorization: Bearer {s}'", "postgres://app:{s}@db/x", "{s}",
             "the password is {s}", "password: {s}", '{{"api_key": "{s}"}}', "export GITHUB_TOKEN={s}"]


@FUZZ
@given(secret=st.one_of(st.sampled_from(SECRETS), st.from_regex(r"[A-Za-z][A-Za-z0-9!#%^&*]{7,20}[0-9]",
                                                                   fullmatch=True)),
       template=st.sampled_from(TEMPLATES), left=st.text(max_size=40), right=st.text(max_size=40))
def test_redaction_masks_secrets_anywhere_in_any_text(secret, template, left, right):
    line = template.format(s=secret)
    if secret not in SECRETS and "{s}" == template:
        return  # a bare random word is not recognisably a secret without its context
    text = f"{left} {line} {right}".replace("\n", " ")
    out = redact(text)
    assert secret not in out
    assert redact(out) == out  # idempotent: a second pass changes nothing
    out.encode("utf-8")


@FUZZ
@given(st.text(max_size=300))
def test_redaction_never_fails_and_always_encodes(text):
    out = redact(text)
    out.encode("utf-8")
    assert redact(out) == out


@FUZZ
@given(message=st.text(max_size=120), code=st.one_of(st.text(max_size=120), st.sampled_from(TEMPLATES).map(
    lambda t: t.format(s=SECRETS[0]))))
def test_a_stored_signature_is_what_recall_looks_up(message, code):
    # The store redacts what it writes and recall looks signatures up by id: a signature must come out
    # of redaction unchanged, or a recurring failure would never be recognised again.
    from sentinel.memory.hypotheses.signature import signature

    sig = signature("SEN304", message, code)
    assert redact(sig) == sig
    assert SECRETS[0] not in sig


# --- configs --------------------------------------------------------------------------------------

_KEYS = ["fail-level", "filter-mode", "exclude", "baseline", "severity", "per-path-ignores", "jail", "style",
         "placeholder", "chaos", "memory", "roles", "nonsense", "llm"]
_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-10**9, 10**9), st.floats(allow_nan=True),
                                 st.text(max_size=30)),
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                       max_leaves=12)


@FUZZ
@given(st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=5))
def test_any_config_table_is_valid_or_a_config_error(table):
    try:
        validate(table, "fuzz.toml")
    except ConfigError as exc:
        assert "fuzz.toml" in str(exc)


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_mutation_keeps_the_code_python_runs(mutation):
    # The fuzzer's premise, checked directly: every mutation compiles to the same names.
    lines = BAD["eval"][0]
    content, _ = _apply(lines, mutation)
    assert "eval" in compile(content, "m.py", "exec").co_consts[0].co_names


@pytest.mark.parametrize("data", [b"\x1c", b"\x1d\n", b"\xe2\x80\xa8"])
def test_characters_python_calls_whitespace_are_not_a_diff_as_text_or_bytes(data):
    """str.strip() drops \\x1c-\\x1f and U+2028; git's bytes keep them: both must be refused alike (found by the
    property above)."""
    with pytest.raises(InputError) as as_text:
        parse_diff(decode_diff(data), source="fuzz")
    with pytest.raises(InputError) as as_bytes:
        parse_diff(data, source="fuzz")
    assert str(as_text.value) == str(as_bytes.value)
