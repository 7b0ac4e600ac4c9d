"""Which change a CI run checks, built from git when the checkout allows it.

actions/checkout fetches one commit by default, so the PR's base commit and the merge base
are usually missing. We fetch what is needed (the two commits, then deeper history until a
merge base appears); when that fails, the caller falls back to the PR's files from the API.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from sentinel import gitio, sources
from sentinel.errors import GitError

DEEPEN_STEPS = (50, 200, 1000)


@dataclass(slots=True)
class GitResult:
    change: sources.Change | None
    how: str  # shown in the summary: where the diff came from, or why git could not give it


def _run(root: str, *args: str) -> bool:
    try:
        proc = subprocess.run([gitio.git_executable(), *args], cwd=root, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired, GitError):
        return False
    return proc.returncode == 0


def has_commit(root: str, sha: str) -> bool:
    return _run(root, "cat-file", "-e", f"{sha}^{{commit}}")


def is_shallow(root: str) -> bool:
    try:
        out = gitio.run_git(["rev-parse", "--is-shallow-repository"], cwd=root, check=False)
    except GitError:
        return False
    return out.decode().strip() == "true"


def _fetch(root: str, *args: str) -> bool:
    return _run(root, "-c", "protocol.version=2", "fetch", "--no-tags", "--quiet", "--no-recurse-submodules",
                "origin", *args)


def ensure_commits(root: str, shas: list[str], notes: list[str]) -> bool:
    missing = [s for s in shas if not has_commit(root, s)]
    if missing and _fetch(root, "--depth=1", *missing):
        notes.append(f"fetched {len(missing)} missing commit(s)")
    return all(has_commit(root, s) for s in shas)


def ensure_merge_base(root: str, base: str, head: str, notes: list[str]) -> str | None:
    mb = gitio.merge_base(root, base, head)
    if mb or not is_shallow(root):
        return mb
    for depth in DEEPEN_STEPS:
        # Deepening both tips walks back until their histories meet.
        if not _fetch(root, f"--deepen={depth}", base, head) and not _fetch(root, f"--depth={depth}", base, head):
            break
        mb = gitio.merge_base(root, base, head)
        if mb:
            notes.append(f"deepened the shallow clone by {depth} commit(s) to find the merge base")
            return mb
    if _fetch(root, "--unshallow"):
        mb = gitio.merge_base(root, base, head)
        if mb:
            notes.append("unshallowed the clone to find the merge base")
    return mb


def pr_change(root: str, base: str, head: str) -> GitResult:
    notes: list[str] = []
    if not ensure_commits(root, [base, head], notes):
        return GitResult(None, "the base or head commit is not in the checkout and could not be fetched")
    if ensure_merge_base(root, base, head, notes) is None:
        return GitResult(None, "no merge base between the base and head commits, even after fetching history")
    change = sources.commit_range(f"{base}...{head}", root)
    how = "git diff of the merge base with the PR head" + (f" ({'; '.join(notes)})" if notes else "")
    return GitResult(change, how)


def push_change(root: str, before: str | None, after: str) -> GitResult:
    notes: list[str] = []
    if not ensure_commits(root, [after], notes):
        return GitResult(None, "the pushed commit is not in the checkout")
    if not before or before == gitio.ZERO_SHA:
        # A new branch: the pushed tip against its parent (what the push added on top).
        parent = f"{after}~1"
        if has_commit(root, parent) or (_fetch(root, "--deepen=1", after) and has_commit(root, parent)):
            return GitResult(sources.commit_range(f"{after}~1..{after}", root),
                         "git diff of the new branch's tip commit")
        return GitResult(sources.commit_range(f"{gitio.ZERO_SHA}..{after}", root),
                         "git: the whole tree of a new branch without history")
    if not ensure_commits(root, [before], notes):
        return GitResult(None, "the push's previous commit could not be fetched (force push?)")
    return GitResult(sources.commit_range(f"{before}..{after}", root),
                     "git diff of the pushed range" + (f" ({'; '.join(notes)})" if notes else ""))
