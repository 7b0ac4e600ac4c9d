"""Per-file analysis of a large change on several processes.

Each code check's per-file analysis is a pure function of the file, its content and the config,
so a large change (first adoption with --all-files, a vendored tree, a big merge) is cut into
contiguous shards of files balanced by size, several per process, which forked workers take as
they free up. Results come back in file order, so findings and the first error of a check are the
same as in a serial run. A small change (every commit hook) never pays for a fork: below
``MIN_LINES`` lines of content the run stays serial.

Only where ``fork`` is the safe, cheap way to start a worker (Linux and other POSIX systems
except macOS, whose system libraries are not fork-safe): elsewhere the run is serial.
"""

from __future__ import annotations

import os
import sys
import time

# Below this many lines of content to analyse, a fork and the pickling of results cost more
# than a second core saves.
MIN_LINES = 40_000
MAX_JOBS = 8
# The smallest shard worth sending to a process (each costs a round trip and the pickling of its results).
MIN_SHARD_LINES = 4_000
# Lines analysed between two returns of the C heap's free memory to the system (each costs about a millisecond).
TRIM_LINES = 20_000
# The most memory a run of the gate may take, summed over its processes, as a multiple of its input (issue 24).
# A forked worker's resident memory starts as every page of this process (the interpreter, the loaded checks,
# the whole change: some 30 MB for a 5 MB change), so workers are forked only as far as the budget pays for them.
MEMORY_BUDGET = 5


class FilePhase:
    """What one check's check_file produced over a list of files."""

    __slots__ = ("findings", "error", "seconds")

    def __init__(self, error: str | None = None) -> None:
        self.findings: list = []
        self.error = error
        self.seconds = 0.0

    def __getstate__(self):
        return self.findings, self.error, self.seconds

    def __setstate__(self, state) -> None:
        self.findings, self.error, self.seconds = state


def available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "darwin"


