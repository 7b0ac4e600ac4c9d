"""The cheaper paths a whole-tree run takes (first adoption: hundreds of thousands of added lines) find exactly
what the plain paths find. Their speed is measured in benchmarks/bench_check.py, not asserted here."""

from __future__ import annotations

import os
import random

import pytest

from sentinel.checks import chaos
from sentinel.checks.base import FileContext
from sentinel.config import Config
from sentinel.models import FileChange, FileStatus, FilterMode

# Fragments of every part of the secret-line gate (token prefixes, a password in a URL, an AWS secret name),
# near misses of each, and line breaks: random lines made of them hit and miss every part, alone and together.
_FRAGMENTS = ["AKIA", "ASIA", "ghp_", "gh_", "github_pat_", "xoxb-", "xox-", "AIza", "k_live_", "sk-ant-", "T3BlbkFJ",
              "PRIVATE KEY", "glpat-", "gl-", "npm_", "pypi-AgEI", "hf_", "SG.", "hooks.slack", "shpat_", "dop_v1_",
              "AGE-SECRET", "eyJ", "://", "://user:pw@", "://u@", "://a:b", "s3://x:y@h", "aws", "AWS", "Aws", "secret",
              "SECRET", "SeCrEt", "aws_secret", "AWS_SECRET_ACCESS_KEY", "aws" + "x" * 45 + "secret", "İ", "ß", " ",
              "x", "=", "'", "\n", "\n", "\n", "\r\n", "\t", "#", "@", ":", "/"]


def _ctx(text: str, status: FileStatus = FileStatus.ADDED, mode: FilterMode = FilterMode.ADDED) -> FileContext:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    fc = FileChange(path="app.py", old_path=None, status=status, language="python",
                    added={i: ln for i, ln in enumerate(lines, 1) if status is FileStatus.ADDED or i % 3 == 0})
    return FileContext(fc, Config(), mode, text)


# The views a file's scans must agree in: a new file, a modified file's added lines, a modified file whole.
_VIEWS = ((FileStatus.ADDED, FilterMode.ADDED), (FileStatus.MODIFIED, FilterMode.ADDED),
          (FileStatus.MODIFIED, FilterMode.FILE))


def _random_text(seed: int, pieces: list[str], most: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(pieces) for _ in range(rng.randrange(1, most)))


def _one_alternation(ctx: FileContext) -> list[int]:
    return list(chaos._matching_lines(ctx, chaos._SECRET_LINE_GATE))


@pytest.mark.parametrize("seed", range(40))
def test_secret_lines_scanned_by_part_are_the_lines_of_the_one_alternation(seed):
    text = _random_text(seed, _FRAGMENTS, 400)
    for status, mode in _VIEWS:
        ctx = _ctx(text, status, mode)
        assert chaos._secret_lines(ctx) == _one_alternation(ctx), (status, mode, text)


def test_each_part_of_the_secret_gate_is_found_alone_in_a_whole_file():
    filler = "x = 1\n" * 50
    for line, expected in [("key = 'AKIA'\n", True), ("url = 'pg://u:pw@h/db'\n", True),
                           ("AWS_SECRET_ACCESS_KEY = v\n", True), ("aws = 1; secret = 2\n", True),
                           ("aws = 1\n" + "secret = 2\n", False), ("url = 'pg://host/db'\n", False)]:
        ctx = _ctx(filler + line + filler)
        assert chaos._secret_lines(ctx) == ([51] if expected else []), line
        assert chaos._secret_lines(ctx) == _one_alternation(ctx)


# --- inline suppressions of a change analysed on workers ------------------------------------------------------

def _suppressions_diff(n: int) -> str:
    from tests.conftest import new_file_diff

    parts = []
    for i in range(n):
        if i % 5 == 0:  # suppressed on its own line
            body = "def f(p):\n    try:\n        return g(p)\n    except:  # noqa: E722 - best effort\n        pass\n"
        elif i % 5 == 1:  # not suppressed
            body = "def f(p):\n    try:\n        return g(p)\n    except:\n        pass\n"
        elif i % 5 == 2:  # the comment is about another rule
            body = "def f(p):\n    try:\n        return g(p)\n    except:  # sentinel: ignore[SEN105]\n        pass\n"
        else:
            body = '"""Doc."""\n\n\ndef f(p):\n    return p\n'
        parts.append(new_file_diff(f"pkg/mod_{i:03}.py", body))
    return "".join(parts)


