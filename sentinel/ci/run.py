"""`sentinel ci`: orchestrates one CI run. Exit codes as `sentinel check`: 0 pass, 1 fail, 2 error."""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass, field

from sentinel import api, engine, gitio
from sentinel.ci import annotations as ann
from sentinel.ci import review
from sentinel.ci.change import pr_change, push_change
from sentinel.ci.event import CiEvent, read_event
from sentinel.ci.github_api import MARKER, STATE_PREFIX, ApiProblem, GitHubApi
from sentinel.ci.inputs import CiInputs, read_inputs
from sentinel.ci.outputs import SUMMARY_LIMIT, append_summary, write_outputs
from sentinel.config import load_config
from sentinel.diffparse import parse_diff
from sentinel.errors import GitError, InputError
from sentinel.models import FilterMode, Severity, Verdict
from sentinel.sources import Change

COMMENT_LIMIT = 60_000  # GitHub caps a comment body at 65,536 characters
BRIEF_LIMIT = 8_000  # the memory brief in the PR comment: a few attempts, patterns and fixes
TITLE = "Sentinel"


@dataclass(slots=True)
class Notes:
    """What happened around the gate, for the summary: where the diff came from, what was skipped."""

    lines: list[str] = field(default_factory=list)
    links: dict[int, str] = field(default_factory=dict)  # line index -> a URL GitHub gave us, shown as a link
    stream: object = None  # where the log lines go: stdout, or stderr when stdout holds a report (--format)

    def add(self, text: str, url: str = "") -> None:
        from sentinel.redact import redact

        text = redact(text)  # reasons quote API answers and driver messages: the one redaction path
        if url:
            self.links[len(self.lines)] = url
        self.lines.append(text)
        # One physical line, so a reason from an API answer can never start a workflow command.
        print("sentinel: " + " ".join(f"{text} {url}".split()), file=self.stream or sys.stdout, flush=True)

    def markdown(self) -> str:
        from urllib.parse import urlsplit

        from sentinel.report.markdown import escape
        out = []
        for i, text in enumerate(self.lines):
            line = f"- {escape(text, width=1000)}"
            url = self.links.get(i, "")
            if urlsplit(url).scheme == "https" and not any(c in url for c in " ()<>[]\n"):
                line += f" [{escape(url, mentions=False, width=300)}]({url})"
            out.append(line)
        return "\n".join(out)


def _state(verdict: Verdict) -> str:
    return "error" if verdict.errored else ("passed" if verdict.passed else "failed")


