"""What the change was asked to do: the task text and where it came from."""

from __future__ import annotations

import os

from sentinel.lazyre import lazy_compile
from sentinel.record import Record

# "#123", "Fixes #123", "GH-123"; not "&#123;" (an HTML entity) nor "a#1" nor "owner/repo#1" of another repo.
_ISSUE_REF = lazy_compile(r"(?<![\w&/#])(?:#|GH-)(\d{1,7})\b")
ISSUE_DIR = os.path.join(".sentinel", "issues")


class Task(Record):
    text: str
    source: str  # "--task", "SENTINEL_TASK", ".sentinel/task.md", "issue #12"


def issue_numbers(message: str | None) -> list[int]:
    if not message:
        return []
    return list(dict.fromkeys(int(m.group(1)) for m in _ISSUE_REF.finditer(message)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _issue_texts(numbers: list[int], root: str | None, provided: dict | None) -> list[tuple[int, str]]:
    out = []
    provided = provided or {}
    for n in numbers:
        text = provided.get(n) if n in provided else provided.get(str(n))
        if not text and root:
            text = _read(os.path.join(root, ISSUE_DIR, f"{n}.md"))
        if text and text.strip():
            out.append((n, text.strip()))
    return out


def resolve_task(cctx) -> Task | None:
    """First found of: --task, SENTINEL_TASK, the configured task file, issues the message references."""
    if cctx.task and cctx.task.strip():
        # A caller that knows better names the source (`sentinel ci`: "the PR title", "the `task` input").
        return Task(cctx.task.strip(), cctx.options.get("task_source") or "--task")
    env = os.environ.get("SENTINEL_TASK", "")
    if env.startswith("@"):
        env = _read(env[1:]) or ""
    if env.strip():
        return Task(env.strip(), "SENTINEL_TASK")
    task_file = cctx.config.drift.task_file
    if task_file and (cctx.root or os.path.isabs(task_file)):
        full = task_file if os.path.isabs(task_file) else os.path.join(cctx.root, task_file)
        text = _read(full)
        if text and text.strip():
            return Task(text.strip(), task_file)
    issues = _issue_texts(issue_numbers(cctx.message), cctx.root, cctx.options.get("issues"))
    if issues:
        label = ", ".join(f"#{n}" for n, _ in issues)
        return Task("\n\n".join(t for _, t in issues), f"issue {label}")
    return None