def test_suppressions_of_findings_made_on_workers_are_read_without_lexing_again():
    from sentinel import engine, parallel
    from sentinel.checks import CHECK_MODULES, load_check
    from sentinel.diffparse import parse_diff
    from sentinel.lexer import lex
    from sentinel.sources import Change

    if not parallel.can_fork():
        pytest.skip("no fork on this platform: analysis is always serial here")
    text = _suppressions_diff(40)

    def verdict(jobs):
        return engine.run(Change(parse_diff(text), content_rev=None), Config(), engine.RunOptions(jobs=jobs))

    one, three = verdict(1), verdict(3)
    assert [(f.rule, f.path, f.line) for f in one.findings] == [(f.rule, f.path, f.line) for f in three.findings]
    assert one.suppressed == three.suppressed == 8
    assert {f.path for f in three.findings if f.rule == "SEN301"} == \
        {f"pkg/mod_{i:03}.py" for i in range(40) if i % 5 in (1, 2)}

    contexts, _ = engine.build_contexts(Change(parse_diff(text), content_rev=None), Config(), Config().filter_mode)
    modules = {name: load_check(name) for name in CHECK_MODULES if hasattr(load_check(name), "check_file")}
    phases, _ = parallel.analyse_parallel(modules, contexts, 3)
    with_findings = {f.path for phase in phases.values() for f in phase.findings}
    assert with_findings and all(ctx._lexed is None for ctx in contexts)  # nothing was lexed here
    for ctx in contexts:
        kept = ctx._comment_lines
        assert (kept is not None) == (ctx.path in with_findings), ctx.path
        if kept is not None:
            lexed = lex(ctx.text, ctx.language)
            assert (kept.comments, kept.string_inner) == (lexed.comments, lexed.string_inner)
            assert ctx.comment_lines is kept
    ctx = next(c for c in contexts if c._comment_lines is not None)
    ctx.lexed  # once the full lexer output exists, it is what suppressions read
    assert ctx.comment_lines is ctx._lexed


def test_a_large_serial_run_keeps_the_comment_lines_of_files_with_findings():
    from sentinel import parallel
    from sentinel.checks import chaos

    ctxs = [_ctx("try:\n    x()\nexcept:  # noqa\n    pass\n"), _ctx("x = 1  # a comment\n")]
    parallel.analyse({"chaos": chaos}, ctxs, portable=True)
    assert ctxs[0]._lexed is None and ctxs[0]._comment_lines.comments == {3: "# noqa"}
    assert ctxs[1]._comment_lines is None


# --- the diff parser's run of added lines ---------------------------------------------------------------------

def _line_by_line(self, first, lines):
    """What the parser did before it took a run of added lines at once."""
    self._hunk_line(first)


_LINE_KINDS = ["+x", "+x", "+x", "+", "+y\r", "+\r", " c", "-r", "\\ No newline at end of file", "+\x1c", "+é", "z"]


def _random_diff(rng: random.Random) -> str:
    out = []
    for i in range(rng.randrange(1, 5)):
        n = rng.randrange(1, 12)
        out.append(f"diff --git a/f{i}.py b/f{i}.py\nnew file mode 100644\n--- /dev/null\n+++ b/f{i}.py\n"
                   f"@@ -0,0 +1,{n} @@\n")
        count = n + rng.choice([0, 0, 0, 0, -1, 1, 2])  # as announced, or a line short or too many
        for _ in range(max(0, count)):
            out.append((rng.choice(_LINE_KINDS) if rng.random() < 0.08 else f"+line {rng.random()}") + "\n")
        if rng.random() < 0.3:
            out.append("\\ No newline at end of file\n")
    return "".join(out)


def _parse_or_error(text: str):
    from sentinel.diffparse import parse_diff
    from sentinel.errors import InputError

    try:
        files = parse_diff(text).files
        return repr(files), [sorted(f.crlf_lines) for f in files]
    except InputError as exc:
        return str(exc)