class CiRun:
    def __init__(self, inputs: CiInputs, event: CiEvent, env: dict, notes: Notes):
        self.inp, self.ev, self.env, self.notes = inputs, event, env, notes
        self.workspace = env.get("GITHUB_WORKSPACE") or os.getcwd()
        self._api: GitHubApi | None = None
        self._api_error: str | None = None
        self.task_source = ""
        self.brief = None  # sentinel.memory.hypotheses.brief.Brief, shown in the comment when a pattern recurs

    # -- GitHub API, created on first use -------------------------------------------------------
    def api(self) -> GitHubApi:
        if self._api is None:
            if self._api_error:
                raise ApiProblem(self._api_error)
            if not self.ev.repository:
                self._api_error = "GITHUB_REPOSITORY is not set and the event names no repository"
                raise ApiProblem(self._api_error)
            try:
                self._api = GitHubApi(self.ev.repository, self.inp.github_token, self.env.get("GITHUB_API_URL"))
            except ApiProblem as exc:
                self._api_error = str(exc)
                raise
        return self._api

    # -- the change ---------------------------------------------------------------------------
    def root(self) -> str | None:
        try:
            return gitio.repo_root(self.workspace)
        except GitError:
            return None

    def change(self) -> Change:
        ev, root = self.ev, self.root()
        if ev.is_pr:
            if ev.name == "pull_request_target":
                # The job runs with a write token: the PR's code is read through the API as data,
                # never checked out, fetched or run.
                return self._api_change(root, "pull_request_target: the PR's diff read through the API "
                                              "(its code is never checked out)")
            if root and ev.base_sha and ev.head_sha:
                res = pr_change(root, ev.base_sha, ev.head_sha)
                if res.change is not None:
                    self.notes.add(f"diff: {res.how}")
                    return res.change
                return self._api_change(root, f"diff: from the GitHub API ({res.how})")
            return self._api_change(root, "diff: from the GitHub API (no git checkout with the PR's commits)")
        if ev.name == "push" and ev.after:
            if not root:
                raise GitError("a push event needs a git checkout of the repository (actions/checkout)")
            res = push_change(root, ev.before, ev.after)
            if res.change is None:
                raise GitError(f"cannot build the pushed change: {res.how}")
            self.notes.add(f"diff: {res.how}")
            return res.change
        raise InputError(f"event {ev.name or '(unknown)'!r} is not supported: `sentinel ci` runs on pull_request, "
                         "pull_request_target and push (use `sentinel check --range A...B` otherwise)")

    def _api_change(self, root: str | None, how: str) -> Change:
        try:
            text = self.api().pull_diff(self.ev.pr_number)
        except ApiProblem as exc:
            raise InputError(f"cannot read the pull request's diff: {exc}") from None
        cs = parse_diff(text, source=f"PR #{self.ev.pr_number} (GitHub API)")
        cs.root, cs.base, cs.head = root, self.ev.base_sha, self.ev.head_sha
        self.notes.add(how if how.startswith("diff:") else f"diff: {how}")
        # pull_request_target checks out the base branch: the PR's files are the base's plus the diff.
        return PatchedChange(cs, content_rev=None, base_checkout=self.ev.name == "pull_request_target")

    # -- task, claims and their evidence -------------------------------------------------------
    def task_and_issues(self) -> tuple[str | None, dict[int, str]]:
        ev, issues = self.ev, {}
        for n in ev.linked_issues if ev.is_pr else []:
            try:
                issues[n] = self.api().issue_text(n)
            except ApiProblem as exc:
                self.notes.add(f"task: linked issue #{n} not read ({exc})")
        if self.inp.task:
            self.task_source = "the `task` input"
            self.notes.add("task: from the `task` input")
            return self.inp.task, issues
        if issues:
            label = ", ".join(f"#{n}" for n in issues)
            self.task_source = f"linked issue {label}" if len(issues) == 1 else f"linked issues {label}"
            self.notes.add(f"task: from {self.task_source}")
            return "\n\n".join(issues.values()), issues
        if ev.title:
            self.task_source = "the PR title" if ev.is_pr else "the head commit's subject"
            self.notes.add("task: the PR title (link an issue with 'Fixes #N' for a better one)" if ev.is_pr
                           else "task: the head commit's subject")
            return ev.title, issues
        return None, issues

    def ci_checks(self) -> list[dict]:
        sha = self.ev.head_sha or self.ev.after
        if not sha or not self.ev.repository:
            return []
        ours = {n for n in (self.env.get("GITHUB_JOB"), self.env.get("SENTINEL_CHECK_NAME"), "sentinel") if n}
        try:
            return self.api().ci_checks(sha, ours)
        except ApiProblem as exc:
            self.notes.add(f"claims: CI check results not read ({exc})")
            return []

    def junit_paths(self) -> list[str]:
        out: list[str] = []
        for pattern in self.inp.junit:
            full = pattern if os.path.isabs(pattern) else os.path.join(self.workspace, pattern)
            matches = sorted(glob.glob(full, recursive=True)) if any(c in pattern for c in "*?[") else [full]
            if not matches:
                self.notes.add(f"junit: no file matches {pattern}")
            out.extend(matches)
        return out

    # -- the comment ------------------------------------------------------------------------
    def links(self):
        from sentinel.report.markdown import Links
        sha = self.ev.head_sha or self.ev.after
        server = self.env.get("GITHUB_SERVER_URL") or "https://github.com"
        if not sha or not self.ev.repository:
            return None
        return Links(server, self.ev.repository, sha, "PR description" if self.ev.is_pr else "commit message")

    def comment_body(self, verdict: Verdict, previous: str | None) -> str:
        from sentinel.report import markdown
        state = _state(verdict)
        parts = [MARKER, f"{STATE_PREFIX}{state} -->"]
        footer = self._footer()
        if state == "passed" and not verdict.findings:
            # The PR turned green: the comment stays (edited), short, and says so.
            sha = (self.ev.head_sha or self.ev.after or "")[:7]
            was = " (the previous run failed)" if previous in ("failed", "error") else ""
            parts.append(f"## \u2705 {TITLE}: all clear{was}\n\nNo findings at <code>{sha}</code>; "
                         f"{markdown.escape(_checks_phrase(verdict), width=600)}.")
            parts.append(footer)
            return "\n".join(parts)
        if state == "passed" and previous in ("failed", "error"):
            parts.append("> [!NOTE]\n> \u2705 The previous run of Sentinel on this pull request failed; "
                         "this push passes.\n")
        brief = _brief_block(self.brief, markdown) if self.brief is not None and not verdict.passed else ""
        budget = (COMMENT_LIMIT - sum(len(p.encode("utf-8")) + 1 for p in parts) - len(footer.encode("utf-8"))
                  - len(brief.encode("utf-8")))
        parts.append(markdown.render(verdict, max_bytes=budget, title=TITLE, links=self.links()))
        if brief:
            parts.append(brief)
        parts.append(footer)
        return "\n".join(parts)

    def _footer(self) -> str:
        from sentinel.report.markdown import escape
        bits = []
        sha = self.ev.head_sha or self.ev.after
        if sha:
            bits.append(f"commit <code>{escape(sha[:7], mentions=False)}</code>")
        if self.task_source:
            bits.append(f"task from {escape(self.task_source, mentions=False)}")
        if self.ev.is_pr:
            bits.append("claims read from the PR description")
        server, repo, run_id = (self.env.get("GITHUB_SERVER_URL"), self.env.get("GITHUB_REPOSITORY"),
                                self.env.get("GITHUB_RUN_ID"))
        if server and repo and run_id and run_id.isdigit():
            import html
            href = html.escape(f"{server}/{repo}/actions/runs/{run_id}", quote=True)  # an attribute value
            bits.append(f'<a href="{href}">full report in the job summary</a>')
        bits.append("this comment is updated in place on every push")
        return "\n<sub>" + " \u00B7 ".join(bits) + "</sub>\n"

    def post_comment(self, verdict: Verdict) -> str:
        if not self.inp.comment:
            return ""
        if not self.ev.is_pr:
            self.notes.add("comment: skipped (not a pull request event)")
            return ""
        green = verdict.passed and not verdict.errored
        try:
            res = self.api().upsert_sticky(self.ev.pr_number, lambda prev: self.comment_body(verdict, prev),
                                           create=not green)
        except ApiProblem as exc:
            self.notes.add(f"comment: not posted, falling back to annotations and this summary: {exc}")
            return ""
        if self.api().identity_note:
            self.notes.add(f"comment: {self.api().identity_note}")
        if res is None:
            self.notes.add("comment: none (the pull request is green and had no Sentinel comment)")
            return ""
        self.notes.add(f"comment: {'created' if res.created else 'updated'}", url=res.url)
        return res.url

    def post_review(self, verdict: Verdict, change: Change, config=None) -> None:
        if not self.inp.review_comments or not self.ev.is_pr or not self.ev.head_sha:
            return
        suggestions = _suggestions(change, config, verdict, self.notes) if config is not None else None
        try:
            outcome = review.sync(self.api(), self.ev.pr_number, self.ev.head_sha, verdict, change.changeset,
                                  self.inp.review_comments, suggestions)
        except ApiProblem as exc:
            self.notes.add(f"review: inline comments not posted: {exc}")
            return
        if outcome:
            self.notes.add(f"review: {outcome}")


