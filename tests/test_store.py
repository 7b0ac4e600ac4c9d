"""The hypothesis store's behaviour, on every backend (real SQLite files; a real PostgreSQL with pgvector
started by pgserver — see tests/pgfixture.py): attempts, changes, resolutions, examples, migrations,
retention, export/import, concurrency."""

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


def test_the_same_mistake_with_other_names_is_one_signature():
    pairs = [
        ("SEN303", "call to builtin eval()", "return eval(cmd)", "return eval(user_supplied_text)"),
        ("SEN104", "subprocess.run() runs a shell", "subprocess.run(cmd, shell=True)",
         "subprocess.run(self.build_command, shell=True)"),
        ("SEN103", "shutil.rmtree() deletes `build_dir`", "shutil.rmtree(self.build_dir)", "shutil.rmtree(out)"),
        ("SEN305", "`user.name` may be None", "name = user.name.upper()", "title = acct.title.upper()"),
        ("SEN401", "TODO marker", "# TODO fix the login bug", "# TODO retry later"),
        ("SEN303", "hardcoded credential", "password = 'hunter2'", "api_key = \"0123abcd\""),
        ("SEN601", "claim 'all tests pass' unsupported: test_login failed", "", ""),
    ]
    for rule, message, code_a, code_b in pairs:
        other_message = message.replace("build_dir", "cache_path").replace("user.name", "order.total") \
            .replace("test_login", "test_checkout")
        assert signature(rule, message, code_a) == signature(rule, other_message, code_b), (code_a, code_b)


def test_different_mistakes_stay_apart():
    sigs = [
        signature("SEN301", "bare `except:` swallows every exception", "except:"),
        signature("SEN303", "call to builtin eval()", "return eval(cmd)"),
        signature("SEN303", "call to builtin exec()", "exec(cmd)"),
        signature("SEN104", "subprocess.run() runs a shell", "subprocess.run(cmd, shell=True)"),
        signature("SEN104", "subprocess.call() runs a shell", "subprocess.call(cmd, shell=True)"),
        signature("SEN103", "os.remove() deletes a file", "os.remove(p)"),
        signature("SEN103", "shutil.rmtree() deletes a tree", "shutil.rmtree(p)"),
        signature("SEN305", "may be None", "raise KeyError(k)"),
        signature("SEN305", "may be None", "raise ValueError(k)"),
        signature("SEN601", "claim 'all tests pass' unsupported: tests failed", ""),
        signature("SEN602", "claim 'production ready' unsupported", ""),
    ]
    assert len(set(sigs)) == len(sigs)


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
    assert pats[signature_id(S_EXCEPT)].last_resolution == "abcdef1234: Handle errors explicitly"
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
    assert store.patterns("p")[0].last_resolution == "c0ffee1234: Fix errors"


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
    for i, ref in enumerate(["main", "feat", "main"], 1):
        db.execute("INSERT INTO runs VALUES (?, 'p', ?, NULL, NULL, 'failed', ?)", (i, ref, float(i)))
        db.execute("INSERT INTO findings(run_id, sig_id, signature, rule, path, message) VALUES (?,?,?,?,?,?)",
                   (i, signature_id(S_EXCEPT), S_EXCEPT, "SEN301", "a.py", "bare except"))
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
            store.record_run(RunRecord("p", f"w{worker}", "failed", [_f(signature("SEN301", "bare", f"x{i}"))],
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