def _as(form: str, text: str, rng: random.Random):
    """The diff as parse_diff is given it: text, the bytes of a range's diff, or git's output in blocks."""
    from sentinel.diffparse import ChunkLines

    if form == "text":
        return text
    data = text.encode("utf-8", "surrogateescape")
    return data if form == "bytes" else ChunkLines(iter(_blocks(data, rng)))


@pytest.mark.parametrize("form", ["text", "bytes", "blocks"])
@pytest.mark.parametrize("seed", range(30))
def test_a_run_of_added_lines_parses_as_it_does_line_by_line(seed, form, monkeypatch):
    # Each input form says whether a "\r" can be in its lines (a run skips its scan for CRLF when none can).
    from sentinel.diffparse import _Parser

    rng = random.Random(seed)
    diffs = [_random_diff(rng) for _ in range(40)]
    fast = [_parse_or_error(_as(form, d, rng)) for d in diffs]
    monkeypatch.setattr("sentinel.diffparse._RUN", 3)  # a hunk taken in several runs
    assert [_parse_or_error(_as(form, d, rng)) for d in diffs] == fast
    monkeypatch.setattr(_Parser, "_added_run", _line_by_line)
    assert fast == [_parse_or_error(_as(form, d, rng)) for d in diffs]
    assert any(isinstance(r, tuple) for r in fast) and any(isinstance(r, str) for r in fast)


@pytest.mark.parametrize("form", ["text", "bytes", "blocks"])
def test_crlf_lines_after_a_long_stretch_without_any_are_kept(form, monkeypatch):
    from sentinel.diffparse import _Parser

    lf = "".join(f"+line {i}\n" for i in range(3000))
    text = (f"diff --git a/a.py b/a.py\nnew file mode 100644\n--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,3000 @@\n{lf}"
            "diff --git a/b.py b/b.py\nnew file mode 100644\n--- /dev/null\n+++ b/b.py\n@@ -0,0 +1,3 @@\n"
            "+x = 1\r\n+y = 2\r\n+z = 3\n")
    fast = _parse_or_error(_as(form, text, random.Random(1)))
    assert fast[1] == [[], [1, 2]]
    monkeypatch.setattr(_Parser, "_added_run", _line_by_line)
    assert _parse_or_error(_as(form, text, random.Random(1))) == fast


def test_a_run_of_added_lines_keeps_crlf_and_the_last_line_without_newline():
    from sentinel.diffparse import parse_diff

    fc = parse_diff("--- /dev/null\n+++ b/a.py\n@@ -0,0 +1,3 @@\n+a\r\n+b\n+c\r\n\\ No newline at end of file\n").files[0]
    assert fc.added == {1: "a", 2: "b", 3: "c\r"} and fc.crlf_lines == {1}


@pytest.mark.parametrize("seed", range(10))
def test_surrogates_are_found_in_all_lines_at_once_as_line_by_line(seed):
    from sentinel.diffparse import _has_surrogates

    def line_by_line(lines):
        for value in lines.values():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
        return False

    rng = random.Random(seed)
    pieces = ["a", "é", "\U0001f600", "\udcff", "\ud83d", "\ude00", "\ud83d\ude00", " ", "\r"]
    for _ in range(200):
        lines = {i: "".join(rng.choice(pieces[:3] if rng.random() < 0.7 else pieces) for _ in range(rng.randrange(4)))
                 for i in range(1, rng.randrange(1, 6))}
        assert _has_surrogates(lines) == line_by_line(lines), lines
    for where in (None, 1, 4096, 4097, 9999):  # lines of several blocks, one of them (or none) not UTF-8
        many = {i: "x = 'caf\u00e9 \U0001f600'" if i % 7 else "" for i in range(1, 10_000)}
        if where is not None:
            many[where] = "caf\udce9"
        assert _has_surrogates(many) == line_by_line(many) == (where is not None)


# --- placeholder's scans of a whole file ----------------------------------------------------------------------

def _stub_like_lines_one_regex(ctx):
    """What placeholder._stub_like_lines gave before it looked for the hint first."""
    from sentinel.checks import placeholder

    text = ctx.text
    line, pos = 1, 0
    for m in placeholder._STUB_LINE.finditer(text):
        start = m.start()
        line += text.count("\n", pos, start)
        pos = start
        if ctx.selected(line):
            yield line


