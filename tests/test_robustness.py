"""Bad and unusual input: clear messages and exit code 2, never a traceback, never lost data."""

from __future__ import annotations

import os
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel import engine
from sentinel.config import Config
from sentinel.diffparse import decode_diff, parse_diff
from sentinel.errors import InputError
from sentinel.sources import Change
from tests.conftest import new_file_diff

BARE = "def f():\n    try:\n        g()\n    except:\n        pass\n"


def _no_traceback(proc):
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout


def test_not_a_git_repository(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sentinel", "check"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 2 and "not a git repository" in proc.stderr
    _no_traceback(proc)


def test_git_missing_from_path(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # an empty directory: no git anywhere
    proc = subprocess.run([sys.executable, "-m", "sentinel", "check"], cwd=tmp_path, capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and "git is not installed" in proc.stderr
    _no_traceback(proc)


def test_malformed_diff_on_stdin(repo):
    bad = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,9 @@\n+only one line\n"
    proc = repo.sentinel("check", "--diff", "-", input=bad)
    assert proc.returncode == 2 and "malformed diff" in proc.stderr
    _no_traceback(proc)
    proc = repo.sentinel("check", "--diff", "-", input="hello, this is not a diff\n")
    assert proc.returncode == 2 and "not a unified diff" in proc.stderr


def test_diff_file_missing_and_binary(repo, tmp_path):
    proc = repo.sentinel("check", "--diff", str(tmp_path / "nope.diff"))
    assert proc.returncode == 2 and "cannot read diff file" in proc.stderr
    blob = tmp_path / "blob.diff"
    blob.write_bytes(b"\x00\x01\x02binary")
    proc = repo.sentinel("check", "--diff", str(blob))
    assert proc.returncode == 2 and "binary" in proc.stderr


def test_diff_from_stdin_is_checked(repo):
    proc = repo.sentinel("check", "--diff", "-", input=new_file_diff("n.py", BARE))
    assert proc.returncode == 1 and "SEN301" in proc.stdout


def test_empty_diff_passes_with_zero_files(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit()
    proc = repo.sentinel("check")
    assert proc.returncode == 0 and "0 file(s)" in proc.stdout


def test_non_utf8_file_is_reported_not_checked(repo):
    repo.write("latin.py", "name = 'caf\xe9'\n".encode("latin-1"))
    repo.write("ok.py", BARE)
    repo.add("latin.py", "ok.py")
    proc = repo.sentinel("check")
    _no_traceback(proc)
    assert proc.returncode == 1 and "SEN301" in proc.stdout  # the rest of the change is still checked
    assert "latin.py: not checked (not UTF-8" in proc.stdout


def test_binary_file_in_change_is_listed(repo):
    repo.write("img.png", b"\x89PNG\r\n\x1a\n\0\0binary")
    repo.add("img.png")
    proc = repo.sentinel("check")
    assert proc.returncode == 0 and "img.png: not checked (binary file)" in proc.stdout


def test_new_renamed_deleted_crlf_files(repo):
    repo.git("config", "core.autocrlf", "false")
    repo.write("keep.py", "a = 1\nb = 2\nc = 3\n")
    repo.write("del.py", "x = 1\n")
    repo.add("keep.py", "del.py")
    repo.commit()
    repo.git("mv", "keep.py", "moved.py")
    repo.git("rm", "-q", "del.py")
    repo.write("win.py", b"try:\r\n    g()\r\nexcept:\r\n    pass\r\n")
    repo.add("win.py")
    proc = repo.sentinel("check", "--format", "json")
    _no_traceback(proc)
    assert proc.returncode == 1 and '"SEN301"' in proc.stdout and '"win.py"' in proc.stdout


def test_large_file_of_50k_lines(repo):
    body = "".join(f"value_{i} = {i}\n" for i in range(50_000)) + BARE
    repo.write("big.py", body)
    repo.add("big.py")
    proc = repo.sentinel("check")
    _no_traceback(proc)
    assert proc.returncode == 1 and "SEN301" in proc.stdout and "50005 added line(s)" in proc.stdout


def test_merge_commit_range(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "side")
    repo.write("side.py", BARE)
    repo.add("side.py")
    repo.commit("side")
    repo.git("checkout", "-q", "main")
    repo.write("main.py", "y = 2\n")
    repo.add("main.py")
    repo.commit("main")
    repo.git("merge", "-q", "--no-ff", "side", "-m", "merge side")
    proc = repo.sentinel("check", "--range", f"{base}..HEAD")
    assert proc.returncode == 1 and "side.py" in proc.stdout
    proc = repo.sentinel("check", "--range", "HEAD^1..HEAD")  # what the merge brought in
    assert proc.returncode == 1 and "side.py" in proc.stdout and "main.py" not in proc.stdout


def test_bad_range_is_a_clean_error(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit()
    for spec in ("nope..HEAD", "HEAD"):
        proc = repo.sentinel("check", "--range", spec)
        assert proc.returncode == 2
        _no_traceback(proc)


_DIFF_ALPHABET = st.sampled_from(["diff --git a/x.py b/x.py\n", "--- a/x.py\n", "+++ b/x.py\n", "--- /dev/null\n",
                                  "@@ -1,2 +1,3 @@\n", "@@ -0,0 +1 @@\n", "+except:\n", "+    pass\n", " ctx\n",
                                  "-old\n", "\\ No newline at end of file\n", "Binary files a/x and b/x differ\n",
                                  "+\tx = '\xe9'\n", "new file mode 100644\n", "rename from a\n", "+# TODO\n"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.lists(_DIFF_ALPHABET, max_size=30).map("".join), st.text(max_size=400),
                 st.binary(max_size=300).map(lambda b: decode_diff(b))))
def test_random_and_mutated_diffs_never_crash(text):
    try:
        cs = parse_diff(text)
    except InputError:
        return
    verdict = engine.run(Change(cs), Config())
    assert not verdict.errored, [c.reason for c in verdict.checks if c.reason]
