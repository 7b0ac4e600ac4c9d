"""Recall at the moment of failure, measured as a user meets it: after `sentinel memory learn`, a real bug pattern is
injected into a function that has a past fix, the change is staged, and the installed `sentinel check` fails —
does the failure show that function's own past fix among the similar fixes of its group (top 3)?

    python benchmarks/eval_injected.py [--data /work/data] [--only OWNER/NAME ...] [--per-history 10]
        [--sentinel PATH] [--against PATH] [--out FILE]

For each history (a clone under --data, never committed here): a work tree at HEAD, `memory learn` with the
installed CLI, then the learned cards (<git-dir>/sentinel/learned.sqlite3). Which functions each card's fix
changed is read by this script from git and the AST (the post-image of each fixing commit: its changed lines
mapped onto the definitions that hold them) — not from the card's own tags, so the judgement does not depend on
what is measured. Targets: functions of a source file at HEAD (same file, same qualified name) changed by at least
one card's fix, sampled with a fixed seed. Injections, each a real bug pattern the gate blocks at its default
level:

- a handler that names its exception (`except OSError as exc:`) becomes a bare `except:` (SEN301);
- otherwise the function's first one-line statement is wrapped in `try: ... except Exception: pass` (SEN302).

A hit: one of the group's first three similar fixes is a card whose fix changed that function. Also counted: what
the shown slots held (this project's cards, other projects', general guidance). `--against` runs a second
`sentinel` (another revision) on the same injections in the same run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import histories  # noqa: E402
from eval_retrieval import HISTORIES, card_commits, norm_path  # noqa: E402

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_NARROW = re.compile(r"^(?P<indent>[ \t]*)except\s+(?!Exception\b|BaseException\b)[A-Za-z_][\w.]*"
                     r"(?:\s*,\s*[A-Za-z_][\w.]*)*(?:\s+as\s+\w+)?\s*:\s*(?P<tail>#.*)?$")


def git(repo: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, errors="replace")
    if check and proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()[-400:]}")
    return proc.stdout


def definitions(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and method, decorators included."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = prefix + child.name
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    out.append((first, child.end_lineno or child.lineno, qual))
                walk(child, qual + ".")
            elif isinstance(child, (ast.If, ast.Try, ast.With)):
                walk(child, prefix)

    walk(tree, "")
    return out


def changed_functions(repo: Path, sha: str) -> set[tuple[str, str]]:
    """{(source path, qualname)} of the functions whose lines the commit changed (in its post-image)."""
    parents = git(repo, "rev-list", "--parents", "-n", "1", sha).split()[1:]
    if len(parents) != 1:
        return set()
    out = set()
    diff = git(repo, "diff", "-U0", "--no-color", "--no-renames", parents[0], sha, "--", "*.py", check=False)
    for part in diff.split("\ndiff --git ")[0:]:
        m = re.search(r"^\+\+\+ b/(.+)$", part, re.MULTILINE)
        if not m or not histories.is_source(m.group(1)):
            continue
        path = m.group(1)
        lines = []
        for h in _HUNK.finditer(part):
            start, count = int(h.group(1)), int(h.group(2) or 1)
            lines += list(range(start, start + max(count, 1)))
        text = git(repo, "show", f"{sha}:{path}", check=False)
        for a, b, qual in definitions(text):
            if any(a <= n <= b for n in lines):
                out.add((norm_path(path), qual))
    return out


def learned_cards(clone: Path) -> list[dict]:
    db = sqlite3.connect(f"file:{clone / '.git' / 'sentinel' / 'learned.sqlite3'}?mode=ro", uri=True)
    try:
        return [json.loads(r[0]) for r in db.execute("SELECT json FROM cards ORDER BY id")]
    finally:
        db.close()


def inject(text: str, first: int, last: int) -> tuple[str, str] | None:
    """(new text, rule) with a bug pattern injected between lines first..last (1-based), or None."""
    lines = text.split("\n")
    for i in range(first - 1, min(last, len(lines))):
        m = _NARROW.match(lines[i])
        if m:
            lines[i] = f"{m.group('indent')}except:"
            return "\n".join(lines), "SEN301"
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and first <= node.lineno <= last:
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body = body[1:]
            for stmt in body:
                if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.Return, ast.AnnAssign)) \
                        and stmt.lineno == stmt.end_lineno:
                    row = lines[stmt.lineno - 1]
                    pad = row[: len(row) - len(row.lstrip())]
                    if not row.strip() or "\t" in pad:
                        return None
                    lines[stmt.lineno - 1: stmt.lineno] = [f"{pad}try:", f"{pad}    {row.strip()}",
                                                           f"{pad}except Exception:", f"{pad}    pass"]
                    return "\n".join(lines), "SEN302"
            return None
    return None


def _source(shown: dict, mine: set[str]) -> str:
    """Where a shown card comes from, for a report that does not say (an older Sentinel)."""
    if shown["card_id"] in mine:
        return "project"
    return "guidance" if shown["card_id"].startswith("rc-") else "bundled"


def run_check(sentinel: str, clone: Path) -> dict | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}
    proc = subprocess.run([sentinel, "check", "--format", "json"], cwd=clone, env=env, capture_output=True,
                          text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"sentinel check exited {proc.returncode}: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def run_history(name: str, repo: Path, work: Path, sentinels: dict[str, str], per: int, seed: int, log=print):
    started = time.perf_counter()
    clone = work / name.replace("/", "+")
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    git(clone, "remote", "set-url", "origin", f"https://github.com/{name}.git")
    git(clone, "config", "user.email", "eval@example.invalid")
    git(clone, "config", "user.name", "eval")
    first = next(iter(sentinels.values()))
    proc = subprocess.run([first, "memory", "learn", "--json"], cwd=clone, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")})
    if proc.returncode:
        raise RuntimeError(f"{name}: memory learn failed: {proc.stderr.strip()[-800:]}")
    cards = learned_cards(clone)
    mine = {c["id"] for c in cards}
    fixed_by: dict[tuple[str, str], set[str]] = {}
    for c in cards:
        for sha in card_commits(c):
            for fn in changed_functions(clone, sha):
                fixed_by.setdefault(fn, set()).add(c["id"])
    head_paths = {norm_path(p): p for p in git(clone, "ls-files", "*.py").splitlines() if histories.is_source(p)}
    targets = []
    for (path, qual), ids in sorted(fixed_by.items()):
        real = head_paths.get(path)
        if not real:
            continue
        text = (clone / real).read_text(encoding="utf-8", errors="replace")
        span = next(((a, b) for a, b, q in definitions(text) if q == qual), None)
        if span:
            targets.append((real, qual, span, ids))
    random.Random(seed).shuffle(targets)
    rows = []
    for real, qual, (a, b), ids in targets:
        if len(rows) >= per:
            break
        path = clone / real
        original = path.read_text(encoding="utf-8", errors="replace")
        injected = inject(original, a, b)
        if injected is None:
            continue
        text, rule = injected
        path.write_text(text, encoding="utf-8")
        git(clone, "add", real)
        try:
            row = {"file": real, "function": qual, "rule": rule, "past_fixes": sorted(ids), "arms": {}}
            for arm, sentinel in sentinels.items():
                report = run_check(sentinel, clone)
                group = next((g for g in report.get("recall", []) if g["rule"] == rule), None)
                shown = (group or {}).get("similar", [])[:3]
                row["arms"][arm] = {"failed": not report["passed"], "hit": any(s["card_id"] in ids for s in shown),
                                    "shown": [{"id": s["card_id"], "source": s.get("source") or _source(s, mine),
                                               "score": s["score"], "why": s.get("why", "")} for s in shown]}
            if all(r["failed"] for r in row["arms"].values()):
                rows.append(row)
        finally:
            git(clone, "reset", "-q", "HEAD", "--", real)
            path.write_text(original, encoding="utf-8")
    out = {"repository": name, "role": HISTORIES.get(name, "held-out"), "cards": len(cards),
           "functions_with_past_fix": len(targets), "injections": rows, "seconds": round(time.perf_counter() - started)}
    for arm in sentinels:
        hits = sum(r["arms"][arm]["hit"] for r in rows)
        slots = Counter(s["source"] for r in rows for s in r["arms"][arm]["shown"])
        log(f"{name} [{arm}]: {hits}/{len(rows)} injected failures recall the function's own past fix in the top 3; "
            f"shown: {dict(slots)}")
    shutil.rmtree(clone, ignore_errors=True)  # sentinel: ignore[SEN103] the clone this script made in its temp dir
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/data")
    ap.add_argument("--only", action="append", metavar="OWNER/NAME")
    ap.add_argument("--per-history", type=int, default=10)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--sentinel", help="the sentinel to measure (default: the one on PATH)")
    ap.add_argument("--against", help="another sentinel to run on the same injections (e.g. the previous main)")
    ap.add_argument("--out")
    args = ap.parse_args()
    sentinel = args.sentinel or shutil.which("sentinel")
    if not sentinel:
        print("skipped: no `sentinel` on PATH")
        return 0
    sentinels = {"this": sentinel, **({"against": args.against} if args.against else {})}
    names = args.only or [n for n, role in HISTORIES.items() if role == "held-out"]
    results = []
    with tempfile.TemporaryDirectory(prefix="sentinel-inject-") as tmp:
        for name in names:
            repo = Path(args.data) / name.split("/")[1]
            if not (repo / ".git").exists():
                print(f"skipped: {repo} not found (clone the history there)")
                continue
            results.append(run_history(name, repo, Path(tmp), sentinels, args.per_history, args.seed))
    print("\n| history | role | injected failures | " + " | ".join(f"{a}: own past fix in top 3" for a in sentinels)
          + " |\n|---|---|---|" + "---|" * len(sentinels))
    for r in results:
        n = len(r["injections"])
        cells = [f"{sum(x['arms'][a]['hit'] for x in r['injections'])}/{n}" for a in sentinels]
        print(f"| {r['repository']} | {r['role']} | {n} | " + " | ".join(cells) + " |")
    for role in ("held-out", "tuned"):
        group = [x for r in results if r["role"] == role for x in r["injections"]]
        if group:
            cells = [f"{sum(x['arms'][a]['hit'] for x in group)}/{len(group)}" for a in sentinels]
            print(f"| **pooled, {role}** | | {len(group)} | " + " | ".join(cells) + " |")
    for a in sentinels:
        slots = Counter(s["source"] for r in results for x in r["injections"] for s in x["arms"][a]["shown"])
        print(f"shown slots [{a}]: {dict(slots)}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