def _hash_candidate_line_by_line(ctx, words, folded):
    """What placeholder._hash_comment_candidate did before it scanned the whole text."""
    for n in ctx.selected_lines():
        line = ctx.line(n)
        hash_at = line.find("#")
        if hash_at < 0:
            continue
        tail = line[hash_at:]
        if any(w in tail for w in words):
            return True
        if folded and any(w in tail.lower() for w in folded):
            return True
    return False


_STUB_PIECES = ["pass", "...", "NotImplemented", "NotImplementedError", "# ", "#", ":", ";", " ", "\t", "\f", "\r",
                "\n", "\n", "\n", "x", "def f():", "password", "'''", "TODO", "todo", "Stub", "dummy", "İ", "placeholder"]


@pytest.mark.parametrize("seed", range(40))
def test_placeholder_whole_file_scans_find_what_the_line_by_line_scans_found(seed):
    from sentinel.checks import placeholder

    text = _random_text(seed, _STUB_PIECES, 300)
    for status, mode in _VIEWS:
        ctx = _ctx(text, status, mode)
        assert list(placeholder._stub_like_lines(ctx)) == list(_stub_like_lines_one_regex(ctx)), text
        for words, folded in ((("TODO",), ("stub", "dummy", "placeholder")), ((), ("stub",)), (("TODO",), ()),
                              (("x\r",), ("x\r",))):  # a line's trailing CRs are not part of it
            assert placeholder._hash_comment_candidate(ctx, words, folded) == \
                _hash_candidate_line_by_line(ctx, words, folded), (text, words, folded)


def test_a_comment_is_read_without_its_line_ending():
    from sentinel.checks import placeholder

    ctx = _ctx("a = 1  # x\r\nb = 2  # TODO\r\n")
    assert not placeholder._hash_comment_candidate(ctx, ("x\r",), ())
    assert placeholder._hash_comment_candidate(ctx, ("TODO",), ()) and not _hash_candidate_line_by_line(ctx, ("x\r",), ())


# --- the staged diff read while git writes it ------------------------------------------------------------------

def _blocks(data: bytes, rng: random.Random) -> list[bytes]:
    """`data` cut at random places: inside lines, between "\r" and "\n", inside a multi-byte character."""
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randrange(0, 12)))) if len(data) > 1 else []
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]


@pytest.mark.parametrize("seed", range(30))
def test_a_diff_read_in_blocks_parses_as_the_whole(seed):
    from sentinel.diffparse import ChunkLines

    rng = random.Random(seed)
    for _ in range(40):
        text = _random_diff(rng)
        if rng.random() < 0.3:
            text = text.replace("line", rng.choice(["café", "\U0001f600", "x\udcff"]))
        data = text.encode("utf-8", "surrogateescape")
        if rng.random() < 0.2:
            data = data.rstrip(b"\n")  # output that does not end with a newline
        whole = _parse_or_error(data)
        blocks = _blocks(data, rng)
        assert _parse_or_error(ChunkLines(iter(blocks))) == whole, blocks


def test_a_diff_read_in_blocks_is_judged_as_the_whole_when_it_has_no_file_sections():
    from sentinel.diffparse import ChunkLines

    for data in (b"", b" \n\t\n", b"hello\n", b"\n\n+++ b/x\n@@ -1 +1 @@\n", b"x" * 5000 + b"\n--- a\n"):
        blocks = [data[i:i + 7] for i in range(0, len(data), 7)]
        assert _parse_or_error(ChunkLines(iter(blocks))) == _parse_or_error(data), data[:40]


def test_a_staged_diff_is_parsed_while_git_writes_it(repo):
    from sentinel import sources

    body = "".join(f"def f_{i}(x):\n    return 'caf\u00e9' * {i}\r\n" for i in range(3000))
    repo.write("a.py", body)
    repo.write("b.py", "x = 1")  # no newline at the end
    repo.git("add", "-A")
    repo.write("c.bin", b"\x00\x01")
    repo.git("add", "-A")
    change = sources.staged(str(repo.path))
    if change.blob_reader is not None and hasattr(change.blob_reader, "requested"):
        assert change.blob_reader.requested == [":a.py", ":b.py"]  # asked for while parsing; not the binary file
    files = {f.path: f for f in change.changeset.files}
    assert len(files["a.py"].added) == 6000 and files["a.py"].added[2] == "    return 'caf\u00e9' * 0"
    assert 2 in files["a.py"].crlf_lines and files["b.py"].added == {1: "x = 1"}
    assert change.read(["a.py"])["a.py"] == body.encode()


