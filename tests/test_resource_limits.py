"""Absurd input sizes are refused with a clear message (exit 2) before they are read into memory, and a
large diff is parsed without ever being one wide string (issue 11 §3). The peak-memory target itself is
measured by benchmarks/fuzz.py and benchmarks/memory.py, not here."""

from __future__ import annotations

import os
import subprocess
import threading
import tracemalloc

import pytest

from sentinel.diffparse import decode_diff, parse_diff
from tests.conftest import new_file_diff
from tests.harden_util import assert_clean_exit, run_sentinel, sentinel_script

LIMIT = {"SENTINEL_MAX_DIFF_MB": "1"}


def _big_file(lines: int = 60_000) -> str:
    return "".join(f"value_{i} = {i}  # a line of ordinary code\n" for i in range(lines))  # ~2.5 MB


def test_endless_stdin_is_refused_without_reading_it_all(tmp_path):
    # 256 MiB offered on stdin with a 1 MiB limit: the run stops reading, says why, and stays small.
    proc = subprocess.Popen([sentinel_script(), "check", "--diff", "-", "--no-memory"], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **LIMIT})
    written = []

    def feed():
        block = new_file_diff("big.py", _big_file(2000)).encode()
        try:
            for _ in range(256 * 1024 * 1024 // len(block)):
                proc.stdin.write(block)
                written.append(len(block))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    err = proc.stderr.read().decode()
    proc.stdout.read()
    proc.wait()
    writer.join(30)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and "larger than 1 MiB" in err and "SENTINEL_MAX_DIFF_MB" in err, err
    # Read up to the limit and no further (what a pipe buffers besides): the rest was never written.
    assert sum(written) < 16 * 1024 * 1024, sum(written)


def test_oversized_diff_file_staged_change_and_range_are_refused(repo, tmp_path):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("big.py", _big_file())
    repo.add("big.py")
    proc = run_sentinel("check", "--no-memory", cwd=repo.path, env=LIMIT)
    assert_clean_exit(proc, 2)
    assert "the staged diff is larger than 1 MiB" in proc.stderr, proc.stderr
    repo.commit("big")
    proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--no-memory", cwd=repo.path, env=LIMIT)
    assert_clean_exit(proc, 2)
    assert "the diff of HEAD~1..HEAD is larger than 1 MiB" in proc.stderr, proc.stderr
    diff = tmp_path / "big.diff"
    diff.write_text(new_file_diff("other.py", _big_file()), encoding="utf-8")
    proc = run_sentinel("check", "--diff", str(diff), "--no-memory", cwd=repo.path, env=LIMIT)
    assert_clean_exit(proc, 2)
    assert f"diff {diff} is larger than 1 MiB" in proc.stderr, proc.stderr
    # Under the limit the same change is checked as usual.
    proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--no-memory", cwd=repo.path,
                        env={"SENTINEL_MAX_DIFF_MB": "8"})
    assert_clean_exit(proc, 0, 1)


@pytest.mark.parametrize("value", ["0", "-3", "lots", "1.5"])
def test_a_nonsense_limit_is_a_usage_error(repo, value):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    proc = run_sentinel("check", "--no-memory", cwd=repo.path, env={"SENTINEL_MAX_DIFF_MB": value})
    assert_clean_exit(proc, 2)
    assert "SENTINEL_MAX_DIFF_MB" in proc.stderr


def test_one_wide_character_does_not_widen_the_whole_diff():
    # One emoji and one byte that is not UTF-8 in ~4.7 MB of ASCII: decoded as one string the whole diff
    # takes 4 bytes a character on top of its bytes (peak 8.9 x the input, the parsed lines being 3.8 x);
    # decoded a block at a time it does not (4.9 x).
    text = new_file_diff("big.py", _big_file(100_000))
    data = text.encode().replace(b"value_5 ", "value_5 \U0001F642 caf".encode() + b"\xe9 ", 1)
    tracemalloc.start()
    try:
        cs = parse_diff(data, source="test")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 * len(data), peak / len(data)
    # ... and the result is the one the text gives.
    same = parse_diff(decode_diff(data), source="test")
    assert cs.files[0].added == same.files[0].added and cs.files[0].path == "big.py"
    assert "caf\udce9" in cs.files[0].added[6]


def test_a_large_diff_parses_as_bytes_as_it_does_as_text():
    from sentinel.diffparse import _parse_files

    body = _big_file(40_000)
    text = "".join(new_file_diff(f"pkg/m{i}.py", body.replace("value_7 ", f"value_7 \u00e9{i} ")) for i in range(4))
    data = text.encode()
    assert len(data) > 4 * 2 ** 20  # several of the blocks bytes are decoded in
    serial = _parse_files(text, "test")
    for cs in (parse_diff(data, source="test"), parse_diff(text, source="test")):
        assert [(f.path, f.added, f.hunks) for f in cs.files] == [(f.path, f.added, f.hunks) for f in serial]
    # A malformed line names the same line number, read from bytes or from text.
    broken = data.replace(b"+value_39000 = 39000", b"?value_39000 = 39000", 4)
    with pytest.raises(Exception) as one:
        parse_diff(broken, source="test")
    with pytest.raises(Exception) as other:
        _parse_files(decode_diff(broken), "test")
    assert str(one.value) == str(other.value) and "line" in str(one.value)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_message_file_that_never_ends_is_refused(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    proc = run_sentinel("check", "--message", "@/dev/zero", "--no-memory", cwd=repo.path, timeout=60)
    assert_clean_exit(proc, 2)
    assert "/dev/zero is larger than 8 MiB" in proc.stderr, proc.stderr
