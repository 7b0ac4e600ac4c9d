"""Whole-process timing and memory of `sentinel check` on real commits, against a floor and a peer.

Needs ../shared/corpus (real commits of flask, requests, sqlalchemy; see its README) and, for the
peer, ruff on PATH (`pip install ruff`). Skips cleanly when the corpus is absent.

What is measured, in one run so that the machine's drift hits every command alike:

- the p50 and p95 commits (by added lines) of each repository, rebuilt as real git repositories with
  the change staged, exactly as a pre-commit hook sees them; `sentinel check` runs as the hook runs
  it (memory on: a failing change recalls similar fixes);
- the whole tree of flask and sqlalchemy (633K lines) as a staged all-added change in a real git
  repository (so the run records itself and recalls), the same index read whole (`--all-files`, as
  `pre-commit run --all-files` and a first adoption run it), and the tree given as a diff (`--diff`,
  memory off);
- against `python -c pass` (the interpreter's own start: the floor) and `ruff check` on the same
  files (the fastest peer), *interleaved*: every round runs each command once, in turn.

Sentinel runs from a non-editable install in its own virtualenv, as pre-commit installs it (an
editable install adds an import finder to every interpreter start). Each run's CPU time and peak
resident memory (the largest process of the run) come from the kernel's accounting (wait4).
Prints medians, the p95 run (nearest rank), median CPU, ratios to the floor and the peer, peak RSS per
added line, and the machine's load average around each target (the machine is shared: read the ratios).
Each p95 commit is also measured *failing at the default fail level*, so that the failing hook with recall — the
slow path — is measured on a change of that size (`failing_target`): the fixture commit nearest the p95 commit in
added lines whose staged change fails and recalls; when none does (the case for the three projects of the corpus:
none of their 150 fixture commits fails, staged, as a CI range or at commit-msg), the p95 commit plus one added
module with a bare `except:` that swallows a failure — an error in every configuration.

    python benchmarks/bench_check.py [--runs 11] [--whole-tree-runs 3] [--shared ../shared] [--json out.json]
                                     [--against REV]   # e.g. the last release: its medians, interleaved
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# With --against REV: (REV, the command line of that revision's `sentinel check`), run interleaved beside this one.
AGAINST: tuple[str, list[str]] | None = None

# Measure as users run it: with byte-code caches (some sandboxes disable writing them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("SENTINEL_")}


def run_once(cmd: list[str], cwd: str) -> tuple[float, float, int, int]:
    """(wall seconds, cpu seconds, peak RSS KiB of the largest process, exit code) of one run."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode


def interleaved(cmds: dict[str, list[str]], cwd: str, runs: int) -> dict[str, dict]:
    """Each command once per round, in turn, after one warm-up round; per command the runs' figures."""
    for cmd in cmds.values():
        run_once(cmd, cwd)
    samples: dict[str, list[tuple[float, float, int, int]]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            samples[name].append(run_once(cmd, cwd))
    out = {}
    for name, rows in samples.items():
        walls = [r[0] for r in rows]
        out[name] = {"median": statistics.median(walls), "max": max(walls), "p95": p95(walls),
                     "cpu": statistics.median(r[1] for r in rows), "rss_kib": max(r[2] for r in rows),
                     "exit": sorted({r[3] for r in rows})}
    return out


def p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (with 20 runs the 19th slowest; with fewer, the slowest)."""
    ordered = sorted(values)
    return ordered[max(0, -(-95 * len(ordered) // 100) - 1)]


def load() -> str:
    """The machine's 1-minute load average (2 cores: above 2, commands queue for a CPU)."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def git(where: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)


def new_repo(where: Path) -> None:
    where.mkdir(parents=True)
    git(where, "init", "-q")
    git(where, "config", "user.email", "b@example.com")
    git(where, "config", "user.name", "bench")
    git(where, "config", "commit.gpgsign", "false")


def build_repo(fixture: dict, where: Path) -> list[str]:
    """Commit the `before` files, write the `after` files and stage them; return changed .py paths."""
    new_repo(where)
    for f in fixture["files"]:
        src = f.get("old_path") or f["path"]
        if f.get("before") is not None:
            p = where / src
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f["before"], encoding="utf-8")
    git(where, "add", "-A")
    git(where, "commit", "-q", "--allow-empty", "-m", "before")
    changed = []
    for f in fixture["files"]:
        old = f.get("old_path")
        if old and old != f["path"] and (where / old).exists():
            (where / old).unlink()
        if f.get("after") is None:
            if (where / f["path"]).exists():
                (where / f["path"]).unlink()
            continue
        p = where / f["path"]
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f["after"], encoding="utf-8")
        if f["path"].endswith(".py"):
            changed.append(f["path"])
    git(where, "add", "-A")
    return changed