# --- shards of a large change ------------------------------------------------------------------------------------

class _Sized:
    def __init__(self, lines: int):
        self.line_count = lines
        self.has_content = True
        self.memo: dict = {}


@pytest.mark.parametrize("jobs", [2, 3, 8])
def test_shards_cover_every_file_in_order_and_end_small(jobs):
    from sentinel import parallel

    rng = random.Random(jobs)
    files = [_Sized(rng.choice([rng.randrange(1, 400), rng.randrange(400, 9000)])) for _ in range(700)]
    parts = parallel.shards(files, jobs, 4000)
    assert [f for part in parts for f in part] == files and all(parts)
    remaining = sum(f.line_count for f in files)
    for part in parts:
        size = sum(f.line_count for f in part)
        # each shard is what was left over 2*jobs (at least the minimum), overshooting by its last file only
        assert size - part[-1].line_count < max(4000, remaining / (2 * jobs)) <= size or part is parts[-1]
        remaining -= size
    sizes = [sum(f.line_count for f in part) for part in parts]
    assert sizes[0] > 4 * sizes[-2] and len(parts) > 2 * jobs


def _writer(script: str):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-c", "import sys, time\n" + script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_a_git_that_fails_after_writing_part_of_its_diff_is_a_git_error():
    from sentinel import gitio
    from sentinel.diffparse import ChunkLines, parse_diff
    from sentinel.errors import GitError

    proc = _writer("sys.stdout.write('diff --git a/x.py b/x.py\\nnew file mode 100644\\n--- /dev/null\\n+++ b/x.py\\n"
                   "@@ -0,0 +1,3 @@\\n+a\\n'); sys.stdout.flush(); sys.stderr.write('fatal: bad object'); sys.exit(128)")
    out = gitio.StreamedOutput(proc, None, "git diff --cached")
    with pytest.raises(GitError, match="git diff --cached failed: fatal: bad object"):
        parse_diff(ChunkLines(out))  # not "the hunk ends early": the diff is cut short because git failed


def test_a_streamed_diff_larger_than_the_limit_stops_git():
    from sentinel import gitio

    proc = _writer("while True: sys.stdout.write('+' * 4095 + '\\n')")
    out = gitio.StreamedOutput(proc, 1 << 20, "git diff --cached")
    with pytest.raises(gitio.OutputTooLarge):
        for _ in out:
            pass
    assert proc.wait(timeout=10) != 0 and out.failure() is None  # stopped by us: not git's failure


# --- staged blobs asked for while the diff is parsed -------------------------------------------------------------

_BLOBS = {"a.py": b"x = 1\n", "dir with space/b.txt": b"\x00\x01binary\n\n", "caf\u00e9.py": "s = 'é'\n".encode(),
          "empty.py": b"", "big.py": b"y = 2\n" * 200_000, "nl.py": b"\n"}


def _staged_blobs(repo):
    for path, data in _BLOBS.items():
        repo.write(path, data)
    repo.git("add", "-A")
    return [f":{p}" for p in _BLOBS] + [":missing.py"]


@pytest.mark.parametrize("asked_before", [[], [":a.py", ":big.py", ":gone.py"], "all"])
def test_blobs_asked_for_early_are_read_as_through_a_pipe(repo, asked_before):
    from sentinel import gitio

    specs = _staged_blobs(repo)
    expected = gitio.BlobReader(str(repo.path)).read(specs)
    assert expected[":big.py"] == _BLOBS["big.py"] and expected[":missing.py"] is None
    reader = gitio.SpooledBlobReader.start(str(repo.path))
    if reader is None:
        pytest.skip("no unnamed temporary files here: the pipe reader is used")
    for spec in specs if asked_before == "all" else asked_before:
        reader.request(spec)
    wanted = specs[1:]  # one asked for early and never read: left out
    assert reader.read(wanted) == {s: expected[s] for s in wanted}


