"""Fuzz benchmark (issue 11): thousands of hostile diffs made from real commits, through the gate and
every report format. Needs ../shared/corpus (real commits of flask, requests and sqlalchemy, and the
recent commits of werkzeug, jinja, starlette, pytest and typer); skips cleanly without it.

Each case is a real diff (or a handful of them concatenated) with one to three mutations:

- line endings: CRLF, lone CR (two lines of Python on one line of git), mixed;
- encodings: bytes that are not UTF-8, a PEP 263 declaration (latin-1, utf-7) and the file re-encoded,
  a BOM, NUL bytes (binary);
- paths: git-quoted names with tabs, quotes, backslashes, bytes that are not UTF-8, ' b/' inside a
  name, spaces, long names, '../' and absolute paths, NUL;
- hunks: huge line numbers, truncation at any byte, junk after a complete hunk, duplicated and
  swapped hunks, deletions, renames, binary sections;
- sizes: lines of 20-200 KB made of the units that make naive regexes quadratic, long messages.

Most cases also carry an injected Python file with ``eval(data)``: when every mutation applied to it is
one Python ignores (line endings, declared encodings, odd names — a tab or a line break in it too), the gate
must still report SEN303 — a pass without it is a *hidden* line. Some cases carry a token and passwords, in
code and in the commit message, written as assignments and as prose (``db password <value>``, ``passwd
<value>``, ``secret <value>``): no report format, nor the fix diff, may contain them; the credential line
that ends in a bare ``# noqa`` must still be reported (a *silenced* secret).

Some cases are not diffs but large whole files (as ``--all-files`` and a staged new file give them, content
and all): thousands of repetitions of the constructs that once made a rule, a reporter or the fix planner
quadratic (a bare except under a trailing space, eval calls, prose secrets, long lines, claims in the message),
mixed with real source. Every case also plans its fixes (unsafe ones included) and renders them as a unified
diff and SARIF fixes, as ``--diff-fixes`` and ``--format sarif`` do. A run is slow past 10 s, or 10 s a MB of
input for the large ones.

Some cases are hostile repositories fixed as ``--fix`` fixes them (links where the fixer writes, files swapped
or edited between the check and the write, names with a tab or a line break), and config files in every wrong
shape (benchmarks/fuzz_hostile.py): counted are fixer *escapes* (a change under .git or outside the tree, a
link replaced, a temporary file left), plain files left unfixed, and wrong shapes *accepted silently*.

Each case runs in a forked child (the gate's modules imported once, in the parent): parse, gate, then
render text, concise, json, sarif, github and markdown. Counted: internal errors (anything but a
clean refusal naming the problem — a crashed check included), crashes per format (an exception,
output that is not valid UTF-8, JSON that does not parse, a raw terminal escape, a leaked secret),
hidden lines, runs over 10 s, and each child's peak RSS against the case's input size (target:
peak RSS <= 5 x input + 100 MB). A sample of the cases also runs through the installed console
script, every format, as a user would.

    nice python benchmarks/fuzz.py [--cases 10000] [--jobs 2] [--cli-cases 300] [--seed 11] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout's sentinel, when run from a clone
sys.path.insert(0, str(HERE))
import fuzz_hostile  # noqa: E402 - the hostile repositories and config files, beside this file

FORMATS = ("text", "concise", "json", "sarif", "github", "markdown")
CRASH_KINDS = FORMATS + ("fix-plan",)
SLOW_SECONDS = 10.0
TOKEN = "ghp_" + "Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2"
# A made-up password planted in every case: no output may show it (the leak count).
PASSWORD = "Vq8-r3d-fuzz-pw-53"  # sentinel: ignore[SEN304] - bait, not a credential
INJECTED = ("import os\n\n\ndef run(data):\n    # evaluate the expression\n    return eval(data)\n\n\n"
            "def other(x):\n    return x + 1\n")
# Passwords written as prose, with nothing between the word and the value: no output may show them either.
PROSE = ("Kx4-pr0se-pw-17", "hunt3r!zq", "s3cr3tVq8")
PROSE_LINE = f"db password {PROSE[0]}, passwd {PROSE[1]}, secret {PROSE[2]}"
SECRETS = (TOKEN, PASSWORD, *PROSE)
# Repeated in the large whole files: each once made something quadratic (issue 24), or is what redaction and
# the blanket-comment rule must get right at scale.
CONSTRUCTS = (
    "def handler_{i}(raw):   \n    try:\n        return eval(raw)\n    except:\n        return None\n\n\n",
    "value_{i} = eval(source_{i})\n",
    "# rotated: " + PROSE_LINE + "\n",
    'API_KEY_{i} = "' + PASSWORD + '"  # noqa\n',
    "x_{i} = 1  # " + "a long comment " * 12 + "\n",
    "from os.path import *\n",
    "def stub_{i}():\n    raise NotImplementedError  # TODO: write it\n\n\n",
)
MB = 1024 * 1024


# --- the corpus ---------------------------------------------------------------------------------

def load_corpus(shared: Path) -> list[dict]:
    """Real diffs with their commit messages: commits.jsonl, and the noise corpus rebuilt as diffs."""
    out = []
    with open(shared / "corpus" / "commits.jsonl", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["diff"].strip():
                out.append({"diff": r["diff"].encode("utf-8", "surrogateescape"),
                            "message": f"{r['subject']}\n\n{r['body']}".strip()})
    for path in sorted((shared / "corpus" / "noise").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                diff = _noise_diff(r["files"])
                if diff:
                    out.append({"diff": diff, "message": f"{r['subject']}\n\n{r['body']}".strip()})
    return out


def _noise_diff(files: list[dict]) -> bytes:
    import difflib

    parts = []
    for f in files:
        before, after = f.get("before"), f.get("after")
        if f.get("skipped") or (before is None and after is None):
            continue
        path, old = f["path"], f.get("old_path") or f["path"]
        a = (before or "").splitlines(keepends=True)
        b = (after or "").splitlines(keepends=True)
        body = "".join(_terminated(difflib.unified_diff(a, b, f"a/{old}" if before is not None else "/dev/null",
                                                        f"b/{path}" if after is not None else "/dev/null", n=3)))
        if body:
            parts.append(f"diff --git a/{old} b/{path}\n{body}")
    return "".join(parts).encode("utf-8", "surrogateescape")


def _terminated(lines):
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


# --- mutations on a diff's lines ----------------------------------------------------------------

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
# Mutations after which the code Python runs is the same: the injected eval must still be reported.
PRESERVING = {"identity", "crlf", "lone-cr", "mixed-endings", "latin1-declared", "utf7-declared", "bom",
              "odd-name", "quoted-name", "plan-b", "rename-other", "delete-other", "long-line", "long-message",
              "secret", "concat", "formfeed"}


def _split(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def _join(lines: list[bytes]) -> bytes:
    return b"\n".join(lines) + b"\n"


def _sections(lines: list[bytes]) -> list[tuple[int, int]]:
    """(start, end) line ranges of each file section ('diff --git' or '---'/'+++' started)."""
    starts = [i for i, ln in enumerate(lines) if ln.startswith(b"diff --git ")]
    if not starts:
        starts = [i for i, ln in enumerate(lines) if ln.startswith(b"--- ") and i + 1 < len(lines)
                  and lines[i + 1].startswith(b"+++ ")]
    return [(s, starts[k + 1] if k + 1 < len(starts) else len(lines)) for k, s in enumerate(starts)]


def _hunks(lines: list[bytes]) -> list[int]:
    return [i for i, ln in enumerate(lines) if _HUNK.match(ln)]


def _content_lines(lines: list[bytes]) -> list[int]:
    """Indexes of '+' and ' ' lines inside hunks (not headers)."""
    out, left_old, left_new = [], 0, 0
    for i, ln in enumerate(lines):
        m = _HUNK.match(ln)
        if m:
            left_old = int(m.group(2) or 1) if m.group(2) != b"0" else 0
            left_new = int(m.group(4) or 1) if m.group(4) != b"0" else 0
            continue
        if left_old <= 0 and left_new <= 0:
            continue
        kind = ln[:1]
        if kind == b"+":
            out.append(i)
            left_new -= 1
        elif kind == b"-":
            left_old -= 1
        elif kind in (b" ", b""):
            out.append(i)
            left_old -= 1
            left_new -= 1
    return out


def _rewrite_hunk(line: bytes, d_old: int = 0, d_new: int = 0, new_start: bytes | None = None) -> bytes:
    m = _HUNK.match(line)
    o_start, o_len = m.group(1), int(m.group(2) or 1) if m.group(2) != b"0" else 0
    n_start, n_len = m.group(3), int(m.group(4) or 1) if m.group(4) != b"0" else 0
    return b"@@ -%s,%d +%s,%d @@%s" % (o_start, o_len + d_old, new_start or n_start, n_len + d_new, m.group(5))


def _owning_hunk(lines: list[bytes], i: int) -> int:
    while i >= 0 and not _HUNK.match(lines[i]):
        i -= 1
    return i


def m_identity(lines, rng):
    return lines


def m_crlf(lines, rng):
    idx = set(_content_lines(lines))
    return [ln + b"\r" if i in idx and not ln.endswith(b"\r") else ln for i, ln in enumerate(lines)]


def m_lone_cr(lines, rng):
    """Two consecutive '+' lines become one git line holding a lone CR (two lines for Python)."""
    adds = [i for i in _content_lines(lines) if lines[i][:1] == b"+" and i + 1 < len(lines)
            and lines[i + 1][:1] == b"+"]
    if not adds:
        return lines
    out = list(lines)
    for i in sorted(rng.sample(adds, min(len(adds), rng.randint(1, 4))), reverse=True):
        if out[i][:1] != b"+" or i + 1 >= len(out) or out[i + 1][:1] != b"+":
            continue
        h = _owning_hunk(out, i)
        out[i] = out[i] + b"\r" + out[i + 1][1:]
        del out[i + 1]
        out[h] = _rewrite_hunk(out[h], d_new=-1)
    return out


def m_mixed_endings(lines, rng):
    idx = _content_lines(lines)
    chosen = set(rng.sample(idx, len(idx) // 2)) if idx else set()
    return [ln + b"\r" if i in chosen else ln for i, ln in enumerate(lines)]


def m_not_utf8(lines, rng):
    idx = _content_lines(lines)
    out = list(lines)
    for i in rng.sample(idx, min(len(idx), 3)):
        out[i] = out[i] + bytes([rng.choice([0xE9, 0xFF, 0xC3, 0x80, 0xFE])])
    return out


def m_nul(lines, rng):
    idx = _content_lines(lines)
    out = list(lines)
    for i in rng.sample(idx, min(len(idx), 2)):
        out[i] = out[i] + b"\x00"
    return out


def m_odd_name(lines, rng):
    names = [b"sp ace/na me.py", b"\xc3\xbcnic\xc3\xb6de/\xe2\x80\xae.py", b"-rf.py", b"x" * 3000 + b".py",
             b"a;b|c&d$(e).py", b"new\xe2\x80\xa8line.py", b"dir/.hidden/.py"]
    return _rename_section(lines, rng, rng.choice(names))


def m_quoted_name(lines, rng):
    names = [b"tab\there.py", b'q"uote.py', b"back\\slash.py", b"caf\xe9.py", b"esc\x1b[2J.py", b"nl\nname.py"]
    return _rename_section(lines, rng, rng.choice(names))


def m_plan_b(lines, rng):
    return _rename_section(lines, rng, b"Plan b/ b/x b/" + rng.choice([b"a.py", b"b.js", b"c.txt"]))


def m_hostile_path(lines, rng):
    return _rename_section(lines, rng, rng.choice([b"../../etc/passwd", b"/etc/cron.d/x", b"a/../../x.py",
                                                   b"nul\x00byte.py", b""]))


def _quote(path: bytes) -> bytes:
    names = {9: b"\\t", 10: b"\\n", 34: b'\\"', 92: b"\\\\"}
    if not any(c < 32 or c in (34, 92, 127) or c >= 128 for c in path):
        return path
    out = bytearray(b'"')
    for c in path:
        out += names.get(c) or (b"\\%03o" % c if c < 32 or c >= 127 else bytes([c]))
    return bytes(out + b'"')


def _prefixed(prefix: bytes, path: bytes) -> bytes:
    q = _quote(path)
    return b'"' + prefix + q[1:] if q.startswith(b'"') else prefix + q


def _rename_section(lines, rng, new: bytes):
    secs = _sections(lines)
    if not secs:
        return lines
    s, e = rng.choice(secs)
    out = list(lines)
    for i in range(s, e):
        ln = out[i]
        if ln.startswith(b"diff --git "):
            out[i] = b"diff --git " + _prefixed(b"a/", new) + b" " + _prefixed(b"b/", new)
        elif ln.startswith(b"--- ") and not ln.startswith(b"--- /dev/null"):
            out[i] = b"--- " + _prefixed(b"a/", new)
        elif ln.startswith(b"+++ ") and not ln.startswith(b"+++ /dev/null"):
            out[i] = b"+++ " + _prefixed(b"b/", new)
        elif ln.startswith((b"rename from ", b"rename to ", b"copy from ", b"copy to ")):
            key = ln.split(b" ", 2)
            out[i] = key[0] + b" " + key[1] + b" " + _quote(new)
        elif _HUNK.match(ln):
            break
    return out


def m_huge_numbers(lines, rng):
    hunks = _hunks(lines)
    if not hunks:
        return lines
    out = list(lines)
    i = rng.choice(hunks)
    big = rng.choice([b"99999999", b"999999999999", b"9" * 40, b"4294967296", b"2147483648", b"999999"])
    out[i] = _rewrite_hunk(out[i], new_start=big) if rng.random() < 0.6 else \
        out[i].replace(b"+", b"+" + big[:1], 1)
    return out


def m_truncate(lines, rng):
    data = _join(lines)
    cut = rng.randint(1, max(1, len(data) - 1))
    return data[:cut].split(b"\n")


def m_junk_after_hunk(lines, rng):
    hunks = _hunks(lines)
    if not hunks:
        return lines
    out = list(lines)
    i = rng.choice(hunks)
    j = i + 1
    while j < len(out) and out[j][:1] in (b"+", b"-", b" ", b"\\"):
        j += 1
    out.insert(j, rng.choice([b"+eval(data)", b"garbage", b" context?", b"-removed", b"@@ broken @@"]))
    return out


def m_duplicate_hunk(lines, rng):
    hunks = _hunks(lines)
    if not hunks:
        return lines
    i = rng.choice(hunks)
    j = i + 1
    while j < len(lines) and lines[j][:1] in (b"+", b"-", b" ", b"\\"):
        j += 1
    return lines[:j] + lines[i:j] + lines[j:]


def m_delete_other(lines, rng):
    secs = _sections(lines)
    if not secs:
        return lines
    s, e = rng.choice(secs)
    out = list(lines[:s])
    body = [ln for ln in lines[s:e] if ln[:1] in (b"-", b" ") and not ln.startswith(b"--- ")]
    name = b"gone_%d.py" % rng.randint(0, 999)
    out += [b"diff --git a/" + name + b" b/" + name, b"deleted file mode 100644", b"--- a/" + name, b"+++ /dev/null",
            b"@@ -1,%d +0,0 @@" % len(body)] if body else []
    out += [b"-" + ln[1:] for ln in body]
    return out + lines[e:]


def m_rename_other(lines, rng):
    secs = _sections(lines)
    if not secs:
        return lines
    s, e = rng.choice(secs)
    out = list(lines)
    if out[s].startswith(b"diff --git "):
        out[s + 1:s + 1] = [b"similarity index 90%", b"rename from old name/x.py", b"rename to new b/x.py"]
    return out


def m_binary_section(lines, rng):
    name = rng.choice([b"img.png", b"Plan b/logo.png", b"caf\xe9.bin"])
    q = _quote(name)
    extra = [b"diff --git " + _prefixed(b"a/", name) + b" " + _prefixed(b"b/", name), b"new file mode 100644"]
    if rng.random() < 0.5:
        extra += [b"Binary files /dev/null and " + _prefixed(b"b/", name) + b" differ"]
    else:
        extra += [b"index 0000000..1111111", b"GIT binary patch", b"literal 3", b"KcmZ?wbN>JW00IC2", b"",
                  b"literal 0", b"HcmV?d00001", b""]
    _ = q
    return lines + extra


def m_long_line(lines, rng):
    idx = [i for i in _content_lines(lines) if lines[i][:1] == b"+"]
    if not idx:
        return lines
    unit = rng.choice([b'\\"', b"a:", b"://", b"a=", b"all tests pass ", b"'", b"`", b"/*", b"#", b" ", b"\t", b"a.b",
                       b"${", b"x" * 7, b"password=", b"--", b"eval(", b"\\", b"http://a.b/"])
    size = rng.choice([20_000, 60_000, 200_000])
    out = list(lines)
    i = rng.choice(idx)
    out[i] = out[i] + b"  # " + (unit * (size // len(unit) + 1))[:size]
    return out


def m_formfeed(lines, rng):
    idx = [i for i in _content_lines(lines) if lines[i][:1] == b"+" and len(lines[i]) > 1 and lines[i][1:2] not in
           (b" ", b"\t")]
    out = list(lines)
    for i in rng.sample(idx, min(len(idx), 3)):
        out[i] = b"+\x0c" + out[i][1:]
    return out


def m_byte_flips(lines, rng):
    data = bytearray(_join(lines))
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data).split(b"\n")


MUTATIONS = {
    "identity": m_identity, "crlf": m_crlf, "lone-cr": m_lone_cr, "mixed-endings": m_mixed_endings,
    "not-utf8": m_not_utf8, "nul": m_nul, "odd-name": m_odd_name, "quoted-name": m_quoted_name, "plan-b": m_plan_b,
    "hostile-path": m_hostile_path, "huge-numbers": m_huge_numbers, "truncate": m_truncate,
    "junk-after-hunk": m_junk_after_hunk, "duplicate-hunk": m_duplicate_hunk, "delete-other": m_delete_other,
    "rename-other": m_rename_other, "binary": m_binary_section, "long-line": m_long_line, "formfeed": m_formfeed,
    "byte-flips": m_byte_flips,
}


# --- the injected file: mutations of its own ------------------------------------------------------

def injected_section(rng, how: str) -> bytes:
    """A new Python file with eval(data), written as `how` says (each a form Python runs unchanged)."""
    text = INJECTED
    name = b"fuzz_injected.py"
    if how == "crlf":
        content = text.replace("\n", "\r\n").encode()
    elif how == "lone-cr":
        content = text.replace("\n", "\r").encode() + b"\n"
    elif how == "mixed-endings":
        content = "".join(ln + rng.choice(["\n", "\r\n", "\r"]) for ln in text.split("\n")[:-1]).encode() + b"\n"
    elif how == "latin1-declared":
        content = ("# -*- coding: latin-1 -*-\n# caf\u00e9\n" + text).encode("latin-1")
    elif how == "utf7-declared":
        content = b"# coding: utf-7\n" + text.encode("utf-7")
    elif how == "bom":
        content = b"\xef\xbb\xbf" + text.encode()
    elif how == "formfeed":
        content = text.replace("\ndef ", "\n\x0cdef ").encode()
    elif how == "odd-name":
        name, content = rng.choice([b"tab\tinjected.py", b"caf\xe9/injected.py", b"Plan b/b/injected.py",
                                    b"line\nbreak.py"]), text.encode()
    else:
        content = text.encode()
    lines = content.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    head = b"diff --git " + _prefixed(b"a/", name) + b" " + _prefixed(b"b/", name) + b"\nnew file mode 100644\n" \
        b"--- /dev/null\n+++ " + _prefixed(b"b/", name) + b"\n@@ -0,0 +1,%d @@\n" % len(lines)
    return head + b"".join(b"+" + ln + b"\n" for ln in lines)


# --- cases --------------------------------------------------------------------------------------

def make_whole_file_case(corpus: list[dict], rng, index: int) -> dict:
    """A large new file with its content (as --all-files or a staged file gives it): real source and thousands
    of the constructs of CONSTRUCTS, in a random mix; a message of claims to judge against it."""
    parts, size = [], rng.choice([200_000, 1_000_000, 3_000_000])
    got, i = 0, 0
    while got < size:
        if rng.random() < 0.3:
            real = rng.choice(corpus)["diff"]
            piece = b"".join(ln[1:] + b"\n" for ln in real.split(b"\n") if ln[:1] == b"+" and not ln.startswith(b"+++"))
            piece = piece.decode("utf-8", "replace")
        else:
            piece = rng.choice(CONSTRUCTS).replace("{i}", str(i))
        parts.append(piece)
        got += len(piece)
        i += 1
    text = "".join(parts)
    message = "Rewrite the handlers. " + rng.choice(["All tests pass. ", "Done. ", "No side effects. "]) * \
        rng.randint(10, 2000) + f"\n\nStaging {PROSE_LINE}."
    path = rng.choice(["app/handlers.py", "src/big_module.py", "tab\there.py", "line\nbreak.py"])
    # held as the bytes git would give (--all-files reads blobs): as a str, one emoji among the real source made the
    # case itself 4 bytes a character, 11.5 MB of a 2.9 MB file counted in the child's peak against the gate
    return {"index": index, "whole": (path, text.encode("utf-8", "surrogateescape")), "data": b"", "message": message,
            "mutations": ["whole-file"],
            "inject": None, "expect_eval": True, "expect_secret": True}


def make_case(corpus: list[dict], index: int, seed: int) -> dict:
    rng = random.Random(seed * 1_000_003 + index)
    kind = rng.random()
    if kind < 0.02:
        return make_whole_file_case(corpus, rng, index)
    if kind < 0.05:
        return fuzz_hostile.make_fix_case(rng, index)
    if kind < 0.09:
        return fuzz_hostile.make_config_case(rng, index)
    base = rng.choice(corpus)
    data, message = base["diff"], base["message"]
    names = []
    if rng.random() < 0.05:  # a larger input: several real diffs end to end
        extra = rng.sample(corpus, rng.randint(5, 40))
        data = data + b"".join(e["diff"] for e in extra)
        names.append("concat")
    lines = _split(data)
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        name = rng.choice(list(MUTATIONS))
        lines = MUTATIONS[name](lines, rng)
        names.append(name)
    data = _join(lines)
    inject = rng.random() < 0.7
    how = None
    if inject:
        how = rng.choice(["identity", "crlf", "lone-cr", "mixed-endings", "latin1-declared", "utf7-declared", "bom",
                          "formfeed", "odd-name"])
        data = data + injected_section(rng, how)
    secret = rng.random() < 0.25
    if secret:
        data = data + injected_secret_section()
        message = f"{message}\n\nAll tests pass. Staging password is {PASSWORD}, token {TOKEN}, {PROSE_LINE}."
        names.append("secret")
    if rng.random() < 0.05:
        message = message + " " + rng.choice(["all tests pass ", "fixed ", "`", "~", "not "]) * rng.randint(2000, 8000)
        names.append("long-message")
    # The eval must be found when the diff is still what git would write: every mutation preserving.
    expect_hidden_check = inject and all(n in PRESERVING for n in names)
    return {"index": index, "data": data, "message": message, "mutations": names, "inject": how,
            "expect_eval": expect_hidden_check, "expect_secret": secret}


def injected_secret_section() -> bytes:
    lines = [f'API_TOKEN = "{TOKEN}"', f'DB_PASSWORD = "{PASSWORD}"  # TODO: rotate',
             f"# password is {PASSWORD}", f'ADMIN_PASSWORD = "{PASSWORD}"  # noqa', f"# {PROSE_LINE}"]
    return (b"diff --git a/settings_fuzz.py b/settings_fuzz.py\nnew file mode 100644\n--- /dev/null\n"
            b"+++ b/settings_fuzz.py\n@@ -0,0 +1,%d @@\n" % len(lines)
            + b"".join(b"+" + ln.encode() + b"\n" for ln in lines))


# --- running one case in a forked child ---------------------------------------------------------

def child_run(case: dict) -> dict:
    from sentinel import engine
    from sentinel.config import Config
    from sentinel.diffparse import decode_diff, parse_diff
    from sentinel.errors import SentinelError
    from sentinel.report import render
    from sentinel.models import ChangeSet
    from sentinel.sources import Change

    if case.get("kind") == "fix":
        return fuzz_hostile.run_fix_case(case)
    if case.get("kind") == "config":
        return fuzz_hostile.run_config_case(case)
    out: dict = {"outcome": None, "internal": None, "crashes": {}, "leaks": [], "hidden": False, "silenced": False}
    try:
        if case.get("whole"):  # a whole file with its content, as --all-files gives it
            path, data = case["whole"]
            cs = ChangeSet(files=whole_file(path, data), source="fuzz")
            change = Change(cs, content_rev="", preread={path: data})
        else:
            cs = parse_diff(decode_diff(case["data"]), source="fuzz")
            change = Change(cs, content_rev=None, preread=_stand_ins(cs))
        verdict = engine.run(change, Config(), engine.RunOptions(message=case["message"]))
    except SentinelError as exc:
        out["outcome"] = "refused"
        out["reason"] = str(exc)[:300]
        return out
    except Exception as exc:  # an internal error: what this benchmark counts
        out["internal"] = f"{type(exc).__name__}: {exc}"[:500]
        return out
    if verdict.errored:
        out["internal"] = "check crashed: " + "; ".join(f"{c.check}: {c.reason}" for c in verdict.checks
                                                        if c.status.value == "error")[:500]
    out["outcome"] = "passed" if verdict.passed else "failed"
    rules = {f.rule for f in verdict.findings}
    if case["expect_eval"] and "SEN303" not in rules and verdict.passed:
        out["hidden"] = True
    if _noqa_credential_expected(case, cs) and not any(f.rule == "SEN304" and _noqa_line(cs, f)
                                                       for f in verdict.findings):
        out["silenced"] = True  # the credential behind a bare `# noqa` was not reported
    for fmt in FORMATS:
        _render_one(out, verdict, fmt)
    # the gate's own peak (check and report): the fix planner's libcst trees come after and are counted apart
    out["gate_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    fixes = None
    try:  # the fixes, as --diff-fixes prints them (redacted line by line) and SARIF carries them
        from sentinel.fix import export, planner
        from sentinel.redact import redact

        plan = planner.plan(change, verdict.findings, Config(), unsafe=True, require_worktree=False)
        shown = "".join(redact(ln) for ln in "".join(planner.unified_diff(fp) for fp in plan.changed_files)
                        .splitlines(keepends=True))
        fixes = export.sarif_fixes(plan)
        if [s for s in SECRETS if s in shown]:
            out["leaks"].append("fix-diff")
    except Exception as exc:
        out["crashes"]["fix-plan"] = f"{type(exc).__name__}: {exc}"[:300]
    if fixes:
        _render_one(out, verdict, "sarif", fixes)
    return out


def _render_one(out: dict, verdict, fmt: str, fixes=None) -> None:
    from sentinel.report import render

    try:
        text = render(verdict, fmt, fixes=fixes) if fixes else render(verdict, fmt)
        text.encode("utf-8")
        if fmt in ("json", "sarif"):
            json.loads(text)
        elif "\x1b" in text:
            raise ValueError("raw terminal escape in the output")
        if [s for s in SECRETS if s in text] and fmt not in out["leaks"]:
            out["leaks"].append(fmt)
    except Exception as exc:
        out["crashes"][fmt] = f"{type(exc).__name__}: {exc}"[:300]


def _noqa_credential_expected(case: dict, cs) -> bool:
    """Must a credential line ending in a bare `# noqa` be reported? Where SEN304 counts a literal under a
    secret name at all: product code and CI files (elsewhere — generated files, tests, docs — only token
    formats count, with or without the comment)."""
    from sentinel import roles

    if not case.get("expect_secret"):
        return False
    return any(fc.role in (roles.PRODUCT, roles.CI) and any(line.rstrip().endswith("# noqa") for line in
                                                           fc.added.values()) for fc in cs.files)


def whole_file(path: str, data: bytes):
    from sentinel.sources import whole_files_from

    return whole_files_from({path: data})


def _stand_ins(cs) -> dict[str, bytes]:
    """What a diff shows of each file, as the content the fix planner reads (a fuzz case has no working tree)."""
    from sentinel.checks.base import stand_in_text

    return {fc.path: stand_in_text(fc).encode("utf-8", "surrogateescape") for fc in cs.files
            if not fc.is_binary and fc.status.value != "deleted"}


def _noqa_line(cs, finding) -> bool:
    fc = next((f for f in cs.files if f.path == finding.path), None)
    line = fc.added.get(finding.line, "") if fc is not None and finding.line else ""
    return line.rstrip().endswith("# noqa")


def run_forked(case: dict, timeout: float) -> dict:
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: one case, its result on the pipe, then gone
        os.close(r)
        try:
            result = child_run(case)
        except BaseException as exc:
            result = {"internal": f"{type(exc).__name__}: {exc}"[:500], "crashes": {}, "leaks": []}
        payload = json.dumps(result).encode()
        with os.fdopen(w, "wb") as fh:
            fh.write(payload)
        os._exit(0)
    os.close(w)
    chunks, timed_out = [], False
    with os.fdopen(r, "rb") as fh:
        while True:
            left = timeout - (time.perf_counter() - t0)
            ready, _, _ = select.select([fh], [], [], max(left, 0))
            if not ready:
                timed_out = True
                os.kill(pid, signal.SIGKILL)
                break
            chunk = os.read(fh.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - t0
    try:
        result = json.loads(b"".join(chunks)) if chunks else {}
    except ValueError:
        result = {}
    if timed_out:
        result = {"internal": f"timed out after {timeout:.0f} s", "crashes": {}, "leaks": []}
    elif not result:
        result = {"internal": f"child died (status {status})", "crashes": {}, "leaks": []}
    result["seconds"] = seconds
    result["peak_rss"] = usage.ru_maxrss * 1024
    return result


def worker(corpus, indexes, seed, timeout, conn) -> None:
    with tempfile.TemporaryDirectory(prefix="sentinel-fuzz-") as empty:
        os.chdir(empty)  # nothing to read around the cases
        for i in indexes:
            case = make_case(corpus, i, seed)
            res = run_forked(case, timeout)
            size = len(case["data"]) + len(case["whole"][1]) if case.get("whole") else len(case["data"])
            size += len(case.get("body", "")) + len(case.get("config", b""))
            res.update(index=i, mutations=case["mutations"], inject=case["inject"], input_bytes=size +
                       len(case["message"].encode("utf-8", "surrogateescape")))
            conn.send(res)
        conn.send(None)
        os.chdir("/")  # leave the folder before it is removed


def baseline_rss() -> int:
    """Peak RSS of a forked child that does nothing: what every case pays before its own work."""
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    _, _, usage = os.wait4(pid, 0)
    return usage.ru_maxrss * 1024


# --- the console script on a sample ---------------------------------------------------------------

def run_cli_sample(corpus, count: int, seed: int, script: str) -> dict:
    crashes = {fmt: 0 for fmt in FORMATS}
    internal, refused, details = 0, 0, []
    work = Path(tempfile.mkdtemp(prefix="sentinel-fuzz-cli-"))
    for k in range(count):
        case = make_case(corpus, 10_000_000 + k, seed)
        if case.get("whole") or case.get("kind"):
            continue  # whole files, repositories and configs: in-process only (tests/ run them as scripts)
        diff = work / "case.diff"
        diff.write_bytes(case["data"])
        msg = work / "msg.txt"
        msg.write_text(case["message"], encoding="utf-8", errors="surrogateescape")
        for fmt in FORMATS:
            proc = subprocess.run([script, "check", "--diff", str(diff), "--format", fmt, "--message", f"@{msg}",
                                   "--no-memory"], cwd=work, capture_output=True, timeout=120)
            err = proc.stderr.decode("utf-8", "replace")
            if "Traceback" in err or "internal error" in err:
                internal += 1
                crashes[fmt] += 1
                details.append((case["mutations"], fmt, err.strip().splitlines()[-1][:200]))
                continue
            if proc.returncode == 2:
                refused += 1
                continue
            try:
                text = proc.stdout.decode("utf-8")
                if fmt in ("json", "sarif"):
                    json.loads(text)
                if any(s in text for s in SECRETS) or "\x1b" in text:
                    raise ValueError("secret or escape in the output")
            except ValueError as exc:
                crashes[fmt] += 1
                details.append((case["mutations"], fmt, str(exc)[:200]))
    shutil.rmtree(work, ignore_errors=True)
    return {"runs": count * len(FORMATS), "internal": internal, "crashes": crashes, "refused": refused,
            "details": details[:20]}


# --- main ---------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=2, help="processes running cases (default 2)")
    ap.add_argument("--cli-cases", type=int, default=300, help="cases also run through the console script")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--json", metavar="FILE", help="write every case's result here")
    args = ap.parse_args()
    shared = Path(args.shared)
    if not (shared / "corpus" / "commits.jsonl").exists():
        print(f"skipped: the corpus is not at {shared / 'corpus'} (see its README)")
        return 0
    import multiprocessing
    import multiprocessing.connection

    import sentinel.engine  # noqa: F401 - imported once, before the workers fork
    import sentinel.report.jsonfmt  # noqa: F401
    import sentinel.report.markdown  # noqa: F401
    import sentinel.report.sarif  # noqa: F401

    corpus = load_corpus(shared)
    base_rss = baseline_rss()
    print(f"corpus: {len(corpus)} real diffs; {args.cases} cases on {args.jobs} process(es); "
          f"baseline child RSS {base_rss / MB:.0f} MB", flush=True)
    ctx = multiprocessing.get_context("fork")
    pipes, procs = [], []
    for j in range(args.jobs):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=worker, args=(corpus, range(j, args.cases, args.jobs), args.seed, args.timeout, child))
        p.start()
        pipes.append(parent)
        procs.append(p)
    results, t0, open_pipes = [], time.time(), list(pipes)
    while open_pipes:
        for conn in multiprocessing.connection.wait(open_pipes):
            item = conn.recv()
            if item is None:
                open_pipes.remove(conn)
                continue
            results.append(item)
            if len(results) % 500 == 0:
                print(f"  {len(results)} cases, {time.time() - t0:.0f} s", flush=True)
    for p in procs:
        p.join()

    internal = [r for r in results if r.get("internal")]
    crashes = {fmt: [r for r in results if fmt in r.get("crashes", {})] for fmt in CRASH_KINDS}
    leaks = [r for r in results if r.get("leaks")]
    hidden = [r for r in results if r.get("hidden")]
    silenced = [r for r in results if r.get("silenced")]
    slow = [r for r in results if r["seconds"] > SLOW_SECONDS * max(1.0, r["input_bytes"] / MB)]
    whole = [r for r in results if "whole-file" in r["mutations"]]
    fix_cases = [r for r in results if "fix-repo" in r["mutations"]]
    escapes = [r for r in fix_cases if r.get("escapes")]
    missed = [r for r in fix_cases if r.get("missed")]
    configs = [r for r in results if "config" in r["mutations"]]
    lax = [r for r in configs if r.get("accepted_silently")]
    over = [r for r in results if r.get("gate_peak_rss", r["peak_rss"]) > 5 * r["input_bytes"] + 100 * MB]
    refused = sum(1 for r in results if r.get("outcome") == "refused")
    big = [r for r in results if r["input_bytes"] >= 1 * MB]
    gate_peak = {id(r): r.get("gate_peak_rss", r["peak_rss"]) for r in results}
    ratio = max(((gate_peak[id(r)] - base_rss) / r["input_bytes"] for r in big), default=None)
    worst = max(results, key=lambda r: gate_peak[id(r)])
    fix_worst = max(results, key=lambda r: r["peak_rss"])
    print()
    print(f"cases: {len(results)} ({refused} refused with a clear error, exit 2), {time.time() - t0:.0f} s")
    print(f"internal errors: {len(internal)}")
    print("crashes per format: " + ", ".join(f"{fmt} {len(v)}" for fmt, v in crashes.items()))
    print(f"secrets in an output: {len(leaks)}")
    print(f"known-bad line hidden (exit 0 without SEN303): {len(hidden)}")
    print(f"secret behind a bare noqa not reported: {len(silenced)}")
    if whole:
        rate = max(r["seconds"] / (r["input_bytes"] / MB) for r in whole)
        print(f"large whole files: {len(whole)} (up to {max(r['input_bytes'] for r in whole) / MB:.1f} MB), "
              f"slowest {rate:.1f} s a MB")
    if fix_cases:
        print(f"hostile repositories fixed: {len(fix_cases)}; fixer escapes (.git, outside the tree, a link, a "
              f"temporary file left): {len(escapes)}; plain files not fixed: {len(missed)}")
    if configs:
        print(f"config files: {len(configs)} ({sum(r.get('outcome') == 'refused' for r in configs)} refused, "
              f"exit 2); wrong shapes accepted silently: {len(lax)}")
    print(f"runs over {SLOW_SECONDS:.0f} s: {len(slow)} (slowest {max(r['seconds'] for r in results):.1f} s)")
    print(f"peak RSS of the gate and its reports over 5 x input + 100 MB: {len(over)} (largest peak "
          f"{gate_peak[id(worst)] / MB:.0f} MB for {worst['input_bytes'] / MB:.2f} MB of input; with the fix "
          f"planner {fix_worst['peak_rss'] / MB:.0f} MB for {fix_worst['input_bytes'] / MB:.2f} MB)")
    if ratio is not None:
        print(f"peak RSS above the baseline per input byte, inputs of 1 MB or more ({len(big)}): max {ratio:.1f}x")
    for title, rows in (("internal", internal), ("slow", slow), ("hidden", hidden), ("silenced", silenced),
                        ("escape", escapes), ("missed", missed), ("lax", lax), ("over", over)):
        for r in rows[:8]:
            print(f"  {title}: case {r['index']} {r['mutations']} inject={r['inject']} {r['seconds']:.1f}s "
                  f"{r['peak_rss'] / MB:.0f}MB {r.get('internal') or ''}{r.get('escapes') or ''}"
                  f"{r.get('why_missed') or ''}{r.get('config_text') or ''}")
    for fmt, rows in crashes.items():
        for r in rows[:3]:
            print(f"  crash {fmt}: case {r['index']} {r['mutations']} {r['crashes'][fmt]}")
    cli = None
    if args.cli_cases:
        script = shutil.which("sentinel") or str(Path(sys.executable).with_name("sentinel"))
        cli = run_cli_sample(corpus, args.cli_cases, args.seed, script)
        print(f"console script: {cli['runs']} runs ({args.cli_cases} cases x {len(FORMATS)} formats), "
              f"internal errors {cli['internal']}, crashes per format: "
              + ", ".join(f"{k} {v}" for k, v in cli["crashes"].items()) + f", refused {cli['refused']}")
        for d in cli["details"][:8]:
            print(f"  cli: {d}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"results": results, "cli": cli, "baseline_rss": base_rss}, fh)
    cli_bad = cli and (cli["internal"] or any(cli["crashes"].values()))
    bad = internal or any(crashes.values()) or leaks or hidden or silenced or escapes or lax or slow or over or cli_bad
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