class PatchedChange(Change):
    """A change read through the API. For pull_request_target the files on disk are the base
    branch's: the PR's files are those with the PR's diff applied, not what is on disk."""

    base_checkout: bool = False

    def read(self, paths: list[str]) -> dict[str, bytes | None]:
        from sentinel.configdiff import apply_diff

        if not self.base_checkout or not self.changeset.root:
            # Another checkout (a pull_request's merge commit): its files are used only where they
            # agree with the diff (engine.build_contexts checks), else the diff's own lines.
            return Change.read(self, paths)
        by_path = {f.path: f for f in self.changeset.files}
        out: dict[str, bytes | None] = {}
        for p in paths:
            fc = by_path.get(p)
            if fc is None or fc.status.value in ("deleted", "binary"):
                out[p] = None
                continue
            before: list[str] = []
            if fc.status.value != "added":
                try:
                    with open(os.path.join(self.changeset.root, fc.old_path or fc.path), "rb") as fh:
                        before = fh.read().decode("utf-8", "surrogateescape").split("\n")
                except OSError:
                    out[p] = None
                    continue
                if before and before[-1] == "":
                    before.pop()
            after = apply_diff(before, fc)
            out[p] = None if after is None else ("\n".join(after) + "\n").encode("utf-8", "surrogateescape")
        return out


