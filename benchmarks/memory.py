"""Peak memory against input size, summed over every process of a run (target: <= 5 x the input above the
baseline), for the three ways a large change reaches the gate: staged, `--diff FILE` and `--all-files`.

Runs the installed ``sentinel check`` on changes that add real Python source (this checkout's own modules,
repeated under new paths) of several sizes, plain ASCII and with one wide character (an emoji and a byte that is
not UTF-8: decoded whole, such a diff would take 4 bytes a character). While a run lasts, its whole process tree
(the command, its forked workers, the git processes it starts) is sampled every 10 ms from /proc: the peak of the
summed RSS, of the summed PSS (shared pages split between the processes that share them: what the machine
really holds) and the largest single process (its own high-water mark). The baseline is the same command on a
one-file change, measured in the same rounds, interleaved. Prints, per mode and input, the medians and their
ratio to the input's size (the added content; for --diff the diff file).

    nice python benchmarks/memory.py [--sizes 5,20] [--modes diff,staged,all-files] [--rounds 3] [--sentinel PATH]
                                     [--wide]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MB = 1024 * 1024
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def make_files(target: int, wide: bool) -> list[tuple[str, bytes]]:
    """(path, content) of new files holding about `target` bytes of this checkout's own source."""
    sources = sorted((HERE.parent / "sentinel").rglob("*.py"))
    texts = [p.read_bytes() for p in sources]
    out, size, i = [], 0, 0
    while size < max(target, 1):
        data = texts[i % len(texts)]
        if not data.endswith(b"\n"):
            data += b"\n"
        out.append((f"pkg{i}/m{i}.py", data))
        size += len(data)
        i += 1
    if wide:  # an empty line becomes a comment holding both: the line count stays
        path, data = out[0]
        out[0] = (path, data.replace(b"\n\n", b"\n# " + "\U0001F642 caf".encode() + b"\xe9\n", 1))
    return out


def make_diff(files: list[tuple[str, bytes]]) -> bytes:
    parts = []
    for path, data in files:
        lines = data.split(b"\n")[:-1]
        parts.append(f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
                     f"@@ -0,0 +1,{len(lines)} @@\n".encode() + b"".join(b"+" + ln + b"\n" for ln in lines))
    return b"".join(parts)