def tree_from_diff(diff: Path, where: Path) -> tuple[list[str], int]:
    """Write the files of an all-added diff into a new git repository (one empty commit, the tree
    staged); returns the .py paths and the number of added lines."""
    new_repo(where)
    git(where, "commit", "-q", "--allow-empty", "-m", "empty")
    files: list[str] = []
    added = 0
    out = None
    with open(diff, encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            if line.startswith("+++ b/"):
                if out:
                    out.close()
                rel = line[6:].rstrip("\n")
                p = where / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                out = open(p, "w", encoding="utf-8", errors="surrogateescape")
                files.append(rel)
            elif line.startswith("+") and out is not None:
                out.write(line[1:])
                added += 1
    if out:
        out.close()
    git(where, "add", "-A")
    return [f for f in files if f.endswith(".py")], added


def hook_env(where: Path, source: Path = HERE.parent) -> str:
    """A virtualenv with sentinel installed the way pre-commit installs a hook (`pip install .`, not
    editable), its dependencies borrowed from this environment through a .pth line. Returns its python."""
    import compileall
    import sysconfig
    import venv

    venv.create(where, with_pip=False, symlinks=os.name != "nt")
    python = str(where / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, str(source)],
                   check=True)
    Path(site, "_bench_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    compileall.compile_dir(os.path.join(site, "sentinel"), quiet=1)
    return python


def source_at(rev: str, where: Path) -> Path:
    """This repository's tree at `rev` (a commit, tag or branch), written out to install it beside this one."""
    where.mkdir(parents=True)
    # git's tar straight into tar: held in this process, it would swell the RSS every later child starts from
    archive = subprocess.Popen(["git", "archive", "--format=tar", rev], cwd=HERE.parent, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(where)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"git archive {rev} failed")
    return where


def ruff() -> str | None:
    cand = Path(sys.executable).parent / "ruff"
    return str(cand) if cand.exists() else shutil.which("ruff")


def fmt(t: float | None) -> str:
    if t is None:
        return "—"
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"


def measure(label: str, cwd: str, sentinel: list[str], python: str, files: list[str], runs: int,
            added: int, extra: dict[str, list[str]] | None = None) -> dict:
    cmds = {"python -c pass": [python, "-c", "pass"], "sentinel": sentinel}
    if AGAINST:  # another revision of Sentinel, the same arguments: in the same rounds
        rev, command = AGAINST
        cmds[f"sentinel@{rev}"] = command + sentinel[len(command):]
    if ruff() and files:
        cmds["ruff"] = [ruff(), "check", "--no-cache", "--quiet", "--exit-zero", *files]
    cmds.update(extra or {})
    load_before = load()
    res = interleaved(cmds, cwd, runs)
    row = {"target": label, "added_lines": added, "load": f"{load_before}-{load()}", **{k: v for k, v in res.items()}}
    s = res["sentinel"]
    row["sentinel/pass"] = s["median"] / res["python -c pass"]["median"]
    against = next((k for k in res if k.startswith("sentinel@")), None)
    row["sentinel/against"] = s["median"] / res[against]["median"] if against else None
    row["sentinel/ruff"] = s["median"] / res["ruff"]["median"] if "ruff" in res else None
    row["kib_per_line"] = s["rss_kib"] / added if added else None
    print(json.dumps({"target": label, "sentinel": fmt(s["median"]), "p95": fmt(s["p95"]), "max": fmt(s["max"]),
                      "load": row["load"],
                      "cpu": fmt(s["cpu"]), "rss_mib": round(s["rss_kib"] / 1024, 1), "exit": s["exit"],
                      "pass": fmt(res["python -c pass"]["median"]),
                      **({against: fmt(res[against]["median"]), "ratio": round(row["sentinel/against"], 3)}
                         if against else {}),
                      "ruff": fmt(res["ruff"]["median"]) if "ruff" in res else None}), flush=True)
    return row


# The one mistake added to the p95 change when no fixture commit fails (6 lines): a bare `except:` that swallows
# a failure, an error at the default fail level in every configuration and file role of product code.
MISTAKE = ("def load_settings(path):\n    try:\n        with open(path) as fh:\n            return fh.read()\n"
           "    except:\n        return ''\n")
MISTAKE_PATH = "bench_mistake.py"


def fails_with_recall(where: Path, sentinel: list[str]) -> bool:
    """Does the staged change fail at the default fail level (exit 1, no config) and recall similar fixes?"""
    probe = subprocess.run([*sentinel, "--format", "json"], cwd=where, capture_output=True, text=True, env=ENV)
    try:
        report = json.loads(probe.stdout)
    except ValueError:
        return False
    return probe.returncode == 1 and bool(report.get("recall"))


def added_lines(fixture: dict) -> int:
    """Lines the commit adds to .py files (difflib counts within 1% of the timing targets' git counts)."""
    import difflib

    n = 0
    for f in fixture["files"]:
        if not f["path"].endswith(".py") or f.get("after") is None:
            continue
        before, after = (f.get("before") or "").splitlines(), f["after"].splitlines()
        for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
            n += j2 - j1 if tag in ("replace", "insert") else 0
    return n


def failing_target(fixtures: list[dict], p95: dict, p95_added: int, tmp: Path,
                   sentinel: list[str]) -> tuple[Path, list[str], int, str]:
    """(staged repository, .py files, added lines, label) of the failing figure, by the rule of the module
    docstring: the fixture commit nearest the p95 commit in added lines (ties: the smaller) that fails at the
    default fail level with recall, else the p95 commit plus MISTAKE."""
    for fx in sorted(fixtures, key=lambda f: (abs(added_lines(f) - p95_added), added_lines(f))):
        where = tmp / f"probe-{fx['sha'][:12]}"
        files = build_repo(fx, where)
        if fails_with_recall(where, sentinel):
            n = added_lines(fx)
            return where, files, n, f"{fx['sha'][:10]} ({n} added lines; the nearest fixture that fails)"
        shutil.rmtree(where, ignore_errors=True)  # sentinel: ignore[SEN103] the probe this loop built in tmp
    where = tmp / f"failing-{p95['sha'][:12]}"
    files = build_repo(p95, where)
    (where / MISTAKE_PATH).write_text(MISTAKE, encoding="utf-8")
    git(where, "add", MISTAKE_PATH)
    if not fails_with_recall(where, sentinel):
        raise SystemExit(f"the failing variant of {p95['sha'][:10]} does not fail with recall")
    n = p95_added + MISTAKE.count("\n")
    return where, [*files, MISTAKE_PATH], n, (f"p95 + a bare except ({n} added lines; no fixture fails at the "
                                               "default level)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--whole-tree-runs", type=int, default=3)
    ap.add_argument("--only", choices=("commits", "whole-tree"), help="measure one part only")
    ap.add_argument("--against", metavar="REV", help="also run this git revision of Sentinel (installed the same "
                    "way) in the same interleaved rounds, and print this tree's median over its")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    corpus = Path(args.shared) / "corpus"
    if not corpus.is_dir():
        print(f"benchmark skipped: {corpus} not found (the shared corpus is not part of a user's clone)")
        return 0
    if not ruff():
        print("note: ruff is not installed: the peer column stays empty (pip install ruff)")
    targets = json.loads((corpus / "timing_targets.json").read_text())
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-bench-"))
    try:
        python = hook_env(tmp / "hook-env")
        # What the `sentinel` console script does (pre-commit's `entry: sentinel check`), memory on.
        entry = ["-c", "import sys; from sentinel.cli import run; sys.exit(run())", "check"]
        sentinel = [python, *entry]
        if args.against:
            global AGAINST
            other = hook_env(tmp / "against-env", source_at(args.against, tmp / "against-src"))
            AGAINST = (args.against, [other, *entry])
        if args.only != "whole-tree":
            for repo_name, t in targets.items():
                with open(corpus / f"{repo_name}.fixtures.jsonl", encoding="utf-8") as fh:
                    every = [json.loads(line) for line in fh]
                fixtures = {rec["sha"]: rec for rec in every if rec["sha"] in (t["p50"], t["p95"])}
                for label in ("p50", "p95"):
                    where = tmp / f"{repo_name}-{label}"
                    files = build_repo(fixtures[t[label]], where)
                    rows.append(measure(f"{repo_name} {label} ({t[label + '_added']} added lines)", str(where),
                                        sentinel, python, files, args.runs, t[label + "_added"],
                                        {"git diff --cached": ["git", "diff", "--cached"]}))
                    if label == "p95":
                        # The target is a change that *fails* at the default fail level and recalls: a bare
                        # `sentinel check`, no configuration (failing_target says which change, and why).
                        failing, failing_files, n, what = failing_target(every, fixtures[t["p95"]],
                                                                         t["p95_added"], tmp, sentinel)
                        rows.append(measure(f"{repo_name} failing: {what}; recall runs", str(failing), sentinel,
                                            python, failing_files, args.runs, n,
                                            {"git diff --cached": ["git", "diff", "--cached"]}))
        if args.only != "commits":
            for name in ("flask", "sqlalchemy"):
                diff = corpus / "whole-tree" / f"{name}.diff"
                where = tmp / f"{name}-tree"
                files, added = tree_from_diff(diff, where)
                rows.append(measure(f"{name} whole tree, staged in git ({added // 1000}K lines; recall runs)",
                                    str(where), sentinel, python, files, args.whole_tree_runs, added))
                # What `pre-commit run --all-files` and a first adoption run: the index's files read whole.
                rows.append(measure(f"{name} whole tree, --all-files ({added // 1000}K lines; recall runs)",
                                    str(where), [*sentinel, "--all-files"], python, files, args.whole_tree_runs,
                                    added))
                rows.append(measure(f"{name} whole tree, --diff ({added // 1000}K lines; memory off)", str(tmp),
                                    [*sentinel, "--diff", str(diff), "--no-memory"], python,
                                    [str(where / f) for f in files], args.whole_tree_runs, added))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cols = ["python -c pass", "git diff --cached", "sentinel", "ruff"]
    vs = f"sentinel@{args.against}" if args.against else None
    print("\n| target | " + " | ".join(cols) + " | sentinel p95 | sentinel CPU | sentinel / pass | sentinel / ruff "
          "| sentinel peak RSS | per added line | load |" + (f" {vs} | its p95 | sentinel / {vs} |" if vs else ""))
    print("|---" * (len(cols) + 8 + (3 if vs else 0)) + "|")
    for r in rows:
        cells = [fmt(r[c]["median"]) if isinstance(r.get(c), dict) else "—" for c in cols]
        ratio_ruff = f"{r['sentinel/ruff']:.1f}" if r.get("sentinel/ruff") else "—"
        per_line = f"{r['kib_per_line']:.2f} KiB" if r.get("kib_per_line") else "—"
        against = (f" {fmt(r[vs]['median'])} | {fmt(r[vs]['p95'])} | {r['sentinel/against']:.2f} |"
                   if vs and isinstance(r.get(vs), dict) else "")
        print(f"| {r['target']} | " + " | ".join(cells) + f" | {fmt(r['sentinel']['p95'])} "
              f"| {fmt(r['sentinel']['cpu'])} | {r['sentinel/pass']:.1f} | {ratio_ruff} "
              f"| {r['sentinel']['rss_kib'] / 1024:.0f} MiB | {per_line} | {r['load']} |" + against)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