def _suggestions(change, config, verdict: Verdict, notes: Notes) -> dict | None:
    """Safe fixes as GitHub suggestions, for the inline comments (the PR's head content, as checked)."""
    if verdict.passed or not verdict.findings:
        return None
    try:
        from sentinel.fix import export, planner
        return export.suggestions(planner.plan(change, verdict.findings, config, require_worktree=False))
    except Exception as exc:  # noqa: BLE001 - a comment without a suggestion is still a comment
        notes.add(f"review: fix suggestions left out: {type(exc).__name__}: {exc}")
        return None


def _checks_phrase(verdict: Verdict) -> str:
    from sentinel.report.terminal import check_status_parts
    return ", ".join(text for _, text in check_status_parts(verdict.checks, verdict.fail_level)) or "no checks ran"


def _brief_block(brief, markdown) -> str:
    """The memory brief (this PR's failed attempts, recurring patterns, similar fixes), folded, size-capped."""
    body = brief.to_markdown(markdown.escape, markdown.code, heading="####")
    if len(body.encode("utf-8")) > BRIEF_LIMIT:
        body = body.encode("utf-8")[:BRIEF_LIMIT].decode("utf-8", "ignore").rsplit("\n", 1)[0] + "\n\u2026\n"
    return ("<details><summary>Before the next push: what memory knows about this change</summary>\n\n"
            f"{body}\n</details>\n")


def _configure(config, inp: CiInputs, ev: CiEvent, env: dict) -> None:
    if inp.llm_model:
        config.llm.enabled = True
        config.llm.model = inp.llm_model
    if not config.memory.store_path and env.get("SENTINEL_STORE"):
        config.memory.store_path = env["SENTINEL_STORE"]
    if (env.get("INPUT_DATABASE_URL") or "").strip():  # the action's database-url input (from a secret)
        os.environ["SENTINEL_DATABASE_URL"] = env["INPUT_DATABASE_URL"].strip()


def _remember(change, config, verdict, ev: CiEvent, env: dict, notes: Notes) -> Verdict:
    try:
        from sentinel.memory.hypotheses import gate_hook
    except ModuleNotFoundError:
        return verdict
    # Every push to one PR is the same change for the store: its failures and their resolution.
    os.environ.setdefault("SENTINEL_CHANGE_REF", f"pr-{ev.pr_number}" if ev.is_pr
                          else (env.get("GITHUB_REF_NAME") or "push"))
    if ev.repository and not config.memory.project:
        # the identity every clone of the repository computes from its remote: one project for CI and people
        from sentinel.memory.store.project import normalize_remote
        server = env.get("GITHUB_SERVER_URL") or "https://github.com"
        os.environ.setdefault("SENTINEL_PROJECT", normalize_remote(f"{server}/{ev.repository}"))
    from sentinel.checks import rule_index

    verdict = gate_hook.after_run(change, config, verdict, rules=rule_index)
    if verdict.recall_note:
        notes.add(f"memory: {verdict.recall_note}")
    return verdict


def _rules() -> dict:
    """Rule documentation for titles and SARIF; a check module that cannot load just has none."""
    from sentinel.checks import available_checks, load_check
    out: dict = {}
    for name in available_checks():
        try:
            rules = load_check(name).RULES
        except (ImportError, AttributeError):
            continue
        out.update({r.code: r for r in rules})
    return out


def _write_sarif(verdict: Verdict, path: str, change: Change, workspace: str) -> str:
    full = path if os.path.isabs(path) else os.path.join(workspace, path)
    os.makedirs(os.path.dirname(full) or ".", exist_ok=True)
    with open(full, "w", encoding="utf-8") as fh:
        fh.write(_report(verdict, "sarif", change, workspace))
    return full


def _summary(verdict: Verdict, notes: Notes) -> str:
    from sentinel.report import markdown
    tail = ""
    if notes.lines:
        tail = "\n### Run notes\n\n" + notes.markdown() + "\n"
    budget = SUMMARY_LIMIT - len(tail.encode("utf-8"))
    return markdown.render(verdict, max_bytes=budget, title=TITLE) + tail


