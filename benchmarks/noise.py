"""Replay recent real commits of well-kept projects through the installed `sentinel`: how noisy is the gate?

Needs ../shared/corpus/noise/ (750 commits of werkzeug, jinja, starlette, pytest and typer, every file type,
with each file's content before and after and the project's root tool configuration; see its README). Skips
cleanly when it is absent.

Each commit is rebuilt as a real git repository (the parent's config files and every `before`, committed) and
checked twice, as the gate sees it in use:

- **CI view**: the change committed with its real message, `sentinel check --range HEAD^..HEAD`;
- **hook view**: the change staged, `sentinel check` (pre-commit) then `sentinel commit-msg MSGFILE`.

It prints per project: commits, blocked (exit 1), errors (exit 2), and findings per rule x role x severity;
with ``--json`` it writes every finding of every commit (for docs/noise.md, which explains each block).

Two more corpora of ../shared/corpus replay the same way: ``--corpus fixtures`` (150 commits of flask, requests
and sqlalchemy with their files' contents, no project config) and ``--corpus commits`` (900 commits of the same
projects as `.py`-only diffs: `sentinel check --diff -` with the commit's message, in an empty repository).

    python benchmarks/noise.py [--corpus noise|fixtures|commits] [--sentinel PATH] [--jobs 2] [--repo werkzeug]
                               [--limit N] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SHARED = HERE.parent.parent / "shared"
# A fixed identity and no user/system git config: the replay must not depend on the machine.
GIT_ENV = {"GIT_AUTHOR_NAME": "replay", "GIT_AUTHOR_EMAIL": "replay@example.com",
           "GIT_COMMITTER_NAME": "replay", "GIT_COMMITTER_EMAIL": "replay@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(text.encode("utf-8", "surrogateescape"))


def build(commit: dict, where: Path, env: dict) -> None:
    """The parent state committed, the commit's own change written into the work tree (not staged)."""
    def git(*a):
        return subprocess.run(["git", *a], cwd=where, check=True, capture_output=True, env=env)

    where.mkdir(parents=True)
    git("init", "-q", "-b", "main")
    for rel, text in (commit.get("config") or {}).items():
        if text is not None:
            _write(where, rel, text)
    for f in commit["files"]:
        src = f.get("old_path") or f["path"]
        if f.get("before") is not None and f.get("status", "M")[:1] != "A":
            _write(where, src, f["before"])
    git("add", "-A")
    git("commit", "-q", "--allow-empty", "-m", "parent")
    for f in commit["files"]:
        status = f.get("status", "M")[:1]
        old = f.get("old_path") or f["path"]
        if status in ("D", "R") and (where / old).exists():
            (where / old).unlink()  # sentinel: ignore[SEN103] a file of the replay's own temp repository
        if status != "D" and f.get("after") is not None:
            _write(where, f["path"], f["after"])


def message_of(commit: dict) -> str:
    body = (commit.get("body") or "").strip()
    return commit["subject"] + ("\n\n" + body if body else "") + "\n"


def run_sentinel(cmd: list[str], cwd: Path, env: dict, timeout: float = 120.0) -> dict:
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, check=False, cwd=cwd, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"exit": "timeout", "seconds": timeout, "findings": [], "stderr": "timeout"}
    out = {"exit": proc.returncode, "seconds": round(time.perf_counter() - t, 3), "findings": [],
           "stderr": proc.stderr.decode("utf-8", "replace")[-2000:]}
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        out["stdout"] = proc.stdout.decode("utf-8", "replace")[-2000:]
        return out
    roles = {f.get("path"): f.get("role") for f in report.get("files", []) if isinstance(f, dict)}
    for f in report.get("findings", []):
        out["findings"].append({"rule": f["rule"], "severity": f["severity"], "path": f.get("path"),
                                "line": f.get("line"), "message": f.get("message", "")[:300],
                                "code": (f.get("code") or "")[:200],
                                "role": f.get("role") or roles.get(f.get("path")) or "change"})
    out["checks"] = {c["check"]: c["status"] for c in report.get("checks", [])}
    return out


@contextlib.contextmanager
def scratch(commit: dict):
    """A temp dir, the environment to run git and sentinel in, and the commit's result record."""
    env = {**os.environ, **GIT_ENV, "SENTINEL_DEBUG": ""}
    env.pop("SENTINEL_TASK", None)
    tmp = Path(tempfile.mkdtemp(prefix="noise-"))
    try:
        yield tmp, env, {"repo": commit["repo"], "sha": commit["sha"], "subject": commit["subject"]}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # sentinel: ignore[SEN103] the replay's own temp dir


