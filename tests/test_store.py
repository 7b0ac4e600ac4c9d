"""The hypothesis store's behaviour, on every backend (real SQLite files; a real PostgreSQL with pgvector
started by pgserver — see tests/pgfixture.py): attempts, changes, resolutions, examples, migrations,
retention, export/import, concurrency. Signatures on real findings: tests/test_signatures.py."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import time

import pytest

from sentinel.memory.hypotheses.signature import normalize_code, normalize_text, signature, signature_id
from sentinel.memory.store import SCHEMA_VERSION, FindingRecord, RunRecord, StoreError, urgency
from sentinel.memory.store.sqlite import SQLiteStore
from tests.pgfixture import BACKENDS, open_backend, pg_server  # noqa: F401 - the session's server fixture

# --- signatures -------------------------------------------------------------------------------------------


def test_normalizer_strips_volatile_parts():
    text = ("failed at src/pkg/mod.py:12:3 with 'boom' at 0x7ffd1234 on 2026-11-22T10:00:00Z "
            "id 123e4567-e89b-12d3-a456-426614174000 commit 4f2a9c1d7e and 42 retries")
    out = normalize_text(text)
    for gone in ("src/pkg", ":12", "boom", "0x7ffd", "2026", "123e4567", "4f2a9c1d7e", "42"):
        assert gone not in out
    assert out.startswith("failed at <path> with <str>")


@pytest.mark.parametrize("path", ["src/pkg/mod.py:12:3", "/home/alice/proj/mod.py", r"C:\Users\bob\proj\mod.py:7",
                                  r"\\server\share\proj\mod.py", "..\\proj\\mod.py", "./mod.py:3", "~/proj/mod.py"])
def test_paths_posix_and_windows_are_one_placeholder(path):
    assert normalize_text(f"cannot import from {path} here") == "cannot import from <path> here"


def test_scores_do_not_make_drift_signatures_unique():
    a = signature("SEN501", "task drift: similarity 0.123 below threshold 0.40 (critical)")
    b = signature("SEN501", "task drift: similarity 0.087 below threshold 0.40 (critical)")
    assert a == b


def test_variables_named_like_modules_or_builtins_are_still_names():
    # `cmd`, `code`, `id` are stdlib modules / builtins too; as variables they are the author's names
    assert normalize_code("eval(cmd)") == normalize_code("eval(payload)") == "eval(<id>)"
    assert normalize_code("id = code") == "<id> = <id>"
    assert normalize_code("os.path.join(a, b)") == "os.path.join(<id>, <id>)"


def test_urgency_bands_are_distinct_changes():
    assert [urgency(n) for n in (1, 2, 3, 4, 9)] == ["low", "medium", "high", "critical", "critical"]


# --- the store, on every backend ---------------------------------------------------------------------------

S_EXCEPT = signature("SEN301", "bare `except:` swallows every exception", "except:")
S_TODO = signature("SEN401", "TODO marker", "# TODO")
S_EVAL = signature("SEN303", "call to builtin eval()", "eval(x)")


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path):
    if request.param == "postgres":
        request.getfixturevalue("pg_server")
    with open_backend(request.param, tmp_path) as s:
        yield s


def _f(sig, path="a.py", line=3, blocking=True):
    return FindingRecord(rule=sig.split("|")[0], signature=sig, path=path, line=line,
                         severity="error" if blocking else "warning", blocking=blocking)


_clock = [1_700_000_000.0]


def _run(store, change, outcome, findings, digest, project="p", paths=None, commit=None, subject=None, base=None,
         ref=None, name_pending=None):
    _clock[0] += 10
    return store.record_run(RunRecord(project=project, change_ref=ref or change.split("@")[0], outcome=outcome,
                                      findings=findings, commit_sha=commit, subject=subject, base_sha=base,
                                      created_at=_clock[0], change_id=change, content_digest=digest,
                                      paths=paths if paths is not None else ["a.py", "b.py"]),
                            name_pending=name_pending)


def test_rerunning_on_the_same_content_is_one_attempt(store):
    first = _run(store, "feat@1", "failed", [_f(S_EXCEPT)], digest="d1")
    again = _run(store, "feat@1", "failed", [_f(S_EXCEPT)], digest="d1")
    assert first.created and not again.created and again.run_id == first.run_id
    assert store.run_count() == 1
    [p] = store.patterns("p")
    assert (p.changes, p.attempts) == (1, 1)


def test_counts_are_distinct_changes_not_runs(store):
    for n in range(3):  # three attempts at one change, each re-run twice
        for _ in range(2):
            _run(store, "feat@1", "failed", [_f(S_EXCEPT)], digest=f"d{n}")
    [p] = store.patterns("p")
    assert (p.changes, p.attempts, p.urgency) == (1, 3, "low")
    _run(store, "other@2", "failed", [_f(S_EXCEPT, path="b.py", line=9)], digest="x")
    _run(store, "third@3", "failed", [_f(S_EXCEPT, path="c.py", line=1)], digest="y")
    [p] = store.patterns("p")
    assert (p.changes, p.attempts, p.urgency) == (3, 5, "high")
    assert store.patterns("p", min_changes=4) == []


def test_a_pattern_lists_up_to_three_examples_one_per_change(store):
    for n, (path, line) in enumerate([("a.py", 1), ("b.py", 2), ("c.py", 3), ("d.py", 4)]):
        _run(store, f"ch{n}@x", "failed", [_f(S_EXCEPT, path=path, line=line)], digest=f"d{n}", commit=f"{n}" * 12)
        _run(store, f"ch{n}@x", "failed", [_f(S_EXCEPT, path=path, line=line + 100)], digest=f"e{n}")
    [p] = store.patterns("p")
    assert len(p.examples) == 3
    assert [(e.change_ref, e.path, e.line) for e in p.examples] == [("ch3", "d.py", 104), ("ch2", "c.py", 103),
                                                                   ("ch1", "b.py", 102)]


def test_blocking_finding_gone_in_a_later_passing_attempt_is_resolved(store):
    _run(store, "feat@1", "failed", [_f(S_EXCEPT), _f(S_TODO, blocking=False)], digest="d1")
    res = _run(store, "feat@1", "passed", [], digest="d2", commit="abcdef1234567", subject="Handle errors explicitly")
    assert res.resolved == [signature_id(S_EXCEPT)]  # the warning is never "resolved"
    pats = {p.sig_id: p for p in store.patterns("p")}
    assert pats[signature_id(S_EXCEPT)].last_resolution == "abcdef1234 on feat: Handle errors explicitly"
    assert pats[signature_id(S_TODO)].last_resolution is None


def test_no_resolution_from_another_change_a_failing_run_or_the_same_content(store):
    _run(store, "feat@1", "failed", [_f(S_EXCEPT), _f(S_EVAL)], digest="d1")
    # a failing attempt that drops one finding resolves nothing: the change has not passed
    assert _run(store, "feat@1", "failed", [_f(S_EVAL)], digest="d2").resolved == []
    # an unrelated change passing (the failed one abandoned) is not credited
    assert _run(store, "other@1", "passed", [], digest="o1").resolved == []
    # the same content passing (a rule switched off) fixed nothing
    assert _run(store, "feat@1", "passed", [], digest="d2").resolved == []
    assert all(p.last_resolution is None for p in store.patterns("p"))


def test_an_abandoned_file_is_not_resolved_by_the_next_work_on_the_branch(store):
    _run(store, "main@h1", "failed", [_f(S_EXCEPT, path="a.py")], digest="d1", paths=["a.py"])
    # the author dropped a.py and committed something else on top of the same HEAD
    assert _run(store, "main@h1", "passed", [], digest="d2", paths=["b.py"]).resolved == []
    # later a passing attempt that does touch a.py resolves it
    assert _run(store, "main@h1", "passed", [], digest="d3", paths=["a.py"]).resolved == []  # nothing failed since
    _run(store, "main@h1", "failed", [_f(S_EXCEPT, path="a.py")], digest="d4", paths=["a.py"])
    assert _run(store, "main@h1", "passed", [], digest="d5", paths=["a.py"]).resolved == [signature_id(S_EXCEPT)]


def test_pending_resolution_is_named_after_the_commit(store):
    _run(store, "main@base111", "failed", [_f(S_EXCEPT)], digest="d1", base="base111")
    _run(store, "main@base111", "passed", [], digest="d2", base="base111")  # pre-commit: no commit yet
    assert store.has_pending_resolutions("p")
    # the next run sees HEAD = the new commit, whose parent is base111
    _run(store, "main@c0ffee", "passed", [], digest="d3", name_pending=("base111", "c0ffee12345", "Fix errors"))
    assert not store.has_pending_resolutions("p")
    assert store.patterns("p")[0].last_resolution == "c0ffee1234 on main: Fix errors"


def test_a_commit_on_another_branch_never_names_a_pending_resolution(store):
    # branch A: a staged fix on top of base111 passes before its commit exists
    _run(store, "A@base111", "failed", [_f(S_EXCEPT)], digest="d1", base="base111", ref="A")
    assert _run(store, "A@base111", "passed", [], digest="d2", base="base111", ref="A").resolved
    # the author stashes it and commits unrelated work on branch B, also on top of base111
    _run(store, "B@b0b0b0", "passed", [], digest="d3", ref="B",
         name_pending=("base111", "b0b0b0b0b0b0", "B: unrelated work"))
    assert store.has_pending_resolutions("p")
    assert store.patterns("p")[0].last_resolution == "a commit on A: (no subject)"
    # the fix committed on A names it
    _run(store, "A@a1a1a1", "passed", [], digest="d4", ref="A",
         name_pending=("base111", "a1a1a1a1a1a1", "Handle errors explicitly"))
    assert not store.has_pending_resolutions("p")
    assert store.patterns("p")[0].last_resolution == "a1a1a1a1a1 on A: Handle errors explicitly"
    # and the change's attempts are named after the commit the work became, on A only
    [failed] = [a for a in store.attempts("p", "A@base111") if a.outcome == "failed"]
    assert (failed.commit_sha, failed.subject) == ("a1a1a1a1a1a1", "Handle errors explicitly")


def test_a_patterns_last_resolution_prefers_the_asking_branch(store):
    for n, ref in enumerate(["A", "B"]):
        _run(store, f"{ref}@1", "failed", [_f(S_EXCEPT)], digest=f"f{n}", ref=ref)
        _run(store, f"{ref}@1", "passed", [], digest=f"p{n}", ref=ref, commit=f"{n}" * 12, subject=f"fix on {ref}")
    assert store.patterns("p")[0].last_resolution == "1111111111 on B: fix on B"
    assert store.patterns("p", change_ref="A")[0].last_resolution == "0000000000 on A: fix on A"


def test_examples_carry_what_the_attempt_did(store):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    eval_line = FindingRecord("SEN303", S_EVAL, "calc.py", "`eval()` runs arbitrary code", 2,
                              code=f"    return eval(expr)  # {token}")
    _run(store, "feat@1", "failed", [eval_line], digest="d1", commit="c" * 40, subject="Evaluate the expressions",
         paths=["calc.py", *(f"doc{n}.md" for n in range(30))])
    [p] = store.patterns("p")
    [e] = p.examples
    assert e.code.startswith("return eval(expr)") and token not in e.code and "ghp_" in e.code
    assert e.subject == "Evaluate the expressions"
    assert e.paths[0] == "calc.py" and len(e.paths) == 20 and e.paths_total == 31
    assert e.to_json()["code"] == e.code


def test_earlier_attempts_are_the_failed_ones_since_the_change_last_passed(store):
    _run(store, "feat@1", "failed", [_f(S_TODO)], digest="d0")
    _run(store, "feat@1", "passed", [], digest="d1")
    _run(store, "feat@1", "failed", [FindingRecord("SEN303", S_EVAL, "a.py", "eval", 2, code="return eval(x)")],
         digest="d2")
    _run(store, "feat@1", "failed", [FindingRecord("SEN301", S_EXCEPT, "a.py", "bare", 4, code="except:")],
         digest="d3")
    _run(store, "other@1", "failed", [_f(S_EVAL)], digest="o1")
    earlier = store.earlier_attempts("p", "feat@1")
    assert [[f.code for f in a.findings] for a in earlier] == [["return eval(x)"], ["except:"]]
    # the attempt being shown is not an earlier one of itself (nor is its re-run)
    assert [a.findings[0].code for a in store.earlier_attempts("p", "feat@1", but="d3")] == ["return eval(x)"]
    assert store.earlier_attempts("p", "other@1", but="o1") == []


def test_attempts_in_order_with_what_failed(store):
    _run(store, "feat@1", "failed", [_f(S_EVAL, line=4)], digest="d1")
    _run(store, "feat@1", "failed", [_f(S_EXCEPT, line=8)], digest="d2")
    _run(store, "feat@1", "failed", [_f(S_EXCEPT, line=8)], digest="d2")  # a re-run: same attempt
    _run(store, "other@1", "failed", [_f(S_TODO)], digest="o1")
    attempts = store.attempts("p", "feat@1")
    assert [(a.outcome, [(f.rule, f.line) for f in a.findings]) for a in attempts] == [
        ("failed", [("SEN303", 4)]), ("failed", [("SEN301", 8)])]


def test_projects_are_apart(store):
    _run(store, "feat@1", "failed", [_f(S_EXCEPT)], digest="d1", project="github.com/a/one")
    _run(store, "feat@1", "failed", [_f(S_EXCEPT)], digest="d1", project="github.com/a/two")
    assert store.run_count() == 2
    assert [p.changes for p in store.patterns("github.com/a/one")] == [1]
    assert store.forget(project="github.com/a/one") == 1
    assert store.run_count() == 1


def test_forget_and_retention(store):
    for i in range(10):
        store.record_run(RunRecord("p", f"c{i}", "failed", [_f(S_EXCEPT)], created_at=1000.0 + i,
                                   content_digest=f"d{i}"))
    assert store.apply_retention(retention_days=1e9, max_runs=4) == 6
    assert store.counts() == {"runs": 4, "findings": 4, "resolutions": 0, "cards": 0, "learn_seen": 0,
                              "learn_runs": 0}  # findings cascade
    assert store.forget(older_than_days=1) == 4  # created_at 1000 is long ago
    assert store.run_count() == 0
    # in a team database each project keeps its own budget
    for project in ("a", "b"):
        for i in range(5):
            store.record_run(RunRecord(project, f"c{i}", "failed", [_f(S_EXCEPT)], content_digest=f"{project}{i}"))
    assert store.apply_retention(retention_days=1e9, max_runs=2, project="a") == 3
    assert (store.run_count("a"), store.run_count("b")) == (2, 5)


def test_forget_one_signature(store):
    _run(store, "a@1", "failed", [_f(S_EXCEPT), _f(S_TODO)], digest="d1")
    assert store.forget(project="p", sig_id=signature_id(S_EXCEPT)) == 1
    assert [p.rule for p in store.patterns("p")] == ["SEN401"]


def test_messages_are_redacted_before_they_are_stored(store):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    finding = FindingRecord("SEN303", S_EVAL, "a.py", f"token {token} in code", 3)
    _run(store, "a@1", "failed", [finding], digest="d1", subject=f"add {token}")
    dump = json.dumps(list(store.export_records()))
    assert token not in dump and "ghp_" in dump


def test_export_import_round_trip_loses_nothing(store, tmp_path):
    _run(store, "feat@1", "failed", [_f(S_EXCEPT, line=3), _f(S_TODO, blocking=False, line=None)], digest="d1")
    _run(store, "feat@1", "passed", [], digest="d2", commit="abc1234567890", subject="fix")
    _run(store, "feat@1", "passed", [], digest="d2")  # a re-run: counted in `reruns`
    _run(store, "x@2", "failed", [_f(S_EXCEPT)], digest="x", project="q")
    exported = list(store.export_records())
    with open_backend("sqlite", tmp_path / "copy") as other:
        assert other.import_records(iter(exported))["runs"] == 3
        assert other.import_records(iter(exported)) == {"runs": 0, "findings": 0, "resolutions": 0, "cards": 0,
                                                        "learn_seen": 0, "learn_runs": 0}
        again = list(other.export_records())
        assert _comparable(again) == _comparable(exported)
        assert other.patterns("p") == store.patterns("p")


def _comparable(records):
    return [{k: v for k, v in r.items() if k != "from"} for r in records]


def test_import_refuses_what_is_not_an_export(store):
    with pytest.raises(StoreError, match="not a Sentinel memory export"):
        store.import_records(iter([{"type": "header", "format": "something-else", "version": 1}]))


# --- SQLite specifics: migrations, lock, corruption --------------------------------------------------------


def _v1_store(path):
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    db.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, project TEXT NOT NULL, change_ref TEXT NOT NULL, "
               "commit_sha TEXT, subject TEXT, outcome TEXT NOT NULL, created_at REAL NOT NULL)")
    db.execute("CREATE TABLE findings (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, sig_id TEXT NOT NULL, "
               "signature TEXT NOT NULL, rule TEXT NOT NULL, path TEXT, message TEXT)")
    old = "SEN301|bare `except:` swallows every exception|except:"  # the signature of those versions
    for i, ref in enumerate(["main", "feat", "main"], 1):
        db.execute("INSERT INTO runs VALUES (?, 'p', ?, NULL, NULL, 'failed', ?)", (i, ref, float(i)))
        db.execute("INSERT INTO findings(run_id, sig_id, signature, rule, path, message) VALUES (?,?,?,?,?,?)",
                   (i, signature_id(old), old, "SEN301", "a.py", "bare `except:` swallows every exception"))
    db.commit()
    db.close()


def test_migration_from_schema_1_keeps_the_data(tmp_path):
    path = tmp_path / "old.sqlite3"
    _v1_store(path)
    store = SQLiteStore(str(path))
    assert store.migrated_from == 1 and store.schema_version() == SCHEMA_VERSION
    assert store.run_count() == 3
    [p] = store.patterns("p")
    assert (p.changes, p.attempts) == (2, 3)  # each old run is an attempt of the change its branch names
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    # and it keeps working with new runs
    _run(store, "main", "failed", [_f(S_EXCEPT)], digest="new")
    assert store.patterns("p")[0].attempts == 4


# Findings as Sentinel up to schema 4 stored them: `rule|normalized message|normalized line` (the line's shape
# in the signature), written by that version's own normalizer.
OLD_EVAL_MESSAGE = "`eval()` runs arbitrary code from a string"
OLD_ROWS = [  # (change, signature, rule, message, path, line)
    ("a@1", "SEN303|`eval()` runs arbitrary code from a string|return eval(<id>, {<str>: {}})", "SEN303",
     OLD_EVAL_MESSAGE, "a.py", 2),
    ("b@1", "SEN303|`eval()` runs arbitrary code from a string|<id> = <num> - eval(<id>)", "SEN303",
     OLD_EVAL_MESSAGE, "b.py", 2),
    ("c@1", "SEN103|shutil.rmtree() deletes a directory tree: p|shutil.rmtree(<id>)", "SEN103",
     "shutil.rmtree() deletes a directory tree: p", "c.py", 3),
    ("d@1", "SEN103|shutil.rmtree() deletes a directory tree: out|shutil.rmtree(<id>)", "SEN103",
     "shutil.rmtree() deletes a directory tree: out", "d.py", 3),
]


def _fill_v4(execute) -> None:
    """The layout of schema 4 (its own migrations) and rows the way it stored them; `execute(sql, args)`."""
    from sentinel.memory.store.schema import steps

    for _, stmts in steps("postgres" if execute.__name__ == "pg" else "sqlite", 0, 4):
        for stmt in stmts:
            execute(stmt, ())
    execute("INSERT INTO meta(key, value) VALUES ('schema_version', '4')", ())
    for n, (change, sig, rule, message, path, line) in enumerate(OLD_ROWS, 1):
        execute("INSERT INTO runs(id, run_key, project, change_id, change_ref, content_digest, outcome, created_at, "
                "last_seen) VALUES (?, ?, 'p', ?, ?, ?, 'failed', ?, ?)",
                (n, f"k{n}", change, change.split("@")[0], f"d{n}", 1000.0 + n, 1000.0 + n))
        execute("INSERT INTO findings(run_id, sig_id, signature, rule, path, message, line) VALUES (?,?,?,?,?,?,?)",
                (n, signature_id(sig), sig, rule, path, message, line))
    # a passing attempt of a@1 resolved its eval pattern; two old ids of one attempt now name one pattern
    for n, sig in enumerate([OLD_ROWS[0][1], OLD_ROWS[1][1]]):
        execute("INSERT INTO resolutions(project, sig_id, change_id, change_ref, run_key, commit_sha, subject, "
                "resolved_at) VALUES ('p', ?, 'a@1', 'a', 'k9', 'abcdef123456', 'Parse instead of eval', ?)",
                (signature_id(sig), 2000.0 + n))


def _check_rekeyed(store) -> None:
    assert store.schema_version() == SCHEMA_VERSION and store.migrated_from == 4
    pats = {p.rule: p for p in store.patterns("p")}
    assert set(pats) == {"SEN303", "SEN103"}
    # the two shapes of eval are one pattern in two changes now, and it keeps its resolution
    assert (pats["SEN303"].changes, pats["SEN303"].signature) == (2, f"SEN303|{OLD_EVAL_MESSAGE}")
    assert pats["SEN303"].last_resolution == "abcdef1234 on a: Parse instead of eval"
    assert store.counts("p")["resolutions"] == 1
    # the target's name the old message carried is gone from the pattern
    assert (pats["SEN103"].changes, pats["SEN103"].signature) == (2, "SEN103|shutil.rmtree() deletes a directory tree: <id>")
    # what a new run records for the same mistake lands on the re-keyed pattern
    new = signature("SEN303", OLD_EVAL_MESSAGE, "value = eval(text) * 2")
    _run(store, "e@1", "failed", [_f(new)], digest="e1")
    assert store.patterns("p", sig_ids=[signature_id(new)])[0].changes == 3


def test_migration_from_schema_4_rekeys_the_signatures_of_a_real_sqlite_file(tmp_path):
    path = tmp_path / "v4.sqlite3"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    _fill_v4(lambda sql, args: db.execute(sql, args))
    db.commit()
    db.close()
    with SQLiteStore(str(path)) as store:
        _check_rekeyed(store)
    with SQLiteStore(str(path)) as again:  # the migration ran once and is recorded
        assert again.migrated_from is None and again.patterns("p")[0].changes == 3


def test_migration_from_schema_4_on_postgres(pg_server):  # noqa: F811 - the session's server fixture
    import psycopg

    from sentinel.memory.store.postgres import PostgresStore
    from tests.pgfixture import new_database

    url = new_database(pg_server)
    with psycopg.connect(url, autocommit=True) as conn:
        def pg(sql, args):
            conn.execute(sql.replace("?", "%s"), args)
        _fill_v4(pg)
        conn.execute("SELECT setval('runs_id_seq', 100)")
    with PostgresStore.connect(url) as store:
        _check_rekeyed(store)


def test_an_export_of_version_1_is_rekeyed_on_import(store):
    records = [{"type": "header", "format": "sentinel-memory-export", "version": 1, "schema": 4}]
    for n, (change, sig, rule, message, path, line) in enumerate(OLD_ROWS[:2], 1):
        records.append({"type": "run", "run_key": f"k{n}", "project": "p", "change_id": change,
                        "change_ref": change.split("@")[0], "content_digest": f"d{n}", "outcome": "failed",
                        "created_at": 1000.0 + n, "last_seen": 1000.0 + n, "reruns": 0,
                        "findings": [{"sig_id": signature_id(sig), "signature": sig, "rule": rule, "path": path,
                                      "message": message, "line": line, "severity": "error", "blocking": 1}]})
    records.append({"type": "resolution", "project": "p", "sig_id": signature_id(OLD_ROWS[1][1]), "change_id": "b@1",
                    "change_ref": "b", "run_key": "k9", "commit_sha": "feed" * 10, "subject": "no eval",
                    "resolved_at": 2000.0})
    assert store.import_records(iter(records)) == {"runs": 2, "findings": 2, "resolutions": 1, "cards": 0,
                                                   "learn_seen": 0, "learn_runs": 0}
    [p] = store.patterns("p")
    assert (p.signature, p.changes, p.last_resolution) == (f"SEN303|{OLD_EVAL_MESSAGE}", 2, "feedfeedfe on b: no eval")


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite3"
    SQLiteStore(str(path)).db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(str(path))


def _hold_lock(path: str, ready, release) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    ready.set()
    release.wait(30)
    db.execute("ROLLBACK")
    db.close()


def test_a_held_write_lock_costs_at_most_the_wait(tmp_path):
    from sentinel.memory.store import StoreBusy

    path = str(tmp_path / "h.sqlite3")
    SQLiteStore(path).close()
    ctx = multiprocessing.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(path, ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        store = SQLiteStore(path, timeout=1.0)
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="locked by another process"):
            _run(store, "a@1", "failed", [_f(S_EXCEPT)], digest="d1")
        assert 0.9 <= time.monotonic() - started < 3.0
        assert store.patterns("p") == []  # readers are not blocked (WAL)
        store.close()
    finally:
        release.set()
        holder.join(30)


@pytest.mark.parametrize("damage", ["garbage", "truncated-header", "bad-page"])
def test_a_corrupted_store_is_moved_aside_and_recreated(tmp_path, damage):
    path = tmp_path / "h.sqlite3"
    with SQLiteStore(str(path)) as store:
        for i in range(200):
            _run(store, f"c{i}@x", "failed", [_f(S_EXCEPT)], digest=f"d{i}")
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"this is not a database at all" * 100)
    elif damage == "truncated-header":
        path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 84 + data[100:])
    else:
        page = int.from_bytes(data[16:18], "big")
        path.write_bytes(data[:page * 2] + b"\xa5" * (len(data) - page * 2))
    store = None
    try:
        store = SQLiteStore(str(path))
        _run(store, "new@1", "failed", [_f(S_EXCEPT)], digest="n")
    except StoreError as exc:  # found by a later read: moved aside then, and the next open is clean
        assert "moved aside" in str(exc)
        store = SQLiteStore(str(path))
        _run(store, "new@1", "failed", [_f(S_EXCEPT)], digest="n")
    aside = list(tmp_path.glob("h.sqlite3.corrupt-*"))
    assert aside and aside[0].stat().st_size > 0
    assert store.run_count() == 1 and store.schema_version() == SCHEMA_VERSION
    store.close()


# --- concurrency --------------------------------------------------------------------------------------------


def _writer(backend_arg: str, worker: int, n: int) -> None:
    from tests.pgfixture import connect_backend

    with connect_backend(backend_arg) as store:
        for i in range(n):
            store.record_run(RunRecord("p", f"w{worker}", "failed", [_f(signature("SEN301", f"bare {'x' * i}"))],
                                       change_id=f"w{worker}", content_digest=f"{worker}-{i}"))
            # every runner also re-sends a run another one wrote: idempotent, never a duplicate
            store.record_run(RunRecord("p", "shared", "failed", [_f(S_EXCEPT)], change_id="shared",
                                       content_digest=f"shared-{i}"))


def test_parallel_writers_lose_nothing(store):
    from tests.pgfixture import backend_arg

    arg = backend_arg(store)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(arg, w, 20)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    assert store.counts() == {"runs": 6 * 20 + 20, "findings": 6 * 20 + 20, "resolutions": 0, "cards": 0,
                              "learn_seen": 0, "learn_runs": 0}
