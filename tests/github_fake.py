"""A loopback GitHub REST server for tests: http.server in a thread, real HTTP, real PyGithub.

It implements just the endpoints `sentinel ci` calls, with payload shapes from GitHub's REST
documentation (issue comments, pulls, pull files, issues, check runs, combined status):

    GET   /repos/{o}/{r}/pulls/{n}                 GET /repos/{o}/{r}/pulls/{n}/files
    GET   /repos/{o}/{r}/issues/{n}                GET /repos/{o}/{r}/issues/{n}/comments
    POST  /repos/{o}/{r}/issues/{n}/comments       PATCH /repos/{o}/{r}/issues/comments/{id}
    GET   /repos/{o}/{r}/commits/{sha}/check-runs  GET /repos/{o}/{r}/commits/{sha}/status(es)
    GET   /repos/{o}/{r}/pulls/{n}/comments        POST /repos/{o}/{r}/pulls/{n}/reviews
    PATCH /repos/{o}/{r}/pulls/comments/{id}       DELETE /repos/{o}/{r}/pulls/comments/{id}
    GET   /repos/{o}/{r}/contents/{path}?ref=      GET /repos/{o}/{r}/commits/{sha}
    GET   /user                                    POST /graphql  (query { viewer { login } })

The token behaves like the default GITHUB_TOKEN (an app installation token: GET /user answers 403,
GraphQL's viewer is the app's bot) unless ``user_login`` makes it a personal token. A review's
inline comments must sit on lines of the PR's diff (the RIGHT side of its files' patches), or the
review is refused with 422 as GitHub refuses it.

Lists paginate with ``page``/``per_page`` and RFC 5988 ``Link`` headers like GitHub's, with a
server-side page size cap so pagination can be exercised with a handful of items. Switches
simulate a read-only token (403 on writes) and an exhausted rate limit (403 or 429).
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_ROUTES = [
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)$"), "get_pull"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/files$"), "get_pull_files"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)$"), "get_issue"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$"), "list_comments"),
    ("POST", re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$"), "create_comment"),
    ("PATCH", re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$"), "edit_comment"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/check-runs$"), "check_runs"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/status$"), "combined_status"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)/statuses$"), "statuses"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/commits/([0-9a-f]+)$"), "get_commit"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/comments$"), "list_review_comments"),
    ("POST", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)/reviews$"), "create_review"),
    ("PATCH", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/comments/(\d+)$"), "edit_review_comment"),
    ("DELETE", re.compile(r"^/repos/([^/]+/[^/]+)/pulls/comments/(\d+)$"), "delete_review_comment"),
    ("GET", re.compile(r"^/repos/([^/]+/[^/]+)/contents/(.+)$"), "get_contents"),
    ("GET", re.compile(r"^/(user)()$"), "get_user"),
    ("POST", re.compile(r"^/(graphql)()$"), "graphql"),
]

_USER = {"login": "github-actions[bot]", "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=", "type": "Bot",
         "site_admin": False, "url": "https://api.github.com/users/github-actions%5Bbot%5D",
         "html_url": "https://github.com/apps/github-actions"}


class FakeGitHub:
    """State plus the server. Use as a context manager; ``base_url`` is for PyGithub/GITHUB_API_URL."""

    def __init__(self, repository: str = "octo/demo", page_size: int = 30):
        self.repository = repository
        self.page_size = page_size  # GitHub caps per_page at 100; a small cap makes pagination testable
        self.pulls: dict[int, dict] = {}
        self.pull_files: dict[int, list[dict]] = {}
        self.issues: dict[int, dict] = {}
        self.comments: dict[int, list[dict]] = {}  # issue number -> comments in creation order
        self.check_runs: dict[str, list[dict]] = {}
        self.statuses: dict[str, list[dict]] = {}
        self.review_comments: dict[int, list[dict]] = {}  # PR number -> inline comments
        self.reviews: dict[int, list[dict]] = {}
        self.contents: dict[tuple[str, str], bytes] = {}  # (ref, path) -> file bytes
        self.user_login: str | None = None  # None: an app installation token (GET /user is 403)
        self.read_only = False  # a fork PR's token: writes answer 403
        self.rate_limited: int | None = None  # 403 or 429 for every request
        self.requests: list[tuple[str, str]] = []
        self.auth_headers: list[str] = []
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> FakeGitHub:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            state = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- seeding ----------------------------------------------------------------------------------
    def add_pull(self, number: int, title: str, body: str, base_sha: str, head_sha: str,
                 files: list[dict] | None = None, head_repo: str | None = None) -> dict:
        repo = self._repo_json(self.repository)
        head_full = head_repo or self.repository
        pr = {"url": f"{self.base_url}/repos/{self.repository}/pulls/{number}", "id": 5000 + number,
              "node_id": f"PR_{number}", "number": number, "state": "open", "locked": False, "title": title,
              "body": body, "user": {"login": "contributor", "id": 7, "type": "User"},
              "html_url": f"https://github.com/{self.repository}/pull/{number}",
              "issue_url": f"{self.base_url}/repos/{self.repository}/issues/{number}",
              "comments_url": f"{self.base_url}/repos/{self.repository}/issues/{number}/comments",
              "head": {"label": f"{head_full.split('/')[0]}:feature", "ref": "feature", "sha": head_sha,
                       "repo": self._repo_json(head_full)},
              "base": {"label": f"{self.repository.split('/')[0]}:main", "ref": "main", "sha": base_sha,
                       "repo": repo},
              "draft": False, "merged": False, "created_at": "2026-01-02T03:04:05Z",
              "updated_at": "2026-01-02T03:04:05Z"}
        self.pulls[number] = pr
        self.pull_files[number] = files or []
        self.issues.setdefault(number, {"number": number, "title": title, "body": body,
                                        "pull_request": {"url": pr["url"]}})
        return pr

    def add_issue(self, number: int, title: str, body: str) -> None:
        self.issues[number] = {"number": number, "title": title, "body": body}

    def add_comment(self, number: int, body: str, login: str = "someone", bot: bool = False) -> dict:
        with self._lock:
            return self._new_comment(number, body, {**_USER, "login": login, "type": "Bot" if bot else "User"})

    def event_payload(self, number: int, action: str = "synchronize") -> dict:
        return {"action": action, "number": number, "pull_request": self.pulls[number],
                "repository": self._repo_json(self.repository)}

    # -- helpers ----------------------------------------------------------------------------------
    def _repo_json(self, full: str) -> dict:
        owner, name = full.split("/", 1)
        return {"id": abs(hash(full)) % 10**8, "name": name, "full_name": full, "private": False,
                "owner": {"login": owner, "id": 1, "type": "Organization"},
                "html_url": f"https://github.com/{full}", "url": f"{self.base_url}/repos/{full}"}

    def _new_comment(self, number: int, body: str, user: dict) -> dict:
        self._next_id += 1
        cid = self._next_id
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        comment = {"id": cid, "node_id": f"IC_{cid}",
                   "url": f"{self.base_url}/repos/{self.repository}/issues/comments/{cid}",
                   "html_url": f"https://github.com/{self.repository}/pull/{number}#issuecomment-{cid}",
                   "issue_url": f"{self.base_url}/repos/{self.repository}/issues/{number}",
                   "body": body, "user": user, "created_at": now, "updated_at": now,
                   "author_association": "NONE", "performed_via_github_app": None}
        self.comments.setdefault(number, []).append(comment)
        return comment

    def all_comments(self) -> list[dict]:
        return [c for cs in self.comments.values() for c in cs]

    def actor(self) -> dict:
        """The account the token acts as."""
        if self.user_login:
            return {**_USER, "login": self.user_login, "type": "User", "id": 99}
        return dict(_USER)

    def right_lines(self, number: int) -> dict[str, set[int]] | None:
        """Lines a review comment may sit on (RIGHT side of each file's patch); None if unknown."""
        files = self.pull_files.get(number)
        if not files:
            return None
        out: dict[str, set[int]] = {}
        for f in files:
            lines: set[int] = set()
            new = 0
            for raw in (f.get("patch") or "").split("\n"):
                m = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", raw)
                if m:
                    new = int(m.group(1))
                    continue
                if raw.startswith("-"):
                    continue
                if raw.startswith(("+", " ")):
                    lines.add(new)
                    new += 1
            out[f["filename"]] = lines
        return out


class _Handler(BaseHTTPRequestHandler):
    state: FakeGitHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        return

    def _send(self, status: int, payload, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(n) or b"{}") if n else {}

    def _dispatch(self, method: str) -> None:
        st = self.state
        parts = urlsplit(self.path)
        st.requests.append((method, parts.path))
        st.auth_headers.append(self.headers.get("Authorization", ""))
        if method in ("POST", "PATCH"):
            body = self._body()
        else:
            body = {}
        if st.rate_limited:
            reset = str(int(time.time()) + 3600)
            headers = {"x-ratelimit-limit": "1000", "x-ratelimit-remaining": "0", "x-ratelimit-used": "1000",
                       "x-ratelimit-reset": reset, "x-ratelimit-resource": "core"}
            if st.rate_limited == 429:
                headers["retry-after"] = "60"
            return self._send(st.rate_limited, {
                "message": "API rate limit exceeded for installation ID 1.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                headers)
        for m, rx, name in _ROUTES:
            match = rx.match(parts.path)
            if m == method and match:
                return getattr(self, name)(match.group(1), match.group(2), parse_qs(parts.query), body)
        return self._send(404, {"message": "Not Found",
                                "documentation_url": "https://docs.github.com/rest"})

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _no_content(self) -> None:
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- pagination -------------------------------------------------------------------------------
    def _page(self, items: list, query: dict, path: str, key: str | None = None, extra: dict | None = None):
        st = self.state
        per_page = min(int(query.get("per_page", ["30"])[0]), 100, st.page_size)
        page = max(int(query.get("page", ["1"])[0]), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []

        def url(p):
            return f'<{st.base_url}{path}?per_page={per_page}&page={p}>'
        if page < last:
            links += [f'{url(page + 1)}; rel="next"', f'{url(last)}; rel="last"']
        if page > 1:
            links += [f'{url(1)}; rel="first"', f'{url(page - 1)}; rel="prev"']
        headers = {"Link": ", ".join(links)} if links else {}
        payload = chunk if key is None else {"total_count": len(items), key: chunk, **(extra or {})}
        self._send(200, payload, headers)

    # -- endpoints --------------------------------------------------------------------------------
    def get_pull(self, repo, number, query, body):
        pr = self.state.pulls.get(int(number))
        return self._send(200, pr) if pr else self._send(404, {"message": "Not Found"})

    def get_pull_files(self, repo, number, query, body):
        files = self.state.pull_files.get(int(number))
        if files is None:
            return self._send(404, {"message": "Not Found"})
        return self._page(files, query, f"/repos/{repo}/pulls/{number}/files")

    def get_issue(self, repo, number, query, body):
        issue = self.state.issues.get(int(number))
        if issue is None:
            return self._send(404, {"message": "Not Found"})
        st = self.state
        return self._send(200, {"id": 9000 + int(number), "node_id": f"I_{number}",
                                "url": f"{st.base_url}/repos/{repo}/issues/{number}",
                                "html_url": f"https://github.com/{repo}/issues/{number}", "state": "open",
                                "user": {"login": "reporter", "id": 8, "type": "User"}, "labels": [],
                                "comments": len(st.comments.get(int(number), [])), **issue})

    def list_comments(self, repo, number, query, body):
        return self._page(list(self.state.comments.get(int(number), [])), query,
                          f"/repos/{repo}/issues/{number}/comments")

    def create_comment(self, repo, number, query, body):
        st = self.state
        if st.read_only:
            return self._send(403, {"message": "Resource not accessible by integration",
                                    "documentation_url": "https://docs.github.com/rest/issues/comments"
                                                         "#create-an-issue-comment", "status": "403"})
        if not isinstance(body.get("body"), str):
            return self._send(422, {"message": "Invalid request.\n\n\"body\" wasn't supplied."})
        with st._lock:
            comment = st._new_comment(int(number), body["body"], st.actor())
        return self._send(201, comment, {"Location": comment["url"]})

    def edit_comment(self, repo, cid, query, body):
        st = self.state
        if st.read_only:
            return self._send(403, {"message": "Resource not accessible by integration", "status": "403"})
        for c in st.all_comments():
            if c["id"] == int(cid):
                c["body"] = body.get("body", c["body"])
                c["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                return self._send(200, c)
        return self._send(404, {"message": "Not Found"})

    def check_runs(self, repo, sha, query, body):
        runs = [{"id": 700 + i, "head_sha": sha, "node_id": f"CR_{i}", "external_id": "",
                 "url": f"{self.state.base_url}/repos/{repo}/check-runs/{700 + i}",
                 "html_url": f"https://github.com/{repo}/runs/{700 + i}", "details_url": None,
                 "started_at": "2026-01-02T03:04:05Z", "completed_at": None, "output": {
                     "title": None, "summary": None, "text": None, "annotations_count": 0}, "app": None,
                 "pull_requests": [], **r} for i, r in enumerate(self.state.check_runs.get(sha, []))]
        return self._page(runs, query, f"/repos/{repo}/commits/{sha}/check-runs", key="check_runs")

    def _statuses(self, repo, sha):
        return [{"id": 800 + i, "node_id": f"SC_{i}", "url": f"{self.state.base_url}/repos/{repo}/statuses/{sha}",
                 "description": "", "target_url": None, "created_at": "2026-01-02T03:04:05Z",
                 "updated_at": "2026-01-02T03:04:05Z", "creator": _USER, **s}
                for i, s in enumerate(self.state.statuses.get(sha, []))]

    def combined_status(self, repo, sha, query, body):
        statuses = self._statuses(repo, sha)
        states = {s["state"] for s in statuses}
        overall = "failure" if states & {"failure", "error"} else ("pending" if "pending" in states or not states
                                                                    else "success")
        return self._send(200, {"state": overall, "statuses": statuses, "sha": sha, "total_count": len(statuses),
                                "repository": self.state._repo_json(repo),
                                "commit_url": f"{self.state.base_url}/repos/{repo}/commits/{sha}",
                                "url": f"{self.state.base_url}/repos/{repo}/commits/{sha}/status"})

    def statuses(self, repo, sha, query, body):
        return self._page(self._statuses(repo, sha), query, f"/repos/{repo}/commits/{sha}/statuses")

    # -- identity, contents, reviews -----------------------------------------------------------------
    def get_user(self, _a, _b, query, body):
        st = self.state
        if not st.user_login:
            return self._send(403, {"message": "Resource not accessible by integration", "status": "403",
                                    "documentation_url": "https://docs.github.com/rest/users/users"
                                                         "#get-the-authenticated-user"})
        return self._send(200, st.actor())

    def graphql(self, _a, _b, query, body):
        if "viewer" not in str(body.get("query", "")):
            return self._send(200, {"errors": [{"message": "unsupported query"}]})
        login = self.state.user_login or "github-actions"  # GraphQL names a bot without "[bot]"
        return self._send(200, {"data": {"viewer": {"login": login}}})

    def get_commit(self, repo, sha, query, body):
        st = self.state
        return self._send(200, {"sha": sha, "node_id": f"C_{sha[:7]}",
                                "url": f"{st.base_url}/repos/{repo}/commits/{sha}",
                                "html_url": f"https://github.com/{repo}/commit/{sha}", "commit": {"message": ""},
                                "parents": [], "files": []})

    def get_contents(self, repo, path, query, body):
        ref = query.get("ref", [""])[0]
        data = self.state.contents.get((ref, path))
        if data is None:
            return self._send(404, {"message": "Not Found"})
        import base64
        return self._send(200, {"type": "file", "encoding": "base64", "size": len(data), "name": path.split("/")[-1],
                                "path": path, "sha": "0" * 40, "content": base64.b64encode(data).decode(),
                                "url": f"{self.state.base_url}/repos/{repo}/contents/{path}"})

    def list_review_comments(self, repo, number, query, body):
        return self._page(list(self.state.review_comments.get(int(number), [])), query,
                          f"/repos/{repo}/pulls/{number}/comments")

    def create_review(self, repo, number, query, body):
        st = self.state
        n = int(number)
        if st.read_only:
            return self._send(403, {"message": "Resource not accessible by integration", "status": "403"})
        allowed = st.right_lines(n)
        comments = body.get("comments") or []
        for c in comments:
            if c.get("side", "RIGHT") != "RIGHT" or not isinstance(c.get("line"), int):
                return self._send(422, {"message": "Unprocessable Entity", "errors": ["side/line required"]})
            if allowed is not None and c["line"] not in allowed.get(c.get("path"), set()):
                return self._send(422, {"message": "Unprocessable Entity",
                                        "errors": ["Pull request review thread line must be part of the diff"]})
        with st._lock:
            st._next_id += 1
            rid = st._next_id
            review = {"id": rid, "node_id": f"PRR_{rid}", "user": st.actor(), "body": body.get("body", ""),
                      "state": "COMMENTED", "commit_id": body.get("commit_id"),
                      "html_url": f"https://github.com/{repo}/pull/{n}#pullrequestreview-{rid}",
                      "pull_request_url": f"{st.base_url}/repos/{repo}/pulls/{n}",
                      "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            st.reviews.setdefault(n, []).append(review)
            for c in comments:
                st._next_id += 1
                cid = st._next_id
                st.review_comments.setdefault(n, []).append({
                    "id": cid, "node_id": f"PRRC_{cid}", "pull_request_review_id": rid, "path": c["path"],
                    "line": c["line"], "original_line": c["line"], "side": "RIGHT", "position": 1,
                    "start_line": c.get("start_line"), "start_side": c.get("start_side"),
                    "commit_id": body.get("commit_id"), "original_commit_id": body.get("commit_id"),
                    "user": st.actor(), "body": c["body"], "diff_hunk": "@@",
                    "url": f"{st.base_url}/repos/{repo}/pulls/comments/{cid}",
                    "html_url": f"https://github.com/{repo}/pull/{n}#discussion_r{cid}",
                    "pull_request_url": f"{st.base_url}/repos/{repo}/pulls/{n}",
                    "created_at": review["submitted_at"], "updated_at": review["submitted_at"],
                    "author_association": "NONE"})
        return self._send(200, review)

    def _find_review_comment(self, cid):
        for cs in self.state.review_comments.values():
            for c in cs:
                if c["id"] == int(cid):
                    return cs, c
        return None, None

    def edit_review_comment(self, repo, cid, query, body):
        if self.state.read_only:
            return self._send(403, {"message": "Resource not accessible by integration", "status": "403"})
        _, c = self._find_review_comment(cid)
        if c is None:
            return self._send(404, {"message": "Not Found"})
        c["body"] = body.get("body", c["body"])
        return self._send(200, c)

    def delete_review_comment(self, repo, cid, query, body):
        cs, c = self._find_review_comment(cid)
        if c is None:
            return self._send(404, {"message": "Not Found"})
        cs.remove(c)
        return self._no_content()
