"""Peak memory against input size (issue 11 §3: peak RSS <= 5 x the input above the interpreter's baseline).

Runs the installed ``sentinel check --diff FILE`` on diffs that add real Python source (this checkout's own
modules, repeated under new paths) of several sizes, plain ASCII and with one wide character (an emoji and a
byte that is not UTF-8: decoded whole, such a diff would take 4 bytes a character). The baseline is the same
command on a one-file diff, measured in the same rounds, interleaved. Prints, per input, the median peak
RSS, the peak above the baseline and its ratio to the input size.

    nice python benchmarks/memory.py [--sizes 5,20] [--rounds 3] [--sentinel PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MB = 1024 * 1024


def make_diff(target: int, wide: bool) -> bytes:
    sources = sorted((HERE.parent / "sentinel").rglob("*.py"))
    texts = [p.read_text(encoding="utf-8") for p in sources]
    out, size, i = [], 0, 0
    while size < target:
        lines = texts[i % len(texts)].split("\n")
        if lines[-1] == "":
            lines.pop()
        path = f"pkg{i}/m{i}.py"
        section = (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
                   f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines)).encode()
        out.append(section)
        size += len(section)
        i += 1
    data = b"".join(out)
    if wide:  # an empty added line becomes a comment holding both: the line count stays
        data = data.replace(b"\n+\n", b"\n+# " + "\U0001F642 caf".encode() + b"\xe9\n", 1)
    return data


def peak_rss(script: str, diff: Path, cwd: Path) -> tuple[int, int]:
    proc = subprocess.Popen([script, "check", "--diff", str(diff), "--no-memory", "--format", "json", "-o",
                             str(cwd / "out.json")], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stderr.close()
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024


def write_inputs(work: Path, names: list[str]) -> None:
    for name in names:
        if name == "baseline":
            data = make_diff(1, False)
        else:
            mb, _, kind = name.split(" ")
            data = make_diff(int(mb) * MB, kind == "wide")
        (work / (name.replace(" ", "_") + ".diff")).write_bytes(data)


def main() -> int:
    if sys.argv[1:2] == ["--write"]:
        write_inputs(Path(sys.argv[2]), sys.argv[3:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="5,20", help="input sizes in MB, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sentinel", default=shutil.which("sentinel") or str(Path(sys.executable).with_name("sentinel")))
    args = ap.parse_args()
    if not hasattr(os, "wait4"):
        print("skipped: needs os.wait4 (POSIX)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="sentinel-mem-"))
    try:
        names = ["baseline"] + [f"{mb} MB {kind}" for mb in args.sizes.split(",") for kind in ("ascii", "wide")]
        files = {name: work / (name.replace(" ", "_") + ".diff") for name in names}
        # Written by another process: Linux counts the RSS of the process that starts a command in the
        # command's peak (ru_maxrss survives exec), so this one stays as small as it can.
        subprocess.run([sys.executable, __file__, "--write", str(work), *names], check=True)
        sizes = {name: path.stat().st_size for name, path in files.items()}
        peaks: dict[str, list[int]] = {name: [] for name in names}
        for _ in range(args.rounds):
            for name, path in files.items():  # interleaved: load on the machine hits every input alike
                code, peak = peak_rss(args.sentinel, path, work)
                if code not in (0, 1):
                    print(f"{name}: exit {code}")
                    return 1
                peaks[name].append(peak)
        base = statistics.median(peaks["baseline"])
        print(f"baseline (a one-file diff): {base / MB:.0f} MB peak RSS; {args.rounds} rounds, medians")
        worst = 0.0
        for name, values in peaks.items():
            if name == "baseline":
                continue
            peak = statistics.median(values)
            ratio = (peak - base) / sizes[name]
            worst = max(worst, ratio)
            print(f"{name:>14}: input {sizes[name] / MB:6.1f} MB, peak {peak / MB:6.0f} MB, "
                  f"above baseline {(peak - base) / MB:6.0f} MB = {ratio:.1f} x input")
        print(f"worst: {worst:.1f} x input (target <= 5 x)")
        return 0 if worst <= 5 else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
