"""`sentinel ci` with team memory: the action's `database-url` input reaches a real PostgreSQL (pgserver), two
pull requests with the same mistake make a recurring pattern, and the second PR's comment shows the brief."""

from __future__ import annotations

import json

from tests.pgfixture import new_database, pg_server  # noqa: F401 - the session's server fixture
from tests.test_ci import MARKER, _run_ci, gh, pr_repo  # noqa: F401 - fixtures


def test_a_recurring_pattern_across_pull_requests_puts_the_brief_in_the_comment(pr_repo, gh, tmp_path, pg_server):
    url = new_database(pg_server).replace("postgres:@", "postgres:HushHush@", 1)
    inputs = {"INPUT_MEMORY": "on", "INPUT_DATABASE_URL": url}
    gh.add_pull(7, "Clean up build dirs", "Cleans up.", pr_repo.base, pr_repo.head)
    first = _run_ci(pr_repo, gh, tmp_path, gh.event_payload(7), inputs=inputs)
    assert first.returncode == 1, first.stderr
    # a second pull request makes the same mistake with other names
    pr_repo.git("checkout", "-q", "-b", "other", pr_repo.base)
    pr_repo.write("tools.py", "import os\nos.system('rm -rf /var/tmp/scratch')\n")
    pr_repo.add("tools.py")
    head2 = pr_repo.commit("tools: scratch cleanup")
    gh.add_pull(8, "Scratch cleanup", "Adds a cleanup tool.", pr_repo.base, head2)
    second = _run_ci(pr_repo, gh, tmp_path, gh.event_payload(8), inputs=inputs)
    assert second.returncode == 1, second.stderr
    body = next(c["body"] for c in gh.comments[8] if MARKER in c["body"])
    first_body = next(c["body"] for c in gh.comments[7] if MARKER in c["body"])
    assert "what memory knows about this change" in body
    assert "Recurring patterns in this project" in body and "SEN104 in 2 changes" in body
    assert "HushHush" not in json.dumps(gh.all_comments()) + second.stdout + second.stderr + second.summary
    # the first PR's comment, when nothing had recurred yet, has no brief
    assert "what memory knows" not in first_body
