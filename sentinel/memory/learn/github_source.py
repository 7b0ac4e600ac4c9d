"""Candidates from GitHub (`sentinel memory learn --github OWNER/NAME`): closed issues linked to merged PRs.

Through PyGithub (the [github] extra), with the token from $GITHUB_TOKEN (or $GH_TOKEN) and the API at
$GITHUB_API_URL (default api.github.com). For each recently closed, merged pull request, the issues it links —
by a closing keyword ("fixes #12") or a plain cross-reference ("see #12") — are read; an issue that is closed and
is not itself a pull request becomes a candidate: its title and body are the problem, the PR's files and patches
the fix. When several repositories are given, each gets a selection score from a sample of its recent pull
requests (activity, the share of merged PRs linked to an issue, the merge ratio) and they are learned best first;
repositories under --min-repo-score are skipped and say so.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sentinel.errors import ConfigError, InputError
from sentinel.memory.learn.gitsource import CLOSING, TEST_DEF
from sentinel.memory.learn.model import Candidate, FileDiff
from sentinel.memory.learn.paths import role

DEFAULT_API_URL = "https://api.github.com"
_REF = re.compile(r"(?<![\w/&])(?:#|GH-|gh-)(\d{1,7})\b")
_ISSUE_URL = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/issues/(\d+)")


def token_from_env() -> str:
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or ""


def client(token: str | None = None, api_url: str | None = None):
    try:
        from github import Auth, Github
    except ModuleNotFoundError:
        raise ConfigError("--github needs PyGithub: pip install 'diff-sentinel[github]'") from None
    token = token_from_env() if token is None else token
    kwargs = {"base_url": (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
              "timeout": 30, "per_page": 100, "retry": None}
    if token:
        kwargs["auth"] = Auth.Token(token)
    return Github(**kwargs)


def linked_issues(repo_name: str, title: str, body: str) -> list[tuple[int, str]]:
    """(issue number, "closing" | "reference") linked from a PR's title and body, closing links first."""
    text = f"{title}\n{body or ''}"
    closing = [int(n) for n in CLOSING.findall(text)]
    refs = [int(n) for n in _REF.findall(text)]
    for full, n in _ISSUE_URL.findall(text):
        if full.lower() == repo_name.lower():
            refs.append(int(n))
    out: dict[int, str] = {}
    for n in closing:
        out.setdefault(n, "closing")
    for n in refs:
        out.setdefault(n, "reference")
    return list(out.items())


@dataclass
class RepoScore:
    name: str
    score: float
    sampled: int
    merged: int
    linked: int

    def line(self) -> str:
        return (f"{self.name}: selection score {self.score:.2f} ({self.merged}/{self.sampled} recent PRs merged, "
                f"{self.linked} linked to an issue)")


def _describe(exc: BaseException, what: str) -> InputError:
    status = getattr(exc, "status", None)
    data = getattr(exc, "data", None)
    message = data.get("message", "") if isinstance(data, dict) else str(exc).splitlines()[0][:200]
    if status in (403, 429) and "rate limit" in message.lower():
        return InputError(f"GitHub {what}: rate limit exhausted ({status}); try later or set GITHUB_TOKEN")
    if status == 401:
        return InputError(f"GitHub {what}: the token was refused (401): check GITHUB_TOKEN")
    if status == 404:
        return InputError(f"GitHub {what}: not found (404): check the repository name and the token's access")
    return InputError(f"GitHub {what} failed: {status or type(exc).__name__} {message}".rstrip())


def score_repository(gh, name: str, sample: int = 50) -> RepoScore:
    """Selection score in [0, 1]: 0.5 x linkage (merged PRs that link an issue) + 0.3 x activity (merged PRs in
    the sample, saturating at 30) + 0.2 x merge ratio."""
    try:
        repo = gh.get_repo(name)
        pulls = list(repo.get_pulls(state="closed", sort="updated", direction="desc")[:sample])
    except Exception as exc:  # PyGithub raises GithubException subclasses and requests errors
        raise _describe(exc, f"repository {name}") from None
    merged = [p for p in pulls if p.merged_at]
    linked = [p for p in merged if linked_issues(name, p.title or "", p.body or "")]
    n = len(pulls)
    score = (0.5 * (len(linked) / len(merged) if merged else 0.0) + 0.3 * min(1.0, len(merged) / 30)
             + 0.2 * (len(merged) / n if n else 0.0))
    return RepoScore(name, round(score, 3), n, len(merged), len(linked))


def candidates(gh, name: str, *, max_prs: int = 200, seen: set[str] | None = None, counts: dict | None = None,
               progress: Callable[[str], None] | None = None) -> Iterator[Candidate]:
    """Candidates of one repository, newest merged PRs first; `seen` keys are "gh:NAME#ISSUE"."""
    counts = {} if counts is None else counts
    seen = set() if seen is None else seen
    try:
        repo = gh.get_repo(name)
        pulls = repo.get_pulls(state="closed", sort="updated", direction="desc")
        listed = 0
        for pr in pulls:
            if listed >= max_prs:
                break
            listed += 1
            counts["pull_requests"] = counts.get("pull_requests", 0) + 1
            if progress:
                progress(f"{name}: {listed} pull requests read")
            if not pr.merged_at:
                continue
            for number, link in linked_issues(name, pr.title or "", pr.body or ""):
                key = f"gh:{name}#{number}"
                if key in seen:
                    continue
                seen.add(key)
                cand = _candidate(repo, name, pr, number, link, key, counts)
                if cand is not None:
                    counts["linked_issues"] = counts.get("linked_issues", 0) + 1
                    yield cand
    except InputError:
        raise
    except Exception as exc:
        raise _describe(exc, f"repository {name}") from None


def _candidate(repo, name: str, pr, number: int, link: str, key: str, counts: dict) -> Candidate | None:
    from github import GithubException

    try:
        issue = repo.get_issue(number)
        if issue.pull_request is not None or issue.state != "closed":
            counts["not_closed_issues"] = counts.get("not_closed_issues", 0) + 1
            return None
        files = []
        tests: list[str] = []
        for f in pr.get_files():
            patch = f.patch or ""
            files.append(FileDiff(path=f.filename, role=role(f.filename), diff=patch, added=f.additions or 0,
                                  removed=f.deletions or 0))
            if role(f.filename) == "test":
                tests += [m.group(1) or m.group(2) for m in TEST_DEF.finditer(patch)]
    except GithubException as exc:
        if getattr(exc, "status", None) == 404:
            counts["missing_issues"] = counts.get("missing_issues", 0) + 1
            return None
        raise
    merged = pr.merged_at.isoformat() if pr.merged_at else ""
    return Candidate(key=key, origin="github", repository=name, sha=pr.merge_commit_sha or "", date=merged,
                     subject=issue.title or "", body=(issue.body or "")[:4000],
                     fragment=f"{pr.title or ''}", issue_refs=[f"#{number}"],
                     urls=[issue.html_url, pr.html_url], files=files, tests_added=list(dict.fromkeys(tests))[:10],
                     reasons=[f"github:{link}"])
