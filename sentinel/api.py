"""The public Python API: run the gate in-process and get a typed Verdict.

    import sentinel
    verdict = sentinel.check()                        # staged changes of the repo in cwd
    verdict = sentinel.check(range="main...HEAD")
    verdict = sentinel.check(diff=patch_text)
    if not verdict.passed: ...
"""

from __future__ import annotations

import os

from sentinel import engine, sources
from sentinel.config import Config, load_config
from sentinel.diffparse import parse_diff
from sentinel.errors import GitError
from sentinel.models import FilterMode, Severity, Verdict


def cache_dir_for(root: str | None) -> str | None:
    if not root:
        return None
    from sentinel import gitio
    try:
        return os.path.join(gitio.git_dir(root), "sentinel")
    except GitError:
        return None


def get_change(*, range: str | None = None, diff: str | None = None, diff_file: str | None = None,
               all_files: bool = False, cwd: str | None = None, started=None) -> sources.Change:
    if diff is not None:
        cs = parse_diff(diff, source="diff (api)")
        try:
            cs.root = sources.gitio.repo_root(cwd)
        except GitError:
            cs.root = None
        return sources.Change(cs, content_rev=None)
    if diff_file is not None:
        return sources.diff_input(diff_file, cwd=cwd)
    if all_files:
        return sources.all_files(cwd)
    if range:
        return sources.commit_range(range, cwd)
    return sources.staged(cwd, started=started)


def check(*, range: str | None = None, diff: str | None = None, diff_file: str | None = None,
          all_files: bool = False, cwd: str | None = None, config: Config | None = None,
          config_path: str | None = None, fail_level: Severity | str | None = None,
          filter_mode: FilterMode | str | None = None, ban: list[str] | None = None,
          task: str | None = None, message: str | None = None, checks: list[str] | None = None,
          use_baseline: bool = True, extra: dict | None = None) -> Verdict:
    """Run the gate and return its Verdict. Raises SentinelError subclasses on bad input."""
    change = get_change(range=range, diff=diff, diff_file=diff_file, all_files=all_files, cwd=cwd)
    if config is None:
        root = change.changeset.root
        config = load_config(root, config_path, cache_dir=cache_dir_for(root))
    opts = engine.RunOptions(
        fail_level=Severity(fail_level) if fail_level else None,
        filter_mode=FilterMode(filter_mode) if filter_mode else None,
        only_checks=checks, extra_banned=list(ban or []), task=task, message=message,
        use_baseline=use_baseline, extra=dict(extra or {}))
    return engine.run(change, config, opts)
