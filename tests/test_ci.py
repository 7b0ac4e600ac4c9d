"""`sentinel ci` end to end: a real git repo, a real event payload, real PyGithub against a
loopback GitHub (tests/github_fake.py), and the files GitHub Actions reads afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel.ci import annotations as ann
from sentinel.ci.event import linked_issues, parse_event
from sentinel.ci.github_api import MARKER, ApiProblem, GitHubApi, file_section
from sentinel.ci.inputs import read_inputs
from sentinel.diffparse import parse_diff
from sentinel.errors import InputError
from sentinel.models import CheckResult, CheckStatus, Finding, Severity, Verdict
from tests.conftest import _INSTALLED, GitRepo
from tests.github_fake import FakeGitHub

# Only the jail check, so the assertions do not depend on checks other engineers are writing;
# SEN104 raised to error gives two severities to cap.
CONFIG = """
[style]
enabled = false
[chaos]
enabled = false
[placeholder]
enabled = false
[drift]
enabled = false
[claims]
enabled = false
[severity]
SEN104 = "error"
"""
N_ERRORS, N_WARNINGS = 13, 12


def _bad_source() -> str:
    lines = ["import os", "import shutil"]
    lines += [f"os.system('rm -rf /tmp/build{i}')" for i in range(N_ERRORS)]
    lines += [f"shutil.rmtree('cache{i}')" for i in range(N_WARNINGS)]
    return "\n".join(lines) + "\n"


@pytest.fixture
def pr_repo(tmp_path, installed_sentinel):
    (tmp_path / "repo").mkdir()
    repo = GitRepo(tmp_path / "repo", installed_sentinel)
    repo.write(".sentinel.toml", CONFIG)
    repo.write("app.py", "print('hello')\n")
    repo.add(".sentinel.toml", "app.py")
    base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", "print('hello')\n" + _bad_source())
    repo.add("app.py")
    head = repo.commit("feature: clean up build dirs")
    repo.base, repo.head = base, head
    return repo


@pytest.fixture
def gh():
    with FakeGitHub(page_size=2) as fake:
        yield fake


def _run_ci(repo, gh, tmp_path, event: dict, event_name: str = "pull_request", inputs: dict | None = None,
            cwd=None, extra_env: dict | None = None, args: tuple[str, ...] = ()):
    event_file = tmp_path / "event.json"
    event_file.write_text(json.dumps(event))
    summary, output = tmp_path / "summary.md", tmp_path / "output.txt"
    summary.write_text("")
    output.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "SENTINEL_"))}
    env.update({"GITHUB_EVENT_PATH": str(event_file), "GITHUB_EVENT_NAME": event_name,
                "GITHUB_REPOSITORY": gh.repository, "GITHUB_API_URL": gh.base_url,
                "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output),
                "GITHUB_WORKSPACE": str(cwd or repo.path), "GITHUB_SERVER_URL": "https://github.com",
                "GITHUB_RUN_ID": "4242", "GITHUB_JOB": "sentinel", "INPUT_GITHUB_TOKEN": "ghs_faketoken123",
                "INPUT_MEMORY": "off", "SENTINEL_GITHUB_RETRIES": "0"})
    env.update(inputs or {})
    env.update(extra_env or {})
    script = repo.sentinel_script or _INSTALLED.get("path")
    command = [*([script] if script else [sys.executable, "-m", "sentinel"]), "ci", *args]
    proc = subprocess.run(command, cwd=cwd or repo.path, capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    proc.summary = summary.read_text()
    proc.outputs = _parse_outputs(output.read_text())
    return proc


def _parse_outputs(text: str) -> dict:
    out, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        name, delim = lines[i].split("<<", 1)
        j = lines.index(delim, i + 1)
        out[name] = "\n".join(lines[i + 1:j])
        i = j + 1
    return out


def _pr(gh, repo, body="Cleans up build dirs.\n\nFixes #12", files=None):
    gh.add_issue(12, "Clean up build directories", "Remove stale build and cache directories on start.")
    gh.add_pull(7, "Clean up build dirs", body, repo.base, repo.head, files=files)
    return gh.event_payload(7)


def _annotations(stdout: str) -> dict[str, list[str]]:
    out = {"error": [], "warning": [], "notice": []}
    for line in stdout.splitlines():
        for kind in out:
            if line.startswith(f"::{kind} "):
                out[kind].append(line)
    return out


# -- end to end ---------------------------------------------------------------------------------

def test_first_run_creates_comment_second_edits_it(pr_repo, gh, tmp_path):
    event = _pr(gh, pr_repo)
    gh.add_comment(7, "LGTM, but see the bot")
    gh.add_comment(7, "another human comment")  # page size 2: our comment will land on page 2
    gh.check_runs[pr_repo.head] = [{"name": "tests", "status": "completed", "conclusion": "success"},
                                   {"name": "sentinel", "status": "in_progress", "conclusion": None}]
    first = _run_ci(pr_repo, gh, tmp_path, event)
    assert first.returncode == 1, first.stderr
    ours = [c for c in gh.all_comments() if MARKER in c["body"]]
    assert len(ours) == 1
    url = ours[0]["html_url"]
    assert first.outputs == {"verdict": "failed", "findings": str(N_ERRORS + N_WARNINGS), "sarif-path": "",
                             "comment-url": url}
    body = ours[0]["body"]
    assert "failed" in body and "app.py" in body and "SEN104" in body and "<details>" in body
    assert "ghs_faketoken123" not in first.stdout + first.stderr + first.summary + body

    second = _run_ci(pr_repo, gh, tmp_path, event)
    assert second.returncode == 1
    ours_after = [c for c in gh.all_comments() if MARKER in c["body"]]
    assert len(ours_after) == 1 and ours_after[0]["id"] == ours[0]["id"]
    assert len(gh.all_comments()) == 3
    assert ("PATCH", f"/repos/octo/demo/issues/comments/{ours[0]['id']}") in gh.requests
    assert sum(1 for m, p in gh.requests if m == "POST" and p.endswith("/issues/7/comments")) == 1
    assert sum(1 for m, p in gh.requests if m == "POST" and p.endswith("/pulls/7/reviews")) == 1  # first push only
    assert "updated" in second.summary


def test_annotations_capped_with_more_line_and_summary(pr_repo, gh, tmp_path):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo))
    found = _annotations(proc.stdout)
    assert len(found["error"]) == 10 and len(found["warning"]) == 10
    assert all("SEN104" in a for a in found["error"]) and all("SEN103" in a for a in found["warning"])
    # chosen by position in the diff: the first ten lines of each kind
    assert "line=4," in found["error"][0] and "line=17," in found["warning"][0]
    assert "line=13," in found["error"][-1] and "line=26," in found["warning"][-1]
    more = N_ERRORS - 10 + N_WARNINGS - 10
    assert f"sentinel: {more} more finding(s) not annotated" in proc.stdout
    assert "## \u274C Sentinel: failed" in proc.summary
    assert proc.summary.count("| SEN104 |") == N_ERRORS and proc.summary.count("| SEN103 |") == N_WARNINGS
    assert "git diff of the merge base" in proc.summary
    assert "task: from linked issue #\u200b12" in proc.summary  # issue refs in notes are not cross-references


def test_green_push_says_resolved(pr_repo, gh, tmp_path):
    event = _pr(gh, pr_repo)
    assert _run_ci(pr_repo, gh, tmp_path, event).returncode == 1
    pr_repo.write("app.py", "print('hello')\nprint('clean')\n")
    pr_repo.add("app.py")
    head2 = pr_repo.commit("fix")
    gh.pulls[7]["head"]["sha"] = head2
    proc = _run_ci(pr_repo, gh, tmp_path, gh.event_payload(7))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ours = [c for c in gh.all_comments() if MARKER in c["body"]]
    assert len(ours) == 1
    assert "all clear (the previous run failed)" in ours[0]["body"]
    assert "state=passed" in ours[0]["body"] and proc.outputs["verdict"] == "passed"


def test_read_only_token_falls_back_with_reason(pr_repo, gh, tmp_path):
    gh.read_only = True
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo))
    assert proc.returncode == 1
    assert gh.all_comments() == []
    assert "comment: not posted, falling back to annotations and this summary" in proc.summary
    assert "403" in proc.summary and "read-only token" in proc.summary
    assert proc.outputs["comment-url"] == ""
    assert len(_annotations(proc.stdout)["error"]) == 10


@pytest.mark.parametrize("status", [403, 429])
def test_rate_limit_is_reported_not_a_crash(pr_repo, gh, tmp_path, status):
    event = _pr(gh, pr_repo)
    gh.rate_limited = status
    proc = _run_ci(pr_repo, gh, tmp_path, event)
    assert proc.returncode == 1, proc.stderr  # the gate's verdict, not an internal error
    assert "rate limit exceeded" in proc.summary
    assert ("retry after 60s" if status == 429 else "the limit resets at") in proc.summary
    assert "Traceback" not in proc.stderr


def test_shallow_checkout_without_commits_uses_api_diff(pr_repo, gh, tmp_path):
    files = [{"sha": "0" * 40, "filename": "app.py", "status": "modified", "additions": 2, "deletions": 0,
              "changes": 2, "blob_url": "", "raw_url": "", "contents_url": "",
              "patch": "@@ -1 +1,3 @@\n print('hello')\n+import os\n+os.system('rm -rf /tmp/build')"}]
    event = _pr(gh, pr_repo, files=files)
    event["pull_request"]["head"]["sha"] = "f" * 40  # not in the checkout, and no remote to fetch from
    proc = _run_ci(pr_repo, gh, tmp_path, event)
    assert proc.returncode == 1, proc.stderr
    assert "diff: from the GitHub API" in proc.summary
    assert "could not be fetched" in proc.summary
    assert proc.outputs["findings"] == "1"


def test_pull_request_target_reads_diff_through_api(pr_repo, gh, tmp_path):
    files = [{"sha": "0" * 40, "filename": "tool.py", "status": "added", "additions": 2, "deletions": 0,
              "changes": 2, "patch": "@@ -0,0 +1,2 @@\n+import os\n+os.system('rm -rf /tmp/x')"}]
    event = _pr(gh, pr_repo, files=files)
    pr_repo.git("checkout", "-q", "main")  # the base checkout pull_request_target jobs get
    proc = _run_ci(pr_repo, gh, tmp_path, event, event_name="pull_request_target")
    assert proc.returncode == 1
    assert "pull_request_target: the PR's diff read through the API" in proc.stdout
    assert "never checked out" in proc.summary
    assert ("GET", "/repos/octo/demo/pulls/7/files") in gh.requests


def test_sarif_and_inputs_reach_the_run(pr_repo, gh, tmp_path):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo),
                   inputs={"INPUT_SARIF": "out/sentinel.sarif", "INPUT_COMMENT": "off", "INPUT_FAIL_LEVEL": "error",
                           "INPUT_ANNOTATIONS": "off"})
    sarif_path = proc.outputs["sarif-path"]
    assert sarif_path.endswith("out/sentinel.sarif")
    data = json.loads(Path(sarif_path).read_text(encoding="utf-8"))
    assert len(data["runs"][0]["results"]) == N_ERRORS + N_WARNINGS
    assert gh.all_comments() == [] and _annotations(proc.stdout)["error"] == []


def test_bad_input_exits_2_naming_it(pr_repo, gh, tmp_path):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo), inputs={"INPUT_FAIL_LEVEL": "fatal"})
    assert proc.returncode == 2
    assert "input 'fail-level'" in proc.stderr


def test_push_event_checks_the_range(pr_repo, gh, tmp_path):
    event = {"before": pr_repo.base, "after": pr_repo.head, "ref": "refs/heads/feature",
             "head_commit": {"message": "feature: clean up build dirs"},
             "repository": {"full_name": "octo/demo"}}
    proc = _run_ci(pr_repo, gh, tmp_path, event, event_name="push")
    assert proc.returncode == 1
    assert "git diff of the pushed range" in proc.summary
    assert "comment: skipped (not a pull request event)" in proc.summary
    assert gh.all_comments() == []


def test_memory_store_path_from_env(pr_repo, gh, tmp_path):
    store = tmp_path / "cache" / "hypotheses.sqlite3"
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo), inputs={"INPUT_MEMORY": "on"},
                   extra_env={"SENTINEL_STORE": str(store)})
    assert proc.returncode == 1, proc.stderr
    assert store.exists()


def test_untrusted_pr_text_is_inert(pr_repo, gh, tmp_path):
    body = "Fixes #12\n@everyone <img src=x onerror=alert(1)> $(touch pwned) `rm -rf /`"
    event = _pr(gh, pr_repo, body=body)
    event["pull_request"]["title"] = "::error ::forged $(touch pwned)"
    proc = _run_ci(pr_repo, gh, tmp_path, event)
    assert not (pr_repo.path / "pwned").exists()
    assert not any(line.startswith("::error ::forged") for line in proc.stdout.splitlines())
    body_out = next(c for c in gh.all_comments() if MARKER in c["body"])["body"]
    assert "<img" not in body_out and "@everyone" not in body_out


# -- units ------------------------------------------------------------------------------------

def test_linked_issues_closing_keywords():
    body = "Fixes #12, closes octo/demo#13 and resolves: #14\nsee #15\nFixes other/repo#16\n`fixes #17`"
    assert linked_issues(body, "octo/demo") == [12, 13, 14]


def test_parse_event_fork_pr():
    payload = {"number": 3, "pull_request": {"number": 3, "title": "t", "body": None,
                                             "base": {"sha": "a" * 40, "ref": "main", "repo": {"full_name": "o/r"}},
                                             "head": {"sha": "b" * 40, "repo": {"full_name": "fork/r"}}},
               "repository": {"full_name": "o/r"}}
    ev = parse_event("pull_request_target", payload)
    assert ev.pr_number == 3 and ev.is_fork and ev.body == "" and ev.head_sha == "b" * 40
    with pytest.raises(InputError):
        parse_event("pull_request", {"repository": {}})


@pytest.mark.parametrize("env,fragment", [
    ({"INPUT_COMMENT": "maybe"}, "input 'comment'"),
    ({"INPUT_FILTER_MODE": "lines"}, "input 'filter-mode'"),
    ({"INPUT_CONFIG": "nope.toml"}, "input 'config'"),
])
def test_inputs_validation(env, fragment, tmp_path):
    with pytest.raises(InputError, match=fragment):
        read_inputs(env, str(tmp_path))


def test_inputs_parse():
    inp = read_inputs({"INPUT_FILTER_MODE": "diff-context", "INPUT_JUNIT": "a.xml, b/*.xml\nc.xml",
                       "INPUT_COMMENT": "off", "INPUT_LLM_MODEL": "gpt-4o-mini"})
    assert inp.filter_mode == "diff_context" and inp.junit == ["a.xml", "b/*.xml", "c.xml"]
    assert inp.comment is False and inp.annotations is True and inp.llm_model == "gpt-4o-mini"


def test_api_files_assemble_into_a_parseable_diff():
    text = (file_section("new.py", "added", "@@ -0,0 +1 @@\n+x = 1")
            + file_section("b.py", "renamed", None, "a.py")
            + file_section("img.png", "modified", None)
            + file_section("old.py", "removed", "@@ -1 +0,0 @@\n-y = 2"))
    cs = parse_diff(text)
    assert [(f.path, f.status.value) for f in cs.files] == [("new.py", "added"), ("b.py", "renamed"),
                                                            ("img.png", "binary"), ("old.py", "deleted")]
    assert cs.files[0].added == {1: "x = 1"}


def test_annotation_cap_counts_crashes_first():
    findings = [Finding("SEN104", "jail", Severity.ERROR, "a.py", n, "m") for n in range(1, 13)]
    v = Verdict(False, Severity.ERROR, [CheckResult("chaos", CheckStatus.ERROR, reason="boom")], findings,
                "test", 1, 12)
    text, left = ann.render(v, ["a.py"], per_kind=10)
    errors = [ln for ln in text.splitlines() if ln.startswith("::error")]
    assert len(errors) == 10 and "crashed" in errors[0] and left == 3


def test_comment_pagination_finds_marker_on_page_two(gh):
    gh.add_pull(5, "t", "", "a" * 40, "b" * 40)
    for i in range(3):
        gh.add_comment(5, f"human {i}")
    gh.add_comment(5, f"{MARKER}\nold report", login="github-actions[bot]", bot=True)
    api = GitHubApi("octo/demo", "t", gh.base_url, retries=0)
    found = api.find_sticky(5)
    assert found is not None and found.id == gh.comments[5][-1]["id"]
    assert ("GET", "/repos/octo/demo/issues/5/comments") in gh.requests
    assert sum(1 for m, p in gh.requests if p.endswith("/issues/5/comments")) == 2  # two pages fetched
    api.upsert_sticky(5, lambda prev: "new report")
    assert len(gh.comments[5]) == 4 and "new report" in gh.comments[5][-1]["body"]


def test_rate_limit_problem_message(gh):
    gh.rate_limited = 403
    api = GitHubApi("octo/demo", "secret-token", gh.base_url, retries=0)
    with pytest.raises(ApiProblem, match="rate limit exceeded") as exc:
        api.issue_text(1)
    assert "secret-token" not in str(exc.value)