def replay(job: tuple[dict, str]) -> dict:
    commit, sentinel = job
    with scratch(commit) as (tmp, env, result):
        where = tmp / "repo"
        try:
            build(commit, where, env)
        except subprocess.CalledProcessError as exc:
            result["build_error"] = exc.stderr.decode("utf-8", "replace")[-500:]
            return result
        def git(*a):
            return subprocess.run(["git", *a], cwd=where, check=True, capture_output=True, env=env)

        git("add", "-A")
        # Hook view: the staged change, then the commit-msg hook on the real message.
        result["hook"] = run_sentinel([sentinel, "check", "--format", "json"], where, env)
        msg = tmp / "COMMIT_EDITMSG"
        msg.write_text(message_of(commit), encoding="utf-8")
        result["commit_msg"] = run_sentinel([sentinel, "commit-msg", str(msg), "--format", "json"], where, env)
        # CI view: the same change committed with its real message, checked as a range.
        git("commit", "-q", "--allow-empty", "-F", str(msg))
        result["ci"] = run_sentinel([sentinel, "check", "--range", "HEAD^..HEAD", "--format", "json"], where, env)
    return result


def replay_diff(job: tuple[dict, str]) -> dict:
    """A commit known only by its diff and message: what `git diff | sentinel check --diff -` sees in CI."""
    commit, sentinel = job
    with scratch(commit) as (tmp, env, result):
        subprocess.run(["git", "init", "-q", str(tmp)], check=True, capture_output=True, env=env)
        msg = tmp / "MSG"
        msg.write_text(message_of(commit), encoding="utf-8")
        diff = tmp / "change.diff"
        diff.write_bytes(commit["diff"].encode("utf-8", "surrogateescape"))
        result["ci"] = run_sentinel([sentinel, "check", "--diff", str(diff), "--message", f"@{msg}",
                                     "--format", "json", "--no-memory"], tmp, env)
    return result


def replay_history(job: tuple[dict, str]) -> dict:
    """A commit of a real history, checked out with the project's own files and config at that commit: the CI
    view, `sentinel check --range C^..C`."""
    commit, sentinel = job
    with scratch(commit) as (tmp, env, result):
        where = tmp / "repo"
        for attempt in range(10):  # parallel `worktree add` on one repository contend for its lock files
            add = subprocess.run(["git", "-C", commit["git"], "worktree", "add", "-q", "-f", "--detach", str(where),
                                  commit["sha"]], check=False, capture_output=True, env=env)
            if add.returncode == 0:
                break
            time.sleep(0.2 * (attempt + 1))
        else:
            result["build_error"] = add.stderr.decode("utf-8", "replace")[-500:]
            return result
        try:
            result["ci"] = run_sentinel([sentinel, "check", "--range", f"{commit['sha']}^..{commit['sha']}",
                                         "--format", "json"], where, env)
        finally:
            subprocess.run(["git", "-C", commit["git"], "worktree", "remove", "-f", str(where)],
                           check=False, capture_output=True, env=env)
    return result


