"""Whole-process timing of `sentinel check` on real commits, against a floor and peer linters.

Needs ../shared/corpus (real commits of flask, requests, sqlalchemy; see its README) and, for
the peers, `pip install ruff flake8 bandit detect-secrets`. Skips cleanly when either is absent.

For each repository, the p50 and p95 commits (by added lines) are rebuilt as real git
repositories with the change staged, exactly as a pre-commit hook sees them, and sentinel runs
from a non-editable install in its own virtualenv, as pre-commit installs it. In the same run
we time the floor (`python -c pass`, `git diff --cached`) and the peers on the same files,
and print medians and ratios. Whole-tree diffs (flask, sqlalchemy) measure scaling.

    python benchmarks/bench_check.py [--runs 7] [--shared ../shared] [--json out.json]
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


# Measure as users run it: with byte-code caches (some sandboxes disable writing them).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], cwd: str, runs: int, stdin: bytes | None = None) -> list[float]:
    times = []
    subprocess.run(cmd, cwd=cwd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
        times.append(time.perf_counter() - t)
    return times


def build_repo(fixture: dict, where: Path) -> list[str]:
    """Commit the `before` files, write the `after` files and stage them; return changed .py paths."""
    where.mkdir(parents=True)
    git = lambda *a: subprocess.run(["git", *a], cwd=where, check=True, capture_output=True)  # noqa: E731
    git("init", "-q")
    git("config", "user.email", "b@example.com")
    git("config", "user.name", "bench")
    for f in fixture["files"]:
        src = f.get("old_path") or f["path"]
        if f.get("before") is not None:
            p = where / src
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f["before"], encoding="utf-8")
    git("add", "-A")
    git("commit", "-q", "--allow-empty", "-m", "before")
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
    git("add", "-A")
    return changed


def hook_env(where: Path) -> str:
    """A virtualenv with sentinel installed the way pre-commit installs a hook (`pip install .`, not
    editable: an editable install adds an import finder to every interpreter start), its
    dependencies borrowed from this environment through a .pth line. Returns its python."""
    import compileall
    import sysconfig
    import venv

    venv.create(where, with_pip=False, symlinks=os.name != "nt")
    python = str(where / ("Scripts/python.exe" if os.name == "nt" else "bin/python"))
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", site, str(HERE.parent)],
                   check=True)
    Path(site, "_bench_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    compileall.compile_dir(os.path.join(site, "sentinel"), quiet=1)
    return python


def tool(name: str) -> str | None:
    cand = Path(sys.executable).parent / name
    return str(cand) if cand.exists() else shutil.which(name)


def peers(files: list[str]) -> dict[str, list[str]]:
    out = {}
    if tool("ruff"):
        out["ruff"] = [tool("ruff"), "check", "--no-cache", "--quiet", "--exit-zero", *files]
    if tool("flake8"):
        out["flake8"] = [tool("flake8"), "--exit-zero", *files]
    if tool("bandit"):
        out["bandit"] = [tool("bandit"), "-q", "--exit-zero", *files]
    if tool("detect-secrets"):
        out["detect-secrets"] = [tool("detect-secrets"), "scan", *files]
    return out


def fmt(t: float) -> str:
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--whole-tree-runs", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    corpus = Path(args.shared) / "corpus"
    if not corpus.is_dir():
        print(f"benchmark skipped: {corpus} not found (the shared corpus is not part of a user's clone)")
        return 0
    targets = json.loads((corpus / "timing_targets.json").read_text())
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-bench-"))
    try:
        python = hook_env(tmp / "hook-env")
        # What the `sentinel` console script does (pre-commit's `entry: sentinel check`), memory on.
        sentinel = [python, "-c", "import re, sys; from sentinel.cli import run; sys.exit(run())", "check"]
        for repo_name, t in targets.items():
            fixtures = {}
            with open(corpus / f"{repo_name}.fixtures.jsonl", encoding="utf-8") as fh:
                for line in fh:
                    rec = json.loads(line)
                    if rec["sha"] in (t["p50"], t["p95"]):
                        fixtures[rec["sha"]] = rec
            for label in ("p50", "p95"):
                fx = fixtures[t[label]]
                where = tmp / f"{repo_name}-{label}"
                files = build_repo(fx, where)
                cwd = str(where)
                row = {"target": f"{repo_name} {label} ({t[label + '_added']} added lines)"}
                row["python -c pass"] = statistics.median(timed([python, "-c", "pass"], cwd, args.runs))
                row["git diff --cached"] = statistics.median(timed(["git", "diff", "--cached"], cwd, args.runs))
                row["sentinel"] = statistics.median(timed(sentinel, cwd, args.runs))
                for name, cmd in peers(files).items():
                    row[name] = statistics.median(timed(cmd, cwd, args.runs)) if files else None
                rows.append(row)
                print(json.dumps({k: (fmt(v) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
        for name in ("flask", "sqlalchemy"):
            diff = corpus / "whole-tree" / f"{name}.diff"
            cwd = str(tmp)
            row = {"target": f"{name} whole tree (--diff)"}
            row["python -c pass"] = statistics.median(timed([python, "-c", "pass"], cwd, args.runs))
            row["sentinel"] = statistics.median(timed([*sentinel, "--diff", str(diff)], cwd, args.whole_tree_runs))
            rows.append(row)
            print(json.dumps({k: (fmt(v) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cols = ["python -c pass", "git diff --cached", "sentinel", "ruff", "flake8", "bandit", "detect-secrets"]
    print("\n| target | " + " | ".join(cols) + " | sentinel / flake8 |")
    print("|---" * (len(cols) + 2) + "|")
    for r in rows:
        cells = [fmt(r[c]) if isinstance(r.get(c), float) else "—" for c in cols]
        ratio = f"{r['sentinel'] / r['flake8']:.2f}" if isinstance(r.get("flake8"), float) else "—"
        print(f"| {r['target']} | " + " | ".join(cells) + f" | {ratio} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
