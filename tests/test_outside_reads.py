"""The gate reads nothing outside the repository: a diff naming ../ or absolute paths, or a file that
is a symlink out of the tree, is refused (exit 2) without reading — let alone printing — the target."""

from __future__ import annotations

import os
import threading

import pytest

import sentinel
from sentinel.errors import InputError
from sentinel.filecache import read_files
from tests.conftest import new_file_diff
from tests.harden_util import assert_clean_exit, run_sentinel

SECRET = "TOP-SECRET-CONTENT eval(data)  # password = hunter22x\n"


@pytest.fixture
def outside(tmp_path):
    d = tmp_path / "elsewhere"
    d.mkdir()
    (d / "secret.py").write_text(SECRET)
    return d


def _modify_diff(path: str) -> str:
    # A modification: the gate reads the working-tree file for its content.
    return (f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
            "@@ -1 +1,2 @@\n TOP-SECRET-CONTENT eval(data)  # password = hunter22x\n+x = 1\n")


def test_symlinked_file_pointing_outside_is_refused(repo, outside):
    repo.write("a.py", "x = 0\n")
    repo.add("a.py")
    repo.commit()
    os.symlink(outside / "secret.py", repo.path / "notes.py")
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=repo.path, input=_modify_diff("notes.py"))
    assert_clean_exit(proc, 2)
    assert "outside the repository" in proc.stderr
    assert "hunter22x" not in proc.stdout + proc.stderr


def test_symlinked_directory_pointing_outside_is_refused(repo, outside):
    repo.write("a.py", "x = 0\n")
    repo.add("a.py")
    repo.commit()
    os.symlink(outside, repo.path / "link")
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=repo.path, input=_modify_diff("link/secret.py"))
    assert_clean_exit(proc, 2)
    assert "outside the repository" in proc.stderr


@pytest.mark.parametrize("path", ["../elsewhere/secret.py", "/etc/passwd", "a/../../elsewhere/secret.py"])
def test_dotdot_and_absolute_paths_in_a_diff_are_refused(repo, outside, path):
    (repo.path / ".keep").write_text("")
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=repo.path, input=_modify_diff(path))
    assert_clean_exit(proc, 2)
    assert "TOP-SECRET" not in proc.stdout and "root:" not in proc.stdout


def test_python_api_refuses_the_same(repo, outside):
    repo.write("a.py", "x = 0\n")
    repo.add("a.py")
    repo.commit()
    os.symlink(outside / "secret.py", repo.path / "notes.py")
    with pytest.raises(InputError, match="outside the repository"):
        sentinel.check(diff=_modify_diff("notes.py"), cwd=str(repo.path))
    with pytest.raises(InputError):
        sentinel.check(diff=_modify_diff("../elsewhere/secret.py"), cwd=str(repo.path))


def test_symlink_inside_the_repository_is_read(repo):
    repo.write("real.py", "x = 1\n")
    repo.add("real.py")
    repo.commit()
    os.symlink("real.py", repo.path / "alias.py")
    diff = "diff --git a/alias.py b/alias.py\n--- a/alias.py\n+++ b/alias.py\n@@ -1 +1 @@\n-x = 0\n+x = 1\n"
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=repo.path, input=diff)
    assert_clean_exit(proc, 0)


def test_a_fifo_or_device_is_never_read(repo, tmp_path):
    # Opening a FIFO for reading waits for a writer: the run would hang. A device never ends.
    fifo = repo.path / "pipe.py"
    os.mkfifo(fifo)
    diff = new_file_diff("pipe.py", "x = 1\n").replace("new file mode 100644\n--- /dev/null", "--- a/pipe.py")
    diff = diff.replace("@@ -0,0 +1,1 @@", "@@ -1,0 +1,1 @@")
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=repo.path, input=diff, timeout=60)
    assert_clean_exit(proc, 0)
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(read_files([str(fifo), "/dev/zero"])), daemon=True)
    t.start()
    t.join(10)
    assert out == {str(fifo): None, "/dev/zero": None}


def test_files_larger_than_the_limit_are_not_read(tmp_path):
    big = tmp_path / "big.toml"
    big.write_bytes(b"x" * 2048)
    assert read_files([str(big)], limit=1024) == {str(big): None}
    assert read_files([str(big)], limit=4096) == {str(big): b"x" * 2048}


def test_a_far_hunk_without_file_content_is_refused_not_allocated(tmp_path):
    # Without the file, the diff's lines stand in for it: a hunk at line two million would cost a
    # line of memory for every line above it.
    far = "--- a/gone.py\n+++ b/gone.py\n@@ -2000000 +2000000,2 @@\n x = 1\n+eval(data)\n"
    proc = run_sentinel("check", "--diff", "-", "--no-memory", cwd=tmp_path, input=far, timeout=60)
    assert_clean_exit(proc, 2)
    assert "gone.py" in proc.stderr and "1,000,000" in proc.stderr
    near = far.replace("2000000", "900000")
    proc = run_sentinel("check", "--diff", "-", "--no-memory", "--format", "json", cwd=tmp_path, input=near,
                        timeout=120)
    assert_clean_exit(proc, 1)
    assert '"line": 900001' in proc.stdout