def history_commits(clone: Path, name: str, limit: int) -> list[dict]:
    """The last ``limit`` first-parent, non-merge commits of a repository that are not its root."""
    out = subprocess.run(["git", "-C", str(clone), "log", "--first-parent", "--no-merges", f"-{limit}",
                          "--format=%H%x00%P%x00%s"], check=True, capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        sha, parents, subject = line.split("\0", 2)
        if parents:
            rows.append({"repo": name, "sha": sha, "subject": subject, "git": str(clone)})
    return rows


def load_commits(shared: Path, repos: list[str] | None, limit: int | None, corpus: str = "noise") -> list[dict]:
    out = []
    if corpus == "noise":
        paths = sorted((shared / "corpus" / "noise").glob("*.jsonl.gz"))
    elif corpus == "fixtures":
        paths = sorted((shared / "corpus").glob("*.fixtures.jsonl"))
    else:
        paths = [shared / "corpus" / "commits.jsonl"]
    for path in paths:
        name = path.name.split(".")[0]
        if repos and corpus != "commits" and name not in repos:
            continue
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
        if corpus == "commits" and repos:
            rows = [r for r in rows if r["repo"] in repos]
        out.extend(rows[:limit] if limit else rows)
    return out


def summarize(results: list[dict]) -> str:
    lines = []
    per_repo = collections.defaultdict(list)
    for r in results:
        per_repo[r["repo"]].append(r)
    views = [v for v in ("ci", "hook", "commit_msg") if any(v in r for r in results)] or ["ci"]
    header = ("| project | commits | " + " | ".join(f"{v} blocked | {v} exit 2" for v in views)
              + " | either blocked | any finding |")
    lines += [header, "|" + "---|" * (header.count("|") - 1)]
    totals = collections.Counter()
    for repo, rows in sorted(per_repo.items()):
        cells = [repo, str(len(rows))]
        totals["commits"] += len(rows)
        for v in views:
            blocked = sum(1 for r in rows if r.get(v, {}).get("exit") == 1)
            errors = sum(1 for r in rows if r.get(v, {}).get("exit") not in (0, 1, None))
            totals[f"{v}-b"] += blocked
            totals[f"{v}-e"] += errors
            cells += [str(blocked), str(errors)]
        either = sum(1 for r in rows if any(r.get(v, {}).get("exit") == 1 for v in views))
        totals["either"] += either
        cells.append(str(either))
        # a commit with any finding at all, information included: what a user sees on their screen
        anything = sum(1 for r in rows if any(r.get(v, {}).get("findings") for v in views))
        totals["any"] += anything
        cells.append(f"{anything} ({100 * anything / len(rows):.0f}%)")
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["**all**", str(totals["commits"])]
    for v in views:
        cells += [str(totals[f"{v}-b"]), str(totals[f"{v}-e"])]
    cells.append(str(totals["either"]))
    cells.append(f"{totals['any']} ({100 * totals['any'] / max(totals['commits'], 1):.0f}%)")
    lines.append("| " + " | ".join(cells) + " |")

    by_key = collections.Counter()
    sev = collections.Counter()
    for r in results:
        seen = set()
        for v in views:  # a finding reported by both the CI and the hook view is counted once
            for f in r.get(v, {}).get("findings", []):
                key = (f["rule"], f["path"], f["line"], f["message"])
                if key in seen:
                    continue
                seen.add(key)
                by_key[(r["repo"], f["rule"], f["role"], f["severity"])] += 1
                sev[f["severity"]] += 1
    lines += ["", f"findings (distinct per commit): {sum(sev.values())} — " +
              ", ".join(f"{k} {v}" for k, v in sorted(sev.items())), "",
              "| project | rule | role | severity | findings |", "|---|---|---|---|---|"]
    for (repo, rule, role, severity), n in sorted(by_key.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"| {repo} | {rule} | {role} | {severity} | {n} |")
    errors = [(r["repo"], r["sha"][:10], v, r[v].get("exit"), r[v].get("stderr", "").strip()[-200:])
              for r in results for v in views if r.get(v, {}).get("exit") not in (0, 1, None)]
    errors += [(r["repo"], r["sha"][:10], "build", "-", r["build_error"]) for r in results if "build_error" in r]
    if errors:
        lines += ["", "errors:"] + [f"- {e}" for e in errors]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument("--corpus", choices=("noise", "fixtures", "commits"), default="noise")
    ap.add_argument("--sentinel", default=shutil.which("sentinel") or "sentinel",
                    help="the installed console script to replay with")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--repo", action="append", help="only these projects (werkzeug, jinja, ...)")
    ap.add_argument("--limit", type=int, help="first N commits of each project")
    ap.add_argument("--json", type=Path, help="write every commit's results here")
    ap.add_argument("--history", type=Path, action="append",
                    help="instead of a corpus: a git repository (bare or not) whose last --limit (default 150) "
                         "commits are replayed in the CI view; held-out projects the rules were never tuned on")
    args = ap.parse_args()
    if args.history:
        return replay_histories(args)
    if not (args.shared / "corpus" / "noise").is_dir():
        print(f"skipped: {args.shared}/corpus/noise not found (see the shared corpus README)")
        return 0
    commits = load_commits(args.shared, args.repo, args.limit, args.corpus)
    for c in commits:  # the fixtures name the project without its owner
        c.setdefault("config", {})
    t0 = time.perf_counter()
    jobs = [(c, args.sentinel) for c in commits]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(replay_diff if args.corpus == "commits" else replay, jobs, chunksize=1))
    print(summarize(results))
    print(f"\n{len(results)} commits replayed in {time.perf_counter() - t0:.0f} s with {args.sentinel}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


def replay_histories(args) -> int:
    t0 = time.perf_counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="noise-history-") as tmp:
        commits = []
        for src in args.history:
            name = src.resolve().parent.name if src.name in ("repo", ".git") else src.resolve().name
            clone = Path(tmp) / name
            # a clone of our own, so the worktrees never touch the source repository
            subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(src), str(clone)], check=True,
                           capture_output=True)
            commits += history_commits(clone, name, args.limit or 150)
        with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(replay_history, [(c, args.sentinel) for c in commits], chunksize=1))
    print(summarize(results))
    print(f"\n{len(results)} commits replayed in {time.perf_counter() - t0:.0f} s with {args.sentinel}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