def plan_jobs(requested: int | None, contexts: list) -> int:
    """How many processes to use: `requested` when given (1 = serial), else by size and cores."""
    if requested is not None:
        jobs = max(1, min(requested, MAX_JOBS))
    else:
        lines = sum(_weight(ctx) for ctx in contexts)
        if lines < MIN_LINES:
            return 1
        jobs = min(available_cpus(), MAX_JOBS, max(1, lines // (MIN_LINES // 2)))
        if jobs > 1 and can_fork():
            jobs = min(jobs, affordable_jobs(contexts))
    if jobs > 1 and not can_fork():
        return 1
    return min(jobs, max(1, len(contexts)))


def affordable_jobs(contexts: list) -> int:
    """How many processes the memory budget pays for: each fork holds about what this process holds now, and
    all of them together stay within MEMORY_BUDGET times the input (for a 5 MB change no fork fits: one
    doubled the run's memory; a 20 MB change affords one). Unlimited where this process's size is unknown."""
    _return_freed_memory()  # what reading the change left free is neither held nor inherited
    resident = _resident_bytes()
    if not resident:
        return MAX_JOBS
    budget = MEMORY_BUDGET * sum(_input_bytes(ctx) for ctx in contexts)
    return 1 + max(0, int((budget - resident) // resident))


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _input_bytes(ctx) -> int:
    """The size of the file's text as the change brought it (its lines when only the diff has them)."""
    held = ctx._packed()
    if held is not None:
        return len(held)
    change = ctx.change
    return sum(map(len, change.added.values())) + sum(map(len, change.context.values())) + \
        len(change.added) + len(change.context)


def _weight(ctx) -> int:
    # Content length in lines when known, else what the diff shows: the work grows with both. Asked
    # for by plan_jobs and again by shards: counted once (a whole tree's text is 21 MB).
    weight = ctx.memo.get("parallel.weight")
    if weight is None:
        weight = ctx.memo["parallel.weight"] = ctx.line_count if ctx.has_content else \
            len(ctx.change.added) + len(ctx.change.context)
    return weight


def shards(contexts: list, jobs: int, min_lines: int = 0) -> list[list]:
    """Contiguous runs of files, each about 1/(2*jobs) of the lines still to go, but at least
    `min_lines` (guided self-scheduling): the first shards are large, the last ones small. The cost of
    a file is only roughly proportional to its lines (shards of equal lines took 0.6 to 1.05 s of
    CPU on the same tree), so with equal shards the process that drew the last slow one kept the
    others waiting; small shards at the end make the processes finish close together."""
    weights = [max(1, _weight(ctx)) for ctx in contexts]
    remaining = sum(weights)
    out: list[list] = []
    part: list = []
    acc = 0
    target = max(min_lines, remaining / (2 * jobs))
    for ctx, w in zip(contexts, weights):
        part.append(ctx)
        acc += w
        if acc >= target:
            out.append(part)
            remaining -= acc
            part, acc = [], 0
            target = max(min_lines, remaining / (2 * jobs))
    if part:
        out.append(part)
    return out


def counter(total: int, progress=None):
    """A callable that counts finished files and tells `progress(done, total)`; None without a `progress`."""
    if progress is None:
        return None
    done = [0]

    def file_done() -> None:
        done[0] += 1
        progress(done[0], total)
    return file_done


def analyse(modules: dict, contexts: list, portable: bool = False,
            on_file=None) -> tuple[dict[str, FilePhase], list[tuple[str, str]]]:
    """Run every module's check_file over the files, in file order. A check stops at its first
    exception (the error names the file), exactly as a serial run does. `portable`: the results
    go to another process, so each file's parsed views are dropped as soon as it is done. `on_file`
    is called after each file (progress)."""
    phases = {name: FilePhase() for name in modules}
    parse_errors: list[tuple[str, str]] = []
    since_trim = 0
    for ctx in contexts:
        found = sum(len(phase.findings) for phase in phases.values()) if portable else 0
        for name, module in modules.items():
            phase = phases[name]
            if phase.error is not None:
                continue
            t0 = time.perf_counter()
            try:
                phase.findings.extend(module.check_file(ctx))
            except Exception as exc:  # a crashing check is reported as its error, never a pass
                phase.error = f"{type(exc).__name__}: {exc} while checking {ctx.path}"
            phase.seconds += time.perf_counter() - t0
        if ctx.language == "python" and ctx._parsed and ctx.parse_error:
            parse_errors.append((ctx.path, ctx.parse_error))
        if portable:
            if sum(len(phase.findings) for phase in phases.values()) > found:
                ctx.keep_comment_lines()  # what the inline suppressions of these findings read
            since_trim += _weight(ctx)
            ctx.drop_views()
            if since_trim >= TRIM_LINES:  # a file's AST is freed in pieces the C heap keeps unless asked
                _return_freed_memory()
                since_trim = 0
        if on_file is not None:
            on_file()
    return phases, parse_errors


# What the forked workers run: set just before the pool forks, inherited, never pickled.
_JOB: tuple | None = None


def _run_part(index: int):
    fn, parts = _JOB
    return fn(parts[index])


def _die_with_parent(parent: int) -> None:
    """Initializer of every worker: it must never outlive the run that forked it (a Ctrl-C or a
    SIGTERM to a pre-commit hook would otherwise leave workers behind, holding CPU and memory).

    On Linux the kernel sends the worker SIGKILL when its parent dies, however it dies (even by
    SIGKILL); elsewhere a daemon thread watches for the parent to go. A worker ignores SIGINT: a
    terminal's Ctrl-C reaches the whole process group, and the parent, not each worker, ends the run."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _unblock_stop_signals()  # blocked by the parent while it forked (see _stop_signals_held): a pending
    # Ctrl-C is discarded now that it is ignored, a pending SIGTERM ends this worker
    if not _parent_death_signal():
        import threading

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.2)
            os._exit(1)

        threading.Thread(target=watch, name="sentinel-parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _parent_death_signal() -> bool:
    """prctl(PR_SET_PDEATHSIG, SIGKILL); False where there is no such call."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def map_forked(fn, parts: list, workers: int | None = None, local_first: bool = True,
               share: bool = False, tick=None) -> list:
    """[fn(part) for part in parts] on forked workers, results in order. fn and the parts are
    inherited by the fork; only results are pickled back. With `local_first` this process computes
    the first part while `workers` (default: one per other part) take the rest, as they free up.
    With `share` this process also takes parts no worker has started yet, from the last one back
    (the workers go from the first one on), so it works instead of waiting: the same cores need one
    fork fewer, and each fork holds pages of everything this process holds.
    An exception raised by fn in a worker is raised here; a part whose worker died is redone here.
    However this call ends — an exception, Ctrl-C, SIGTERM — no worker outlives it. `tick`, when
    given, is called about ten times a second while this process waits for the workers (progress)."""
    global _JOB
    remote = list(range(1 if local_first else 0, len(parts)))
    if not remote:
        return [fn(part) for part in parts]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    _JOB = (fn, parts)
    pool = ProcessPoolExecutor(max_workers=min(workers or len(remote), len(remote)),
                               mp_context=multiprocessing.get_context("fork"),
                               initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        with _terminate_on_sigterm():
            with _stop_signals_held():
                futures = {i: pool.submit(_run_part, i) for i in remote}
            done = {0: fn(parts[0])} if local_first else {}
            for i in reversed(remote) if share else ():
                if not futures[i].cancel():
                    break  # a worker has it, and every part before it
                done[i] = fn(parts[i])
            results = [done[0]] if local_first else []
            for i in remote:
                if i in done:
                    results.append(done[i])
                    continue
                if tick is not None:
                    _wait_ticking(futures[i], tick)
                try:
                    results.append(futures[i].result())
                except (BrokenProcessPool, EOFError):
                    results.append(fn(parts[i]))
        pool.shutdown(wait=True)
    except BaseException:
        _stop(pool)  # do not wait for work nobody will read
        raise
    finally:
        _JOB = None
    return results


def _wait_ticking(future, tick) -> None:
    from concurrent.futures import wait

    while not future.done():
        wait([future], timeout=0.1)
        tick()


def _stop(pool) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)  # (shutdown forgets it)
    for proc in processes:
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        try:
            proc.join(timeout=1)
        except (OSError, ValueError, AttributeError, AssertionError):
            pass
    # The pool's manager thread closes its wake-up pipe once it sees the workers gone. On Python before 3.12 the
    # interpreter's exit writes to that pipe without a lock (CPython gh-125451): racing the close, it printed
    # "Exception ignored ... Bad file descriptor" after a SIGTERM. Waiting for the thread here leaves no race.
    if manager is not None:
        manager.join(timeout=2)


_STOP_SIGNALS = ("SIGINT", "SIGTERM")


class _stop_signals_held:
    """Ctrl-C and SIGTERM wait while the pool forks its workers (they come at the next bytecode once it
    has): raised between a worker's start and its registration in the pool, they would leave a worker
    nobody stops, and the interpreter would wait for it at exit forever. The workers inherit the block
    and lift it in their initializer."""

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if hasattr(signal, "pthread_sigmask") and threading.current_thread() is threading.main_thread():
            self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, _stop_signal_set())
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            import signal

            signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def _stop_signal_set() -> set:
    import signal

    return {getattr(signal, name) for name in _STOP_SIGNALS if hasattr(signal, name)}


def _unblock_stop_signals() -> None:
    import signal

    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _stop_signal_set())


class _terminate_on_sigterm:
    """While workers run, SIGTERM raises SystemExit in this process (its default would end it at
    once, leaving the stopping of workers to the kernel alone), so map_forked stops them first.
    Only from the main thread, where Python runs signal handlers."""

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
            self.previous = signal.signal(signal.SIGTERM, _raise_exit)
        return self

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGTERM, self.previous)


