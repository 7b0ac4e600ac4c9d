"""Evaluate `--fix` on real commits: do the fixes hold on code nobody wrote for them?

Replays the commits of ../shared/corpus/noise (werkzeug, jinja, starlette, pytest, typer) and the
flask/requests/sqlalchemy fixtures as real git repositories with the change staged (what the hook sees),
gates every changed file whole (filter mode `file`, so the fixers meet real code rather than the few
findings a precise gate reports on added lines), counts what plain `--fix` would fix, plans every fix
(unsafe ones included), writes the
fixed files, stages them and gates again. For each rule it reports the findings a fixer exists for,
how many were fixed and why the others were refused, whether each fixed finding is gone on the second
run, and any finding the fixes introduced. Python results are also checked to parse, and layout fixes
to leave the AST unchanged.

    python benchmarks/eval_fixes.py [--limit N]     # skips cleanly without ../shared
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "corpus"
sys.path.insert(0, str(HERE.parent))

from sentinel import engine, sources  # noqa: E402
from sentinel.config import load_config  # noqa: E402
from sentinel.fix import planner  # noqa: E402
from sentinel.models import FilterMode  # noqa: E402


def commits():
    for path in sorted((SHARED / "noise").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                yield json.loads(line)
    for name in ("flask", "requests", "sqlalchemy"):
        path = SHARED / f"{name}.fixtures.jsonl"
        if path.exists():
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    yield json.loads(line)


def git(where: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)


def build(rec: dict, where: Path) -> bool:
    where.mkdir(parents=True)
    git(where, "init", "-q")
    git(where, "config", "user.email", "e@example.com")
    git(where, "config", "user.name", "eval")
    for rel, text in (rec.get("config") or {}).items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        (where / rel).write_bytes(text.encode("utf-8"))
    for f in rec["files"]:
        src = f.get("old_path") or f["path"]
        if f.get("before") is not None:
            (where / src).parent.mkdir(parents=True, exist_ok=True)
            (where / src).write_bytes(f["before"].encode("utf-8"))
    git(where, "add", "-A")
    git(where, "commit", "-q", "--allow-empty", "-m", "before")
    any_after = False
    for f in rec["files"]:
        old = f.get("old_path")
        if old and old != f["path"] and (where / old).exists():
            (where / old).unlink()  # sentinel: ignore[SEN103] - a rename replayed in the temp repository
        if f.get("after") is None:
            if f.get("status", "").startswith("D") and (where / f["path"]).exists():
                (where / f["path"]).unlink()  # sentinel: ignore[SEN103] - a deletion replayed likewise
            continue
        (where / f["path"]).parent.mkdir(parents=True, exist_ok=True)
        (where / f["path"]).write_bytes(f["after"].encode("utf-8"))
        any_after = True
    git(where, "add", "-A")
    return any_after


def gate(where: Path):
    change = sources.staged(str(where))
    config = load_config(str(where), None)
    verdict = engine.run(change, config, engine.RunOptions(filter_mode=FilterMode.FILE, jobs=1, use_baseline=False))
    return change, config, verdict


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="at most N commits")
    args = ap.parse_args()
    if not SHARED.exists():
        print(f"skipped: {SHARED} is not here")
        return 0
    fixable = planner.fix_safety()
    seen = Counter()
    fixed = Counter()
    fixed_safe = Counter()  # what plain --fix (no --unsafe-fixes) would fix
    gone = Counter()
    still = Counter()
    introduced = Counter()
    refused = defaultdict(Counter)
    file_refusals = Counter()
    broken = []
    n = 0
    for rec in commits():
        if args.limit and n >= args.limit:
            break
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(tmp) / "r"
            if not build(rec, where):
                continue
            change, config, verdict = gate(where)
            plan = planner.plan(change, verdict.findings, config, unsafe=True)
            for fp in planner.plan(change, verdict.findings, config).changed_files:
                fixed_safe.update(fx.finding.rule for fx in fp.fixes)
            for f in verdict.findings:
                if f.rule in fixable:
                    seen[f.rule] += 1
            for path, why in plan.refused:
                file_refusals[why.split(":")[0]] += 1
            for fp in plan.files:
                for f, why in fp.not_fixed:
                    refused[f.rule][why if len(why) < 90 else why[:87] + "..."] += 1
            before_counts = Counter((f.path, f.rule) for f in verdict.findings)
            changed = plan.changed_files
            if not changed:
                continue
            for fp in changed:
                if fp.path.endswith(".py"):
                    try:
                        ast.parse(fp.after)
                    except SyntaxError as exc:
                        broken.append(f"{rec['repo']}@{rec['sha'][:8]} {fp.path}: {exc}")
                for fx in fp.fixes:
                    fixed[fx.finding.rule] += 1
                (where / fp.path).write_bytes(fp.after.encode("utf-8"))
            git(where, "add", "-A")
            _, _, again = gate(where)
            after_counts = Counter((f.path, f.rule) for f in again.findings)
            for fp in changed:
                by_rule = Counter(fx.finding.rule for fx in fp.fixes)
                for rule, k in by_rule.items():
                    left = after_counts[(fp.path, rule)]
                    expected = before_counts[(fp.path, rule)] - k
                    gone[rule] += min(k, max(before_counts[(fp.path, rule)] - left, 0))
                    still[rule] += max(left - expected, 0)
                for (path, rule), k in after_counts.items():
                    if path == fp.path and k > before_counts[(path, rule)]:
                        introduced[rule] += k - before_counts[(path, rule)]
    print(f"{n} commits replayed, changed files gated whole (filter mode file), unsafe fixes included\n")
    print("| rule | fix | findings | fixed by --fix | fixed with --unsafe-fixes | gone on the second run | "
          "refused with --unsafe-fixes (top reasons) |")
    print("|---|---|---|---|---|---|---|")
    for rule in sorted(fixable):
        reasons = "; ".join(f"{k}x {why}" for why, k in refused[rule].most_common(3))
        print(f"| {rule} | {fixable[rule]} | {seen[rule]} | {fixed_safe[rule]} | {fixed[rule]} | {gone[rule]} | "
              f"{reasons} |")
    print(f"\nfindings the fixes introduced: {dict(introduced) or 'none'}")
    print(f"fixed findings still reported: {dict(still) or 'none'}")
    print(f"files refused whole: {dict(file_refusals) or 'none'}")
    print(f"Python files that no longer parse: {len(broken)}")
    for b in broken[:10]:
        print("  " + b)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