def test_blobs_spooled_where_git_cannot_write_are_read_through_a_pipe(repo):
    from sentinel import gitio

    specs = _staged_blobs(repo)
    read_only = os.open(str(repo.path / "a.py"), os.O_RDONLY)  # cat-file cannot write its output there
    reader = gitio.SpooledBlobReader(str(repo.path), read_only)
    reader.request(":a.py")
    assert reader.read(specs) == gitio.BlobReader(str(repo.path)).read(specs)


# --- the store's digest of a change ------------------------------------------------------------------------------

def _digest_line_by_line(changeset) -> str:
    """content_digest as it was written first: one update per line."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted(changeset.files, key=lambda f: f.path):
        h.update(f"\0F{f.path}\0{f.old_path or ''}\0{f.status.value}\0{int(f.is_binary)}".encode("utf-8", "surrogateescape"))
        for n in sorted(f.added):
            h.update(f"\0+{n}\0{f.added[n]}".encode("utf-8", "surrogateescape"))
        for n, text in f.removed:
            h.update(f"\0-{n}\0{text}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


@pytest.mark.parametrize("seed", range(20))
def test_a_change_is_digested_as_line_by_line(seed, monkeypatch):
    from sentinel.memory.hypotheses import gate_hook
    from sentinel.memory.hypotheses.gate_hook import content_digest
    from sentinel.models import ChangeSet

    if seed % 2:
        monkeypatch.setattr(gate_hook, "_OPENSSL_FROM_LINES", 0)  # the large-change path, on a small change
    if seed % 3 == 0:
        monkeypatch.setattr(gate_hook, "_PREFIXES_UP_TO", 30)  # line numbers past the table

    rng = random.Random(seed)
    pieces = ["x", "é", "\U0001f600", "\udcff", "\0", "+1", "\\", " ", "\r", "{}", "{0}"]
    files = []
    for i in range(rng.randrange(0, 6)):
        status = rng.choice(list(FileStatus))
        added = {n: "".join(rng.choice(pieces) for _ in range(rng.randrange(5))) for n in
                 sorted(rng.sample(range(1, 60), rng.randrange(0, 12)), key=lambda _: rng.random())}
        removed = [(n, "".join(rng.choice(pieces) for _ in range(rng.randrange(5)))) for n in range(rng.randrange(4))]
        files.append(FileChange(path=rng.choice(["a.py", "b/c.py", "z", "é.py"]) + str(i), old_path=rng.choice([None, "o.py"]),
                                status=status, language="python", added=added, removed=removed,
                                is_binary=rng.random() < 0.1))
    changeset = ChangeSet(files=files, source="test")
    assert content_digest(changeset) == _digest_line_by_line(changeset)


# --- the rules' cheaper scans of a whole file ------------------------------------------------------------------

_TOKEN_ALTERNATION = (r"AKIA|ASIA|gh[pousr]_|github_pat_|xox[baprs]-|AIza|k_live_|sk-ant-|T3BlbkFJ|PRIVATE KEY|"
                      r"gl(?:pat|ptt|dt|rt|cbt|oas)-|npm_|pypi-AgEI|hf_|SG\.|hooks\.slack|shp(?:at|ca|pa|ss)_|"
                      r"do[opr]_v1_|AGE-SECRET|eyJ")
_TOKEN_PIECES = ["AKIA", "ASIA", "AIza", "AGE-SECRET", "AGE", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "ghx_", "gh",
                 "github_pat_", "glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glx-", "gl", "xoxb-", "xoxa-",
                 "xoxp-", "xoxr-", "xoxs-", "xox-", "k_live_", "sk-ant-", "shpat_", "shpca_", "shppa_", "shpss_", "shp_",
                 "T3BlbkFJ", "PRIVATE KEY", "npm_", "pypi-AgEI", "pypi-", "hf_", "hooks.slack", "hooks", "SG.", "SG",
                 "doo_v1_", "dop_v1_", "dor_v1_", "dox_v1_", "eyJ", "ey", "_", "-", ".", "a", "s", "h", "\n"]


@pytest.mark.parametrize("seed", range(30))
def test_the_token_gate_matches_where_the_plain_alternation_of_its_prefixes_does(seed):
    import re

    from sentinel.redact import TOKEN_GATE

    plain = re.compile(_TOKEN_ALTERNATION)
    rng = random.Random(seed)
    text = "".join(rng.choice(_TOKEN_PIECES) for _ in range(rng.randrange(1, 200)))
    assert [m.start() for m in TOKEN_GATE.finditer(text)] == [m.start() for m in plain.finditer(text)], text
    for piece in _TOKEN_PIECES:  # each prefix alone
        assert bool(TOKEN_GATE.search(piece)) == bool(plain.search(piece)), piece


def _python_sources() -> list[str]:
    """Real modules of every shape: this project's own."""
    import sentinel

    root = os.path.dirname(sentinel.__file__)
    out = []
    for folder, _, names in os.walk(root):
        out.extend(open(os.path.join(folder, n), encoding="utf-8").read() for n in sorted(names) if n.endswith(".py"))
    return out


