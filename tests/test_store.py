"""The hypothesis store on real SQLite files, and the signature normalizer."""

from __future__ import annotations

import multiprocessing
import sqlite3

import pytest

from sentinel.errors import ConfigError
from sentinel.memory.signature import normalize_text, signature, signature_id
from sentinel.memory.store import SCHEMA_VERSION, FindingRecord, RunRecord, SQLiteStore, urgency


def test_normalizer_strips_volatile_parts():
    text = ("failed at src/pkg/mod.py:12:3 with 'boom' at 0x7ffd1234 on 2026-11-22T10:00:00Z "
            "id 123e4567-e89b-12d3-a456-426614174000 commit 4f2a9c1d7e and 42 retries")
    out = normalize_text(text)
    for gone in ("src/pkg", ":12", "boom", "0x7ffd", "2026", "123e4567", "4f2a9c1d7e", "42"):
        assert gone not in out
    assert out.startswith("failed at <path> with <str>")


def test_scores_do_not_make_drift_signatures_unique():
    # the reference tracker kept raw scores, so no two drift failures ever matched
    a = signature("SEN501", "task drift: similarity 0.123 below threshold 0.40 (critical)")
    b = signature("SEN501", "task drift: similarity 0.087 below threshold 0.40 (critical)")
    assert a == b


def test_different_failures_keep_different_signatures():
    # the reference tracker collapsed every test failure into "Tests failed (rc=1)"
    a = signature("SEN301", "bare `except:` swallows every exception", "except:")
    b = signature("SEN303", "call to builtin eval()", "return eval(cmd)")
    c = signature("SEN601", "claim 'all tests pass' unsupported: test_login failed", "")
    d = signature("SEN601", "claim 'all tests pass' unsupported: test_checkout failed", "")
    assert len({a, b, c, d}) == 4
    # the offending code is part of the key: the same rule on different code is a different pattern
    e = signature("SEN303", "call to builtin eval()", "exec(payload)")
    assert e != b


def test_urgency_bands():
    assert urgency(1, 1) == "low"
    assert urgency(2, 1) == "medium"
    assert urgency(3, 1) == "high" and urgency(2, 2) == "high"
    assert urgency(5, 1) == "critical" and urgency(3, 3) == "critical"


def _run(store, ref, outcome, sigs, commit=None, subject=None, base=None):
    return store.record_run(RunRecord(project="p", change_ref=ref, outcome=outcome, commit_sha=commit,
                                      subject=subject, base_sha=base,
                                      findings=[FindingRecord(rule=s.split("|")[0], signature=s) for s in sigs]))


def test_patterns_count_changes_and_resolutions(tmp_path):
    store = SQLiteStore(str(tmp_path / "h.sqlite3"))
    s1 = signature("SEN301", "bare except", "except:")
    s2 = signature("SEN401", "TODO marker", "# TODO")
    _run(store, "feature-a", "failed", [s1, s2])
    _run(store, "feature-a", "failed", [s1])  # s2 fixed by this run (no commit yet)
    _run(store, "feature-b", "failed", [s1])
    _run(store, "feature-a", "passed", [], commit="abcdef1234567", subject="Handle errors explicitly")
    pats = {p.sig_id: p for p in store.patterns("p")}
    p1 = pats[signature_id(s1)]
    assert (p1.count, p1.changes, p1.urgency) == (3, 2, "high")
    assert p1.last_resolution and p1.last_resolution.startswith("abcdef1234") and "Handle errors" in p1.last_resolution
    assert pats[signature_id(s2)].count == 1
    only = store.patterns("p", sig_ids=[signature_id(s2)])
    assert [p.sig_id for p in only] == [signature_id(s2)]


def test_pending_resolution_is_named_after_the_commit(tmp_path):
    store = SQLiteStore(str(tmp_path / "h.sqlite3"))
    s1 = signature("SEN301", "bare except", "except:")
    _run(store, "main", "failed", [s1], base="base111")
    _run(store, "main", "passed", [], base="base111")  # pre-commit: the commit does not exist yet
    assert store.fill_pending_resolutions("p", "base111", "c0ffee12345", "Fix error handling") == 1
    assert "c0ffee1234: Fix error handling" == store.patterns("p")[0].last_resolution


def test_schema_version_and_migration_from_v1(tmp_path):
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, project TEXT NOT NULL, change_ref TEXT NOT NULL, "
               "commit_sha TEXT, subject TEXT, outcome TEXT NOT NULL, created_at REAL NOT NULL)")
    db.execute("CREATE TABLE findings (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, sig_id TEXT NOT NULL, "
               "signature TEXT NOT NULL, rule TEXT NOT NULL, path TEXT, message TEXT)")
    db.execute("INSERT INTO runs VALUES (1, 'p', 'main', NULL, NULL, 'failed', 1.0)")
    db.commit()
    db.close()
    store = SQLiteStore(str(path))
    assert store.schema_version() == SCHEMA_VERSION
    assert store.run_count() == 1  # data kept across the migration
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite3"
    SQLiteStore(str(path)).db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(ConfigError, match="newer"):
        SQLiteStore(str(path))


def test_forget_and_retention(tmp_path):
    store = SQLiteStore(str(tmp_path / "h.sqlite3"))
    s1 = signature("SEN301", "bare except", "except:")
    for i in range(10):
        store.record_run(RunRecord("p", f"c{i}", "failed", [FindingRecord("SEN301", s1)], created_at=1000.0 + i))
    assert store.apply_retention(retention_days=1e9, max_runs=4) == 6
    assert store.run_count() == 4
    assert store.db.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 4  # cascade
    assert store.forget(older_than_days=1) == 4  # created_at 1000 is long ago
    assert store.run_count() == 0


def _writer(path: str, worker: int, n: int) -> None:
    store = SQLiteStore(path)
    for i in range(n):
        store.record_run(RunRecord("p", f"w{worker}", "failed",
                                   [FindingRecord("SEN301", signature("SEN301", "bare except", f"except: {i}"))]))
    store.close()


def test_parallel_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "h.sqlite3")
    SQLiteStore(path).close()
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 25)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = SQLiteStore(path)
    assert store.run_count() == 150
    assert store.db.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 150
