"""A secret written as prose in a commit message or a PR body — `db password <value>`, `passwd <value>`,
`secret <value>`, with nothing between the word and its value — reaches no output: every report format, the
hypothesis store, `memory patterns --json`, the PR comment, the job summary, the annotations and MCP answers
(learned cards and the prompts `memory learn` sends: tests/test_secrets_at_rest.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GitRepo
from tests.github_fake import FakeGitHub
from tests.harden_util import assert_clean_exit, run_sentinel

PROSE_SECRETS = ("Zq7-s3cret-pw-81", "hunter2!x", "s3cr3tV4lue")
# The claim's own line carries them: the claim finding quotes that line in every output.
CLAIM = ("All tests pass on staging (db password Zq7-s3cret-pw-81, passwd hunter2!x, secret s3cr3tV4lue "
         "for the worker).")
FORMATS = ("text", "concise", "json", "sarif", "github", "markdown")


def _leaks(text: str) -> list[str]:
    return [s for s in PROSE_SECRETS if s in text]


def _stored(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_prose_secrets_in_a_message_reach_no_report_no_store_and_no_pattern(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    message = repo.path.parent / "message.txt"
    message.write_text(f"Fix login\n\n{CLAIM}\n")
    for attempt in range(3):  # attempts at the change: the store records them, memory patterns lists them
        repo.write("a.py", "x = 2\ntry:\n    y = 1\nexcept:\n    pass\n" + "".join(f"z{i} = {i}\n" for i in range(attempt)))
        repo.add("a.py")
        proc = run_sentinel("check", "--message", f"@{message}", "--format", "json", cwd=repo.path)
        assert_clean_exit(proc, 1)
        assert "db password Zq***" in proc.stdout, "the claim finding must quote the line: else this proves nothing"
        assert not _leaks(proc.stdout + proc.stderr)
    for fmt in FORMATS:
        proc = run_sentinel("check", "--message", f"@{message}", "--format", fmt, "--no-memory", cwd=repo.path)
        assert_clean_exit(proc, 1)
        assert not _leaks(proc.stdout + proc.stderr), fmt
    proc = run_sentinel("memory", "patterns", "--json", cwd=repo.path)
    assert_clean_exit(proc, 0)
    patterns = json.loads(proc.stdout)["patterns"]
    assert any(p["rule"].startswith("SEN6") for p in patterns), "no claim pattern recorded: this proves nothing"
    assert not _leaks(proc.stdout)
    stored = _stored(repo.path / ".git" / "sentinel")
    assert any(p.endswith("hypotheses.sqlite3") for p in stored)
    assert not [p for p, data in stored.items() if any(s.encode() in data for s in PROSE_SECRETS)]


CI_CONFIG = """
[style]
enabled = false
[placeholder]
enabled = false
[drift]
enabled = false
"""


def test_prose_secrets_in_a_pr_body_reach_no_comment_no_summary_and_no_annotation(tmp_path, installed_sentinel):
    from tests.test_ci import _run_ci

    (tmp_path / "repo").mkdir()
    repo = GitRepo(tmp_path / "repo", installed_sentinel)
    repo.write(".sentinel.toml", CI_CONFIG)
    repo.write("app.py", "print('hello')\n")
    repo.add(".sentinel.toml", "app.py")
    repo.base = repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("app.py", "print('hello')\nprint(eval(input()))\n")  # an error: the PR fails and is commented on
    repo.add("app.py")
    repo.head = repo.commit("feature: read an expression")
    with FakeGitHub(page_size=50) as gh:
        gh.add_pull(7, "Read an expression", f"Reads one.\n\n{CLAIM}\n", repo.base, repo.head)
        proc = _run_ci(repo, gh, tmp_path, gh.event_payload(7))
        comments = [c["body"] for c in gh.all_comments()]
        reviews = json.dumps(gh.reviews)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert comments and "SEN6" in "".join(comments), "the claim must be reported: else this proves nothing"
    assert "db password Zq***" in "".join(comments) + proc.summary
    for text in (*comments, reviews, proc.summary, proc.stdout, proc.stderr, json.dumps(proc.outputs)):
        assert not _leaks(text), text[-1500:]


def test_prose_secrets_in_a_message_reach_no_mcp_answer(repo):
    from tests.test_mcp import session, text_of

    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("a.py", "x = 2\ntry:\n    y = 1\nexcept:\n    pass\n")
    repo.add("a.py")

    async def scenario(client):
        return await client.call_tool("check_change", {"message": f"Fix login\n\n{CLAIM}\n", "fail_level": "info"})

    result = session(repo.path, scenario)
    found = json.dumps(result.structured_content)
    assert "SEN6" in found and "db password Zq***" in found, found[:2000]
    assert not _leaks(found) and not _leaks(text_of(result))