def _raise_exit(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _analyse_part(modules: dict, part: list, shared_count=None):
    """`analyse` of a shard in a worker, and the comment lines it kept (by position in the shard).
    `shared_count`: a counter in memory shared with the parent, one more for each file done (progress)."""
    on_file = None
    if shared_count is not None:
        def on_file() -> None:
            with shared_count.get_lock():
                shared_count.value += 1
    phases, errors = analyse(modules, part, portable=True, on_file=on_file)
    return phases, errors, [(i, ctx._comment_lines) for i, ctx in enumerate(part) if ctx._comment_lines is not None]


def _return_freed_memory() -> None:
    """Give the C heap's free memory back to the system (glibc's malloc_trim): reading and decoding a large
    change frees as much as it keeps, and a fork's resident pages include that free memory too."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim): nothing to give back this way
        pass


def analyse_parallel(modules: dict, contexts: list, jobs: int,
                     progress=None) -> tuple[dict[str, FilePhase], list[tuple[str, str]]]:
    """`analyse` over `jobs` processes, merged in file order; `progress(done, total)` hears of the files done."""
    # Shards taken as processes free up, smaller and smaller (see shards): one process finishing
    # early would idle a core.
    parts = shards(contexts, jobs, MIN_SHARD_LINES)
    shared = tick = None
    if progress is not None:
        import multiprocessing

        shared = multiprocessing.get_context("fork").Value("q", 0)  # inherited by the forked workers
        tick = lambda: progress(shared.value, len(contexts))  # noqa: E731
    _return_freed_memory()  # what reading the change left free is not inherited by every fork
    # jobs - 1 forks and this process: a forked worker's memory counts the pages it shares with this one
    # (the whole change), so one fork fewer on the same cores is a third less memory on two of them.
    results = map_forked(lambda part: _analyse_part(modules, part, shared), parts, workers=max(jobs - 1, 1),
                         local_first=False, share=True, tick=tick)
    merged = {name: FilePhase() for name in modules}
    parse_errors: list[tuple[str, str]] = []
    for part, (phases, errors, comment_lines) in zip(parts, results):
        for i, lines in comment_lines:
            part[i]._comment_lines = lines  # the files with findings: their suppressions are read here
        for name, phase in phases.items():
            target = merged[name]
            target.seconds += phase.seconds
            if target.error is None:
                target.findings.extend(phase.findings)
                target.error = phase.error
        parse_errors.extend(errors)
    return merged, parse_errors
