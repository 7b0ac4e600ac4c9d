"""Forked workers end with the run that started them: SIGTERM, SIGINT (Ctrl-C) or even SIGKILL of
the parent leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from sentinel import parallel
from tests.harden_util import sentinel_script

pytestmark = pytest.mark.skipif(not (parallel.can_fork() and os.path.isdir("/proc")),
                                reason="forked workers and /proc: Linux only")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its exit status is left to collect


def _wait_for(predicate, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _workers_of(proc: subprocess.Popen, count: int) -> list[int]:
    assert _wait_for(lambda: len(_children(proc.pid)) >= count, 60), "workers never started"
    return _children(proc.pid)


# A run started from a terminal has Ctrl-C's default handler; a test runner started as a background job
# (`pytest &` in a script) hands its children SIGINT ignored, as POSIX says. The children here set the
# terminal's handler themselves, so the tests mean the same wherever the runner was started.
_TERMINAL_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"

SLOW_MAP = (_TERMINAL_SIGINT + "import time; from sentinel import parallel\n"
            "print('start', flush=True)\n"
            "parallel.map_forked(lambda part: time.sleep(120), [1, 2, 3], workers=2)\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_workers_end_with_their_parent(sig):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_MAP], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"start\n"
        workers = _workers_of(proc, 2)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10), [w for w in workers if _alive(w)]
        if sig != signal.SIGKILL:
            assert b"Traceback" not in proc.stderr.read() or sig == signal.SIGINT
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_on_the_whole_process_group_prints_no_worker_tracebacks():
    # A terminal's Ctrl-C signals every process of the foreground group, workers included.
    proc = subprocess.Popen([sys.executable, "-c", SLOW_MAP], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stdout.readline() == b"start\n"
        workers = _workers_of(proc, 2)
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10)
        err = proc.stderr.read().decode()
        assert err.count("Traceback") <= 1, err  # the parent's own KeyboardInterrupt at most
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_sentinel_check_interrupted_during_parallel_analysis(repo):
    # A change large enough for several processes; the hook is stopped while they work.
    body = "".join(f"def f_{i}(x):\n    return x + {i}\n\n\n" for i in range(2500))
    for i in range(24):
        repo.write(f"pkg/m{i}.py", body)
    repo.git("add", "-A")
    repo.commit()
    proc = subprocess.Popen([sentinel_script(), "check", "--all-files", "--jobs", "2", "--no-memory"],
                            cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        seen = _wait_for(lambda: proc.poll() is not None or
                         any(_cmdline(c) == _cmdline(proc.pid) for c in _children(proc.pid)), 60)
        if proc.poll() is not None or not seen:
            pytest.skip("the run ended before its workers could be observed")
        workers = [c for c in _children(proc.pid) if _cmdline(c) == _cmdline(proc.pid)]
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        assert proc.returncode != 0
        assert _wait_for(lambda: not any(_alive(w) for w in workers), 10)
        assert b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


# Ctrl-C landing while the pool forks its workers (between a worker's start and its registration in the
# pool): the run must still end, and end its workers. Simulated by the parent signalling itself right
# after each worker process starts.
INTERRUPTED_SPAWN = (_TERMINAL_SIGINT + "import os, signal, time, multiprocessing.process as mp\n"
                     "from sentinel import parallel\n"
                     "start = mp.BaseProcess.start\n"
                     "def start_then_interrupt(self):\n"
                     "    start(self)\n"
                     "    print('worker', self.pid, flush=True)\n"
                     "    os.kill(os.getpid(), signal.SIGINT)\n"
                     "mp.BaseProcess.start = start_then_interrupt\n"
                     "try:\n"
                     "    parallel.map_forked(lambda part: time.sleep(120), [1, 2, 3], workers=2)\n"
                     "except KeyboardInterrupt:\n"
                     "    print('interrupted', flush=True)\n")


def test_ctrl_c_while_the_pool_forks_ends_the_run_and_its_workers():
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_SPAWN], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the interrupted run hung: {out!r} {err[-2000:]!r}")
    lines = out.decode().split()
    workers = [int(lines[i + 1]) for i, w in enumerate(lines) if w == "worker"]
    assert workers and "interrupted" in lines, (out, err)
    assert _wait_for(lambda: not any(_alive(w) for w in workers), 10)
    assert b"Traceback" not in err, err.decode()[-2000:]


def test_stopping_a_pool_waits_for_its_manager_thread():
    # Left running, the thread races the interpreter's exit for its wake-up pipe on Python < 3.12 and a SIGTERM
    # could end with "Exception ignored ... Bad file descriptor" on stderr (CPython gh-125451).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
    pool.submit(time.sleep, 60)
    assert _wait_for(lambda: pool._executor_manager_thread is not None, 10)
    manager = pool._executor_manager_thread
    parallel._stop(pool)
    assert not manager.is_alive()
