"""The gate's configuration for a pull request: the base branch's, never the PR's own.

A pull request could otherwise add `SEN301 = "off"` (or exclude its files, lower the fail level,
point `--config` at a laxer file) and pass. The base configuration is read from git at the base
commit, from the checkout itself for `pull_request_target` (which checks out the base branch),
or through the API; when none of them can give it, the defaults apply and the run notes say so.
What the PR changes in the configuration is computed here too and handed to the `gateconfig`
check, which reports it on the config file: it applies once merged, not to the PR itself.
"""

from __future__ import annotations

import os

from sentinel import gitio
from sentinel.ci.change import has_commit
from sentinel.ci.github_api import ApiProblem
from sentinel.config import Config, _parse_toml, sentinel_table, validate
from sentinel.configdiff import CONFIG_FILES, apply_diff, compare, config_at, touched_config
from sentinel.errors import ConfigError, GitError


def _explicit(data: bytes | None, rel: str, label: str) -> Config:
    """An explicitly named config file (the action's `config` input) as it is at ``label``."""
    if data is None:
        raise ConfigError(f"input 'config': {rel} does not exist at {label}")
    raw = sentinel_table(_parse_toml(data, f"{rel} at {label}"), rel) or {}
    return validate(raw, f"{rel} at {label}") if raw else Config(source=f"{rel} at {label}")


def _from_worktree(root: str, names: list[str]) -> dict[str, bytes | None]:
    from sentinel.filecache import read_files

    found = read_files([os.path.join(root, n) for n in names])
    return {n: found[os.path.join(root, n)] for n in names}


def _base_files(ci, change, workspace: str, names: list[str]) -> tuple[dict[str, bytes | None] | None, str]:
    ev, root = ci.ev, change.changeset.root
    base = ev.base_sha
    if root and base and has_commit(root, base):
        try:
            blobs = gitio.read_blobs(root, [f"{base}:{n}" for n in names])
            return {n: blobs.get(f"{base}:{n}") for n in names}, f"base {base[:7]}"
        except GitError:
            pass
    if ev.name == "pull_request_target":
        # This event checks out the base branch: its files are the base configuration.
        return _from_worktree(root or workspace, names), f"the base branch ({(base or '')[:7]})"
    if base:
        try:
            return {n: ci.api().file_at(n, base) for n in names}, f"base {base[:7]} (read through the API)"
        except ApiProblem as exc:
            ci.notes.add(f"config: the base branch's configuration could not be read ({exc})")
    return None, ""


def _head_files(ci, change, base_files: dict[str, bytes | None], names: list[str]) -> dict[str, bytes | None]:
    """The config files after the PR: from git at the head commit when the diff came from git,
    else the base files with the PR's diff applied (the API diff path)."""
    root, head = change.changeset.root, ci.ev.head_sha
    if change.content_rev and root and head:
        blobs = gitio.read_blobs(root, [f"{head}:{n}" for n in names])
        return {n: blobs.get(f"{head}:{n}") for n in names}
    out = dict(base_files)
    for fc in change.changeset.files:
        for name in names:
            if name not in (fc.path, fc.old_path):
                continue
            if fc.status.value == "deleted":
                out[name] = None
                continue
            before = (base_files.get(fc.old_path or fc.path) or b"").decode("utf-8", "replace").split("\n")
            if before and before[-1] == "":
                before.pop()
            after = apply_diff(before if fc.status.value != "added" else [], fc)
            out[fc.path] = None if after is None else ("\n".join(after) + "\n").encode()
    return out


def gate_config(ci, change, workspace: str):
    """(the configuration that judges the PR, what the PR changes in it or None)."""
    root = change.changeset.root or workspace
    explicit = ci.inp.config
    rel = os.path.relpath(explicit, workspace).replace(os.sep, "/") if explicit else None
    names = [rel] if rel else list(CONFIG_FILES)
    base_files, label = _base_files(ci, change, workspace, names)
    if base_files is None:
        ci.notes.add("config: the defaults apply (the base branch's configuration is unavailable, and the PR's "
                     "own is not trusted)")
        return Config(source="defaults (base configuration unavailable)"), None
    config = _explicit(base_files[rel], rel, label) if rel else config_at(root, base_files, label)
    ci.notes.add(f"config: the base branch's configuration applies ({config.source}), not the PR's own")
    files = change.changeset.files
    edited = touched_config(files) if not rel else next((rel for f in files if rel in (f.path, f.old_path)), None)
    if edited is None:
        return config, None
    head_files = _head_files(ci, change, base_files, names)
    try:
        after = _explicit(head_files[rel], rel, "the PR head") if rel else config_at(root, head_files, "the PR head")
    except ConfigError as exc:
        diff = compare(edited, config, None, error=str(exc))
    else:
        diff = compare(edited, config, after)
    loosening = len(diff.loosens) + (1 if diff.error else 0)
    ci.notes.add(f"config: this PR edits {edited}: {loosening} loosening and "
                 f"{len(diff.items) - len(diff.loosens)} tightening setting(s), none applied to the PR itself")
    return config, diff