_ASSIGNMENTS = '''
A = "x"; A = "y"
def f(q):
    b = "one"; b: str = "two"
    if q:
        b = "three"
        class C:
            b = "four"
    def g():
        b = "five"
    run(b, A)
    return b
def h():
    c = "1"; c = "2"
    use(c)
'''


def test_a_name_s_last_assignment_is_found_as_by_ast_walk():
    import ast

    from sentinel.checks.jail import python as jail_python

    def by_ast_walk(ctx, name):  # jail's _assigned_value before it walked without the context leaves
        scope = next((a for a in ctx.ancestors(name) if isinstance(a, jail_python._SCOPES)), None)
        candidates = ast.walk(scope) if scope is not None else iter(getattr(ctx.tree, "body", ()))
        best = jail_python._last_assignment(candidates, name)
        if best is None and scope is not None:
            best = jail_python._last_assignment(iter(getattr(ctx.tree, "body", ())), name)
        return (best.value, best) if best is not None else (None, None)

    found = 0
    for source in [_ASSIGNMENTS, *_python_sources()]:
        ctx = _ctx(source, FileStatus.ADDED, FilterMode.FILE)
        names = [n for n in ctx.nodes(ast.Name) if isinstance(n.ctx, ast.Load)][:300]
        for name in names:
            value, assign = jail_python._assigned_value(ctx, name)
            expected = by_ast_walk(ctx, name)
            assert value is expected[0] and assign is expected[1], ast.dump(name)
            found += assign is not None
    assert found > 100
    ctx = _ctx(_ASSIGNMENTS, FileStatus.ADDED, FilterMode.FILE)
    uses = {n.id: n for n in ctx.nodes(ast.Name) if isinstance(n.ctx, ast.Load) and n.id in ("b", "c")}
    assert jail_python._assigned_value(ctx, uses["b"])[0].value == "five"  # the last line before the use wins
    assert jail_python._assigned_value(ctx, uses["c"])[0].value == "1"  # of two on that line, the first


def test_a_class_s_self_attributes_are_found_as_by_ast_walk():
    import ast

    from sentinel.checks import placeholder

    def by_ast_walk(cls):
        found = {}
        for method in cls.body:
            if isinstance(method, placeholder._FUNCS):
                for node in ast.walk(method):
                    if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                            and node.value.id in ("self", "cls")):
                        users = found.setdefault(node.attr, [])
                        if not users or users[-1] is not method:
                            users.append(method)
        return found

    classes = 0
    for source in _python_sources():
        for cls in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef)):
            assert placeholder._self_attributes(cls) == by_ast_walk(cls), cls.name
            classes += 1
    assert classes > 50


_BINDINGS = '''
password = "hunter2hunter2"
token: str = b"abc"
key = f"static-value"
other_key = f"static-{1}"
secret = None
a, api_key = 1, "s3cr3t-value"
call(passwd="pw-value", timeout=3, flag=True, empty="")
conf = {"db.password": "x1", "port": 5432, "AWS::IAM": "y", 3: "z"}
def f(x, token="default-token", n=0, *, secret=b"bytes-value", cert=b"\\xff\\xfe", k=None): pass
g = lambda auth_token="lambda-token", m=1.5: m
'''


