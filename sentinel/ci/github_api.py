"""The few GitHub REST calls `sentinel ci` makes, through PyGithub.

Every call can fail for reasons that are not the change's fault (a fork's read-only token,
the rate limit, a network blip); each failure becomes an ApiProblem with a one-line reason
that the summary shows, and the gate's verdict stands on its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MARKER = "<!-- sentinel:sticky -->"
STATE_PREFIX = "<!-- sentinel:state="
FINDING_PREFIX = "<!-- sentinel:finding="
# The identity of the default GITHUB_TOKEN (an installation token of the GitHub Actions app).
ACTIONS_BOT = "github-actions[bot]"
DEFAULT_API_URL = "https://api.github.com"
MAX_PATCH_FILES = 3000  # the pulls/{n}/files endpoint stops at 3000 files


def _postable(body: str) -> str:
    """Everything posted goes through the one redaction path (sentinel.redact) last: the reporters and review
    builders already redact each piece, this catches what joining them could have let through.

    It reads the text as a reader sees it (character references decoded), so the Markdown's escapes neither hide
    a secret from it nor get masked as one: a body that shows no secret is posted as it was rendered (masking
    escaped text again garbled it: ``GITHUB_TOKEN = ***;ghp_***"``). One that shows a secret is masked, and not
    posted at all if it still shows one."""
    from sentinel.redact import redact
    from sentinel.report.mdsafe import shown_text

    shown = shown_text(body)
    if redact(shown) == shown:
        return body
    masked = redact(body)
    shown = shown_text(masked)
    if redact(shown) != shown:
        raise ApiProblem("not posted: the text would show a secret")
    return masked


class ApiProblem(Exception):
    """A GitHub call failed; ``str()`` is the reason to show, ``status`` the HTTP status if any."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.status = status


@dataclass(slots=True)
class CommentResult:
    url: str
    created: bool
    previous_state: str | None  # "passed"/"failed"/"error" of the comment we replaced


def _retry(retries: int):
    """Retry transient server errors on idempotent calls only: a retried POST could post twice.

    Rate-limit answers are not retried: waiting out a reset burns CI minutes, so they are
    reported instead."""
    if retries <= 0:
        return None
    from urllib3.util.retry import Retry
    return Retry(total=retries, connect=retries, read=retries, backoff_factor=0.5,
                 status_forcelist=(500, 502, 503, 504), allowed_methods=frozenset({"GET", "PATCH"}),
                 raise_on_status=False)


def client(token: str, api_url: str | None = None, retries: int | None = None):
    try:
        from github import Auth, Github
    except ModuleNotFoundError:
        raise ApiProblem("PyGithub is not installed (pip install 'diff-sentinel[github]')") from None
    if retries is None:
        try:
            retries = int(os.environ.get("SENTINEL_GITHUB_RETRIES", "2"))
        except ValueError:
            retries = 2
    kwargs = {"base_url": (api_url or DEFAULT_API_URL).rstrip("/"), "timeout": 30, "retry": _retry(retries),
              "seconds_between_requests": None, "seconds_between_writes": None, "per_page": 100, "lazy": True}
    if token:
        kwargs["auth"] = Auth.Token(token)
    return Github(**kwargs)


def describe(exc: BaseException, what: str, token: str = "") -> ApiProblem:
    """A clear, secret-free reason for a failed call."""
    from github import GithubException, RateLimitExceededException
    status = getattr(exc, "status", None)
    headers = {k.lower(): v for k, v in (getattr(exc, "headers", None) or {}).items()}
    data = getattr(exc, "data", None)
    message = data.get("message", "") if isinstance(data, dict) else ""
    if isinstance(exc, RateLimitExceededException) or status == 429 or (
            status == 403 and (headers.get("x-ratelimit-remaining") == "0" or "rate limit" in message.lower())):
        wait = headers.get("retry-after")
        when = f"retry after {wait}s" if wait else _reset_time(headers.get("x-ratelimit-reset"))
        reason = f"{what}: GitHub API rate limit exceeded ({when})"
    elif status in (401,):
        reason = f"{what}: the token was rejected (401 {message or 'Bad credentials'})"
    elif status == 403:
        reason = (f"{what}: the token may not do this (403 {message or 'Forbidden'}); a fork's pull request "
                  "gets a read-only token, or the workflow lacks `permissions: pull-requests: write`")
    elif status == 404:
        reason = f"{what}: not found (404 {message or 'Not Found'}); check the repository and the token's access"
    elif isinstance(exc, GithubException):
        reason = f"{what}: GitHub answered {status} {message}".rstrip()
    else:
        reason = f"{what}: {type(exc).__name__}: {exc}"
    if token:
        reason = reason.replace(token, "***")
    return ApiProblem(reason, status)


def _reset_time(reset: str | None) -> str:
    import time
    try:
        return "the limit resets at " + time.strftime("%H:%M:%S UTC", time.gmtime(int(reset or "")))
    except ValueError:
        return "retry later"


def _call(what: str, fn, token: str = ""):
    try:
        from github import GithubException
    except ModuleNotFoundError:
        raise ApiProblem("PyGithub is not installed (pip install 'diff-sentinel[github]')") from None
    import requests
    try:
        return fn()
    except (GithubException, requests.RequestException, OSError) as exc:
        raise describe(exc, what, token) from None


def same_login(a: str | None, b: str | None) -> bool:
    """GraphQL names a bot 'github-actions', REST 'github-actions[bot]': the same account."""
    def norm(x: str) -> str:
        x = x.lower()
        return x[:-5] if x.endswith("[bot]") else x
    return bool(a) and bool(b) and norm(a) == norm(b)


class GitHubApi:
    def __init__(self, repository: str, token: str, api_url: str | None = None, retries: int | None = None):
        self.repository = repository
        self.token = token
        self.gh = client(token, api_url, retries)
        self.repo = self.gh.get_repo(repository)
        self._login: str | None = None
        self.identity_note = ""

    # -- who we are: only our own comments are ever edited ---------------------------------------
    def login(self) -> str | None:
        """The token's account: GET /user for a personal token, GraphQL `viewer` for an app's
        installation token (GET /user answers 403 for those); None when neither says."""
        if self._login is not None or self.identity_note:
            return self._login
        try:
            self._login = _call("reading the token's identity", lambda: self.gh.get_user().login, self.token)
        except ApiProblem:
            try:
                data = _call("reading the token's identity (GraphQL)",
                             lambda: self.gh.requester.graphql_query("query { viewer { login } }", {})[1],
                             self.token)
                self._login = ((data or {}).get("data") or {}).get("viewer", {}).get("login") or None
            except ApiProblem as exc:
                self.identity_note = (f"the token's identity is unknown ({exc}); only comments by {ACTIONS_BOT} "
                                      "(a bot account) are treated as ours")
        return self._login

    def is_ours(self, user) -> bool:
        """A comment's author is this token's account (a human's comment never is, marker or not)."""
        if user is None:
            return False
        login = self.login()
        if login:
            return same_login(login, user.login)
        return user.login == ACTIONS_BOT and getattr(user, "type", "") == "Bot"

    def pull_diff(self, number: int) -> str:
        """The PR's change as a unified diff assembled from pulls/{n}/files patches."""
        def fetch():
            files = []
            for i, f in enumerate(self.repo.get_pull(number).get_files()):
                if i >= MAX_PATCH_FILES:
                    break
                files.append(file_section(f.filename, f.status, f.patch, f.previous_filename))
            return "".join(files)
        return _call(f"reading the files of PR #{number}", fetch, self.token)

    def issue_text(self, number: int) -> str:
        def fetch():
            issue = self.repo.get_issue(number)
            return f"{issue.title}\n\n{issue.body or ''}".strip()
        return _call(f"reading issue #{number}", fetch, self.token)

    def ci_checks(self, sha: str, exclude: set[str]) -> list[dict]:
        """Completed check runs and statuses on a commit, as [{name, conclusion}], ours left out."""
        def fetch():
            commit = self.repo.get_commit(sha)
            out = []
            for run in commit.get_check_runs():
                if run.name in exclude or run.status != "completed":
                    continue
                out.append({"name": run.name, "conclusion": run.conclusion or "neutral", "kind": "check_run"})
            for st in commit.get_combined_status().statuses:
                if st.context in exclude or st.state == "pending":
                    continue
                out.append({"name": st.context, "conclusion": st.state, "kind": "status"})
            return out
        return _call(f"reading the checks of {sha[:10]}", fetch, self.token)

    def find_sticky(self, number: int):
        """Our marked comment: the marker alone is not enough (anyone can paste it), the author must be us."""
        def fetch():
            for c in self.repo.get_issue(number).get_comments():
                if MARKER in (c.body or "") and self.is_ours(c.user):
                    return c
            return None
        return _call(f"listing the comments of PR #{number}", fetch, self.token)

    def upsert_sticky(self, number: int, build, create: bool = True) -> CommentResult | None:
        """Edit our one marked comment in place, or create it on the first run (unless ``create``
        is false: a green pull request gets no new comment). None when nothing was written.

        ``build(previous_state)`` returns the body; it learns how the last run ended so a PR
        that turns green can say so."""
        existing = self.find_sticky(number)
        if existing is None and not create:
            return None
        previous = previous_state(existing.body or "") if existing is not None else None
        body = _postable(build(previous))
        if MARKER not in body:
            body = f"{MARKER}\n{body}"
        if existing is not None:
            _call("editing the Sentinel comment", lambda: existing.edit(body), self.token)
            return CommentResult(existing.html_url, False, previous)
        created = _call("creating the Sentinel comment",
                        lambda: self.repo.get_issue(number).create_comment(body), self.token)
        return CommentResult(created.html_url, True, None)


    # -- inline review comments ----------------------------------------------------------------
    def our_review_comments(self, number: int) -> dict[str, object]:
        """Our inline comments on the PR, by the finding fingerprint in their marker."""
        def fetch():
            out = {}
            for c in self.repo.get_pull(number).get_review_comments():
                body = c.body or ""
                start = body.find(FINDING_PREFIX)
                if start < 0 or not self.is_ours(c.user):
                    continue
                end = body.find("-->", start)
                out.setdefault(body[start + len(FINDING_PREFIX):end].strip(), c)
            return out
        return _call(f"listing the review comments of PR #{number}", fetch, self.token)

    def post_review(self, number: int, sha: str, body: str, comments: list[dict]):
        """One review (event COMMENT) carrying all new inline comments of this push."""
        body = _postable(body)
        comments = [{**c, "body": _postable(c["body"])} if isinstance(c.get("body"), str) else c for c in comments]

        def post():
            return self.repo.get_pull(number).create_review(commit=self.repo.get_commit(sha), body=body,
                                                            event="COMMENT", comments=comments)
        return _call(f"posting a review on PR #{number}", post, self.token)

    def edit_review_comment(self, comment, body: str) -> None:
        body = _postable(body)
        _call("editing a review comment", lambda: comment.edit(body), self.token)

    def delete_review_comment(self, comment) -> None:
        _call("deleting a review comment", lambda: comment.delete(), self.token)

    def file_at(self, path: str, ref: str) -> bytes | None:
        """A file's bytes at a commit through the API (None: no such file)."""
        from github import UnknownObjectException

        def fetch():
            try:
                item = self.repo.get_contents(path, ref=ref)
            except UnknownObjectException:
                return None
            return None if isinstance(item, list) else item.decoded_content
        return _call(f"reading {path} at {ref[:7]}", fetch, self.token)


def previous_state(body: str) -> str | None:
    start = body.find(STATE_PREFIX)
    if start < 0:
        return None
    end = body.find("-->", start)
    return body[start + len(STATE_PREFIX):end].strip() or None if end > 0 else None


def file_section(path: str, status: str, patch: str | None, previous: str | None = None) -> str:
    """One file of a unified diff from the API's (filename, status, patch) triple."""
    old = previous or path
    head = f"diff --git a/{old} b/{path}\n"
    if status == "added":
        head += f"new file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    elif status == "removed":
        head += f"deleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
    else:
        if status == "renamed" and previous:
            head += f"rename from {previous}\nrename to {path}\n"
        head += f"--- a/{old}\n+++ b/{path}\n"
    if not patch and status == "renamed" and previous:
        return f"diff --git a/{previous} b/{path}\nsimilarity index 100%\nrename from {previous}\nrename to {path}\n"
    if not patch:
        # No patch: a binary file, or one too large for the API to diff.
        return f"diff --git a/{old} b/{path}\nBinary files a/{old} and b/{path} differ\n"
    return head + patch + ("" if patch.endswith("\n") else "\n")