def _report(verdict: Verdict, fmt: str, change: Change, workspace: str) -> str:
    """The report of `sentinel check --format FMT` (for stdout, and the SARIF file)."""
    from sentinel.report import render
    kwargs: dict = {"color": False}
    if fmt == "sarif":
        from sentinel.report.locate import Locator
        root = change.changeset.root or workspace
        kwargs.update(rules=_rules(), root=root, locator=Locator(change.changeset.files, root))
    return render(verdict, fmt, **kwargs)


def run(event_path: str | None = None, env: dict | None = None, fmt: str = "github") -> int:
    """One CI run. `fmt` chooses stdout: "github" is the step's log (notes, capped annotations, summary line);
    any other format of `sentinel check` puts that report alone on stdout and the log on stderr, where the
    runner reads workflow commands as well. Summary, comment, review, SARIF file and outputs never change."""
    log = sys.stdout if fmt == "github" else sys.stderr
    env = dict(os.environ if env is None else env)
    workspace = env.get("GITHUB_WORKSPACE") or os.getcwd()
    inp = read_inputs(env, workspace)
    ev = read_event(event_path or env.get("GITHUB_EVENT_PATH"), env.get("GITHUB_EVENT_NAME"),
                    env.get("GITHUB_REPOSITORY", ""))
    notes = Notes(stream=log)
    ci = CiRun(inp, ev, env, notes)
    change = ci.change()
    root = change.changeset.root
    if ev.is_pr:
        # The pull request must not judge itself by rules it rewrote: the base branch's configuration.
        from sentinel.ci.baseconfig import gate_config
        config, config_change = gate_config(ci, change, workspace)
    else:
        config = load_config(root or workspace, inp.config, cache_dir=api.cache_dir_for(root))
        config_change = None
    _configure(config, inp, ev, env)
    task, issues = ci.task_and_issues()
    extra = {"junit": ci.junit_paths(), "ci_checks": ci.ci_checks(), "issues": issues, "coverage": [],
             "task_source": ci.task_source}
    if config_change is not None:
        extra["config_change"] = config_change
    message = ev.body if ev.body.strip() else None
    opts = engine.RunOptions(fail_level=Severity(inp.fail_level) if inp.fail_level else None,
                             filter_mode=FilterMode(inp.filter_mode) if inp.filter_mode else None,
                             task=task, message=message, extra=extra)
    verdict = engine.run(change, config, opts)
    if inp.memory and config.memory.enabled:
        verdict = _remember(change, config, verdict, ev, env, notes)
        if any(p.changes >= 2 for g in verdict.recall for p in g.patterns):
            from sentinel.checks import rule_index
            from sentinel.memory.hypotheses import gate_hook
            ci.brief = gate_hook.brief_for_change(change, config, rules=rule_index)
    elif not inp.memory:
        notes.add("memory: off (input `memory: off`)")

    sarif_path = _write_sarif(verdict, inp.sarif, change, workspace) if inp.sarif else ""
    if sarif_path:
        notes.add(f"sarif: written to {os.path.relpath(sarif_path, workspace)}")

    if inp.annotations:
        text, left_out = ann.render(verdict, [f.path for f in change.changeset.files], _rules())
        log.write(text)
        log.flush()
        if left_out:
            notes.lines.append(f"annotations: {left_out} finding(s) beyond GitHub's 10-per-severity cap "
                               "are listed only here")
    comment_url = ci.post_comment(verdict)
    ci.post_review(verdict, change, config)

    summary = _summary(verdict, notes)
    if not append_summary(env.get("GITHUB_STEP_SUMMARY"), summary):
        print("sentinel: GITHUB_STEP_SUMMARY is not set; no job summary written", file=log)
    write_outputs(env.get("GITHUB_OUTPUT"), {"verdict": _state(verdict), "findings": str(len(verdict.findings)),
                                             "sarif-path": sarif_path, "comment-url": comment_url})
    from sentinel.report.terminal import summary_line
    if fmt != "github":
        sys.stdout.write(_report(verdict, fmt, change, workspace))
        sys.stdout.flush()
    if fmt not in ("text", "concise"):  # those end with it already
        print(summary_line(verdict), file=log)
    if verdict.errored:
        for r in verdict.checks:
            if r.status.value == "error":
                print(f"sentinel: error: check '{r.check}' failed to run: {r.reason}", file=sys.stderr)
        return 2
    return 0 if verdict.passed else 1