def _bindings_unfiltered(ctx):
    """chaos._bindings before it skipped the literals _literal never reads as text."""
    import ast

    for node in ctx.nodes(ast.Assign):
        value = node.value
        if isinstance(value, chaos._LITERAL_NODES):
            for t in node.targets:
                yield chaos._target_name(t), value
        elif isinstance(value, (ast.Tuple, ast.List)):
            for t in node.targets:
                if isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) == len(value.elts):
                    for te, ve in zip(t.elts, value.elts):
                        if isinstance(ve, chaos._LITERAL_NODES):
                            yield chaos._target_name(te), ve
    for node in ctx.nodes(ast.AnnAssign):
        if isinstance(node.value, chaos._LITERAL_NODES):
            yield chaos._target_name(node.target), node.value
    for node in ctx.nodes(ast.keyword):
        if node.arg and isinstance(node.value, chaos._LITERAL_NODES):
            yield node.arg, node.value
    for node in ctx.nodes(ast.Dict):
        for k, v in zip(node.keys, node.values):
            if (isinstance(v, chaos._LITERAL_NODES) and isinstance(k, ast.Constant) and isinstance(k.value, str)
                    and chaos._KEY_NAME.match(k.value)):
                yield k.value, v
    for node in ctx.nodes(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
        a = node.args
        positional = a.posonlyargs + a.args
        for arg, default in zip(positional[len(positional) - len(a.defaults):], a.defaults):
            yield arg.arg, default
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            if default is not None:
                yield arg.arg, default


def test_the_bindings_skipped_early_are_those_never_read_as_text():
    def read(pairs):
        return [(name, node) for name, node in pairs
                if name and isinstance(node, chaos._LITERAL_NODES) and chaos._literal(node)]

    skipped = 0
    for source in [_BINDINGS, *_python_sources()]:
        ctx = _ctx(source, FileStatus.ADDED, FilterMode.FILE)
        fast, plain = list(chaos._bindings(ctx)), list(_bindings_unfiltered(ctx))
        assert read(fast) == read(plain)
        skipped += len(plain) - len(fast)
    assert skipped > 100  # the early skip is taken
    ctx = _ctx(_BINDINGS, FileStatus.ADDED, FilterMode.FILE)
    assert {name for name, _ in read(chaos._bindings(ctx))} >= {"password", "token", "key", "api_key", "passwd",
                                                               "db.password", "auth_token", "secret"}


_COMMENT_PIECES = ["# ", "#", "TODO", "FIXME", "todo", "stub", "Stub", "placeholder", "dummy", "fill in", "not implemented",
                   "x = 1", "pass", "'", '"""', "\n", "\n", "\n", "\r\n", "\r", " ", "İ", "Σ", "s = '#'"]


@pytest.mark.parametrize("seed", range(40))
def test_placeholder_comments_are_found_as_without_the_comment_tail_gate(seed, monkeypatch):
    from sentinel.checks import placeholder

    text = _random_text(seed, _COMMENT_PIECES, 300)
    for status, mode in (*_VIEWS, (FileStatus.ADDED, FilterMode.DIFF_CONTEXT)):
        gated = placeholder._comments(_ctx(text, status, mode))
        with monkeypatch.context() as m:
            m.setattr(placeholder, "_hash_tails_may_hold", lambda *a: True)
            plain = placeholder._comments(_ctx(text, status, mode))
        assert [(f.rule, f.line, f.column, f.message) for f in gated] == \
            [(f.rule, f.line, f.column, f.message) for f in plain], (text, status, mode)


def test_the_comment_tail_gate_skips_a_file_whose_words_are_only_in_code():
    from sentinel.checks import placeholder

    words = ("TODO",)
    code = "def placeholder_dummy(stub):\n    return 'TODO: stub'  \n"
    assert not placeholder._hash_tails_may_hold(_ctx(code), words, placeholder._STUB_WORDS)
    assert placeholder._hash_tails_may_hold(_ctx(code + "x = 1  # a Stub for now\n"), words, placeholder._STUB_WORDS)
    assert placeholder._hash_tails_may_hold(_ctx(code + "# TODO\n"), words, ())
    assert not placeholder._hash_tails_may_hold(_ctx(code + "# todo\n"), words, ())
    # a few lines of a modified file: the gate leaves them to the exact path
    assert placeholder._hash_tails_may_hold(_ctx(code, FileStatus.MODIFIED), words, placeholder._STUB_WORDS)
