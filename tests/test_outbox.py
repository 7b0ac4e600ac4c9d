"""The outbox on every backend (a real SQLite file; a real PostgreSQL from pgserver): runs the store could not
take in time are kept redacted in the clone, sent oldest first with their own time, once each, and give the
patterns and resolutions of runs that never waited."""

from __future__ import annotations

import json
import os

import pytest

from sentinel.memory.store import FindingRecord, RunRecord
from sentinel.memory.store import outbox
from tests.pgfixture import BACKENDS, open_backend, pg_server  # noqa: F401 - the session's server fixture

TOKEN = "ghp_" + "Zx9" * 12  # a GitHub token's shape: what redaction must catch
BARE = "SEN301|except|bare"


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    if request.param == "postgres":
        request.getfixturevalue("pg_server")
    with open_backend(request.param, tmp_path / "db") as s:
        yield s


def _runs(t0: float = 1_000.0) -> list[RunRecord]:
    """A change failing twice then fixed, and another change failing: what a developer's afternoon records."""
    failing = [FindingRecord("SEN301", BARE, "app/a.py", f"bare except hides {TOKEN}", 4)]
    return [
        RunRecord("p", "feat", "failed", failing, change_id="feat@1", content_digest="a1", created_at=t0,
                  paths=["app/a.py"], subject=f"wip with {TOKEN}"),
        RunRecord("p", "feat", "failed", failing, change_id="feat@1", content_digest="a2", created_at=t0 + 1,
                  paths=["app/a.py"]),
        RunRecord("p", "feat", "passed", [], change_id="feat@1", content_digest="a3", created_at=t0 + 2,
                  paths=["app/a.py"]),
        RunRecord("p", "other", "failed", [FindingRecord("SEN301", BARE, "app/b.py", "bare", 2)],
                  change_id="other@1", content_digest="b1", created_at=t0 + 3, paths=["app/b.py"]),
    ]


def _view(store) -> list:
    return [(p.sig_id, p.changes, p.attempts, p.last_resolution) for p in store.patterns("p")]


def test_queued_runs_give_the_patterns_of_runs_that_never_waited(store, tmp_path):
    git_dir = str(tmp_path / "git")
    for run in _runs():
        assert outbox.put(git_dir, "t1", run, reason="the team database did not answer within 1.5s")
    # what is kept is redacted like the store: no token in any entry
    files = outbox.entries(git_dir)
    assert len(files) == 4 and not any(TOKEN in open(f, encoding="utf-8").read() for f in files)
    assert outbox.pending(git_dir)["runs"] == 4
    result = outbox.flush(store, git_dir, "t1")
    assert (result.sent, result.known, result.left) == (4, 0, 0) and outbox.entries(git_dir) == []
    with open_backend("sqlite", tmp_path / "never-waited") as direct:
        for run in _runs():
            direct.record_run(run)
        assert _view(store) == _view(direct)
    [pattern] = store.patterns("p")
    assert (pattern.changes, pattern.attempts) == (2, 3) and pattern.last_resolution


def test_sending_twice_records_once(store, tmp_path):
    git_dir = str(tmp_path / "git")
    first = _runs()[0]
    store.record_run(first)  # its worker recorded it after the deadline, and the caller queued it too
    outbox.put(git_dir, "t1", _runs()[0], maybe_recorded=True)
    outbox.put(git_dir, "t1", _runs()[1])
    result = outbox.flush(store, git_dir, "t1")
    assert (result.sent, result.known) == (1, 1)
    assert store.run_count("p") == 2
    assert store._one("SELECT SUM(reruns) FROM runs")[0] == 0  # a run sent again is not a run run again
    assert outbox.flush(store, git_dir, "t1").sent == 0


def test_the_deadline_keeps_the_rest_in_order_and_other_stores_wait(store, tmp_path):
    git_dir = str(tmp_path / "git")
    runs = _runs()
    outbox.put(git_dir, "elsewhere", RunRecord("p", "x", "failed", [], change_id="x", content_digest="x",
                                                created_at=1.0))
    for run in runs:
        outbox.put(git_dir, "t1", run)
    stopped = outbox.flush(store, git_dir, "t1", deadline=0.0)  # already past
    assert (stopped.sent, stopped.left) == (0, 4)
    assert outbox.flush(store, git_dir, "t1").sent == 4
    assert [os.path.basename(p).split("-")[1] for p in outbox.entries(git_dir)] == ["elsewhere"]
    assert outbox.pending(git_dir)["by_store"] == {"elsewhere": 1}


def test_a_damaged_entry_is_set_aside_not_fatal(store, tmp_path):
    git_dir = str(tmp_path / "git")
    path = outbox.put(git_dir, "t1", _runs()[0])
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"format": "sentinel-outbox", "run": ')  # cut short by a crash or a full disk
    outbox.put(git_dir, "t1", _runs()[1])
    result = outbox.flush(store, git_dir, "t1")
    assert (result.sent, result.damaged) == (1, 1)
    assert os.path.exists(path + ".damaged") and outbox.pending(git_dir)["damaged"] == 1


def test_an_entry_keeps_what_sending_needs(tmp_path):
    git_dir = str(tmp_path / "git")
    run = RunRecord("p", "main", "passed", [], change_id="main@1", paths=["a.py"])
    path = outbox.put(git_dir, "t1", run, name_pending=("parent", "commit", "subject"))
    entry = json.loads(open(path, encoding="utf-8").read())
    assert entry["run"]["content_digest"] and entry["run"]["created_at"]  # its key and time are fixed now
    assert entry["name_pending"] == ["parent", "commit", "subject"] and entry["maybe_recorded"] is False
    assert os.path.basename(path).endswith(f"-t1-{run.key()}.json")