def write_inputs(work: Path, name: str, mb: float, wide: bool) -> None:
    """A repository with the files staged (`staged`), one with them committed (`all-files`) and the diff."""
    files = make_files(int(mb * MB), wide)
    for mode in ("staged", "all-files"):
        repo = work / f"{name}.{mode}"
        repo.mkdir(parents=True)
        env = {**os.environ, **GIT_ENV}
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        (repo / "README").write_text("base\n")
        subprocess.run(["git", "add", "README"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-qm", "base"], cwd=repo, check=True, env=env)
        for path, data in files:
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_bytes(data)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
        if mode == "all-files":
            subprocess.run(["git", "commit", "-qm", "tree"], cwd=repo, check=True, env=env)
    (work / f"{name}.diff").write_bytes(make_diff(files))
    (work / f"{name}.size").write_text(str(sum(len(d) for _, d in files)))


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    except OSError:
        pass
    return out


def _tree(root: int) -> list[int]:
    seen, todo = [], [root]
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo += _children(pid)
    return seen


def _status(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes (0, 0 once it is gone)."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss, hwm


def _pss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(argv: list[str], cwd: Path) -> dict:
    """Run `argv`, sampling its process tree; peaks of summed RSS and PSS, the largest single process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SENTINEL_", "PRE_COMMIT_"))}
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak_rss = peak_pss = single = 0
    processes = set()
    while True:
        pids = _tree(proc.pid)
        processes.update(pids)
        rss_sum = pss_sum = 0
        for pid in pids:
            rss, hwm = _status(pid)
            rss_sum += rss
            pss_sum += _pss(pid)
            single = max(single, hwm)
        peak_rss, peak_pss = max(peak_rss, rss_sum), max(peak_pss, pss_sum)
        try:
            done, status, usage = os.wait4(proc.pid, os.WNOHANG)
        except ChildProcessError:
            break
        if done:
            single = max(single, usage.ru_maxrss * 1024)
            break
        time.sleep(0.01)
    proc.stderr.close()
    return {"exit": os.waitstatus_to_exitcode(status), "rss": peak_rss, "pss": peak_pss, "single": single,
            "processes": len(processes)}


def command(script: str, mode: str, work: Path, name: str) -> tuple[list[str], Path]:
    out = ["--no-memory", "--format", "json", "-o", str(work / "out.json")]
    if mode == "diff":
        return [script, "check", "--diff", str(work / f"{name}.diff"), *out], work
    if mode == "staged":
        return [script, "check", *out], work / f"{name}.staged"
    return [script, "check", "--all-files", *out], work / f"{name}.all-files"


def main() -> int:
    if sys.argv[1:2] == ["--write"]:
        _, _, where, name, mb, wide = sys.argv
        write_inputs(Path(where), name, float(mb), wide == "wide")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5,20", help="input sizes in MB, comma-separated")
    ap.add_argument("--modes", default="diff,staged,all-files")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--wide", action="store_true", help="also inputs with one wide character")
    ap.add_argument("--sentinel", default=shutil.which("sentinel") or str(Path(sys.executable).with_name("sentinel")))
    args = ap.parse_args()
    if not hasattr(os, "wait4") or not os.path.exists("/proc/self/smaps_rollup"):
        print("skipped: needs Linux's /proc (smaps_rollup) and os.wait4")
        return 0
    modes = args.modes.split(",")
    work = Path(tempfile.mkdtemp(prefix="sentinel-mem-"))
    try:
        inputs = {"baseline": 0.0}
        for mb in args.sizes.split(","):
            inputs[f"{mb}MB-ascii"] = float(mb)
            if args.wide:
                inputs[f"{mb}MB-wide"] = float(mb)
        for name, mb in inputs.items():
            # Written by another process: Linux counts the RSS of the process that starts a command in the
            # command's peak (ru_maxrss survives exec), so this one stays as small as it can.
            subprocess.run([sys.executable, __file__, "--write", str(work), name, str(mb),
                            "wide" if name.endswith("wide") else "ascii"], check=True)
        sizes = {name: int((work / f"{name}.size").read_text()) for name in inputs}
        diff_sizes = {name: (work / f"{name}.diff").stat().st_size for name in inputs}
        runs: dict[tuple[str, str], list[dict]] = {}
        for _ in range(args.rounds):
            for mode in modes:
                for name in inputs:  # interleaved: load on the machine hits every input alike
                    argv, cwd = command(args.sentinel, mode, work, name)
                    got = measure(argv, cwd)
                    if got["exit"] not in (0, 1):
                        print(f"{mode} {name}: exit {got['exit']}")
                        return 1
                    runs.setdefault((mode, name), []).append(got)
        print(f"{args.rounds} rounds, medians; ratios are (peak - baseline) / input")
        worst = 0.0
        for mode in modes:
            base = {k: statistics.median(r[k] for r in runs[(mode, "baseline")]) for k in ("rss", "pss", "single")}
            print(f"{mode}: baseline (one file) summed RSS {base['rss'] / MB:.0f} MB, PSS {base['pss'] / MB:.0f} MB, "
                  f"largest process {base['single'] / MB:.0f} MB")
            for name in inputs:
                if name == "baseline":
                    continue
                size = diff_sizes[name] if mode == "diff" else sizes[name]
                med = {k: statistics.median(r[k] for r in runs[(mode, name)]) for k in ("rss", "pss", "single")}
                procs = max(r["processes"] for r in runs[(mode, name)])
                ratio = {k: (med[k] - base[k]) / size for k in med}
                worst = max(worst, ratio["rss"])
                print(f"  {name:>11}: input {size / MB:6.1f} MB | summed RSS {med['rss'] / MB:6.0f} MB = "
                      f"{ratio['rss']:.1f}x | summed PSS {med['pss'] / MB:6.0f} MB = {ratio['pss']:.1f}x | largest "
                      f"process {med['single'] / MB:6.0f} MB = {ratio['single']:.1f}x | {procs} processes")
        print(f"worst summed RSS: {worst:.1f} x input (target <= 5 x)")
        return 0 if worst <= 5 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
