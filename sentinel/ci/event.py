"""The workflow's event payload (``$GITHUB_EVENT_PATH``): which change to check and its prose.

Title and body are the PR author's text: they are data for the drift and claims checks and
are never interpolated into a command or printed unescaped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from sentinel.errors import InputError

PR_EVENTS = ("pull_request", "pull_request_target")
# GitHub's closing keywords (docs: linking a pull request to an issue).
_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:([\w.-]+/[\w.-]+))?#(\d+)\b",
                      re.IGNORECASE)
_FENCE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
MAX_LINKED_ISSUES = 5


@dataclass(slots=True)
class CiEvent:
    name: str
    repository: str = ""  # owner/name of the base repository
    pr_number: int | None = None
    base_sha: str | None = None
    head_sha: str | None = None
    base_ref: str | None = None
    title: str = ""
    body: str = ""
    head_repository: str | None = None  # differs from repository for a fork PR
    before: str | None = None  # push: the range before..after
    after: str | None = None
    linked_issues: list[int] = field(default_factory=list)

    @property
    def is_pr(self) -> bool:
        return self.pr_number is not None

    @property
    def is_fork(self) -> bool:
        return bool(self.head_repository) and self.head_repository != self.repository


def linked_issues(body: str, repository: str = "") -> list[int]:
    """Issue numbers a PR body closes ("Fixes #12"), same repository only, first few, in order."""
    text = _FENCE.sub(" ", _HTML_COMMENT.sub(" ", body or ""))
    out: list[int] = []
    for m in _CLOSING.finditer(text):
        other, number = m.group(1), int(m.group(2))
        if other and repository and other.lower() != repository.lower():
            continue
        if number not in out:
            out.append(number)
    return out[:MAX_LINKED_ISSUES]


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def parse_event(name: str, payload: dict, repository: str = "") -> CiEvent:
    if not isinstance(payload, dict):
        raise InputError("the event payload is not a JSON object")
    repo = repository or _str((payload.get("repository") or {}).get("full_name"))
    ev = CiEvent(name=name, repository=repo)
    pr = payload.get("pull_request")
    if name in PR_EVENTS or isinstance(pr, dict):
        if not isinstance(pr, dict):
            raise InputError(f"event {name!r} has no pull_request object")
        base, head = pr.get("base") or {}, pr.get("head") or {}
        number = pr.get("number", payload.get("number"))
        if not isinstance(number, int):
            raise InputError("the pull_request event carries no PR number")
        ev.pr_number = number
        ev.base_sha, ev.head_sha = _str(base.get("sha")) or None, _str(head.get("sha")) or None
        ev.base_ref = _str(base.get("ref")) or None
        ev.title, ev.body = _str(pr.get("title")), _str(pr.get("body"))
        ev.head_repository = _str((head.get("repo") or {}).get("full_name")) or None
        ev.linked_issues = linked_issues(ev.body, repo)
    elif name == "push":
        ev.before, ev.after = _str(payload.get("before")) or None, _str(payload.get("after")) or None
        commit = payload.get("head_commit") or {}
        message = _str(commit.get("message"))
        ev.title, _, ev.body = message.partition("\n")
        ev.body = ev.body.strip()
    return ev


def read_event(path: str | None, name: str | None, repository: str = "") -> CiEvent:
    if not path:
        raise InputError("GITHUB_EVENT_PATH is not set: `sentinel ci` runs inside GitHub Actions "
                         "(use `sentinel check --range A...B` elsewhere)")
    try:
        with open(path, encoding="utf-8") as fh:
            payload = json.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read the event payload {path}: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"the event payload {path} is not valid JSON: {exc}") from None
    return parse_event(name or "", payload, repository)
