"""The mechanisms that keep the hook fast must not change what the gate decides: the record base,
the config cache, the quiet-store note, parallel parsing and analysis, the fast AST walk."""

from __future__ import annotations

import ast
import os
import sqlite3
import sys
import time
import types
from contextlib import closing

import pytest
from pydantic import ValidationError

from sentinel import engine, parallel
from sentinel.checks import CHECK_MODULES
from sentinel.checks.base import FileContext, parent_map, walk
from sentinel.config import Config, JailConfig, from_plain, load_config, to_plain
from sentinel.diffparse import parse_diff
from sentinel.models import Finding, Severity
from sentinel.record import Record, factory
from sentinel.record_schema import adapter as TypeAdapter
from sentinel.rules import Rule
from sentinel.sources import Change
from tests.conftest import new_file_diff

# --- Record ------------------------------------------------------------------------------------


class _Point(Record):
    x: int
    y: int = 0
    tags: list[str] = factory(list)


class _Frozen(Record, frozen=True):
    name: str
    size: int = 1


def test_record_init_defaults_and_fresh_mutable_defaults():
    a, b = _Point(1), _Point(1, 2, ["t"])
    assert (a.x, a.y, a.tags) == (1, 0, [])
    a.tags.append("mine")
    assert _Point(5).tags == []  # every instance gets its own list
    assert b == _Point(x=1, y=2, tags=["t"]) and a != b
    assert repr(b) == "_Point(x=1, y=2, tags=['t'])"
    with pytest.raises(TypeError, match="missing required argument: 'x'"):
        _Point()
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        _Point(1, z=3)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        _Point(1, x=2)
    with pytest.raises(TypeError, match="positional arguments"):
        _Point(1, 2, [], 4)


def test_record_frozen_is_immutable_and_hashable_mutable_is_not_hashable():
    f = _Frozen("a")
    with pytest.raises(AttributeError, match="frozen"):
        f.size = 3
    assert {f, _Frozen("a")} == {f}
    with pytest.raises(TypeError):
        hash(_Point(1))


def test_record_field_order_is_checked_at_class_creation():
    with pytest.raises(TypeError, match="without a default follows"):
        class _Bad(Record):
            a: int = 1
            b: int


def test_records_validate_through_pydantic_with_their_own_types():
    finding = TypeAdapter(Finding).validate_python(
        {"rule": "SEN301", "check": "chaos", "severity": "error", "path": "a.py", "line": "3", "message": "m"})
    assert isinstance(finding, Finding) and finding.line == 3 and finding.severity is Severity.ERROR
    with pytest.raises(ValidationError):
        TypeAdapter(Finding).validate_python({"rule": "SEN301"})
    with pytest.raises(ValidationError) as err:
        TypeAdapter(JailConfig).validate_python({"banned_imports": ["x"], "surprise": 1})
    assert err.value.errors()[0]["type"] == "extra_forbidden"


def test_the_hook_path_imports_neither_dataclasses_nor_pydantic(repo):
    # A project config and a line long enough that the style check asks for the project's limit.
    repo.write("pyproject.toml", "[tool.ruff]\nline-length = 130\n")
    repo.write("a.py", "x = 1  # " + "long " * 21 + "long\n")
    repo.add("a.py", "pyproject.toml")
    code = ("import sys; sys.argv = ['sentinel', 'check']\n"
            "from sentinel.cli import main\nrc = main()\n"
            "print(rc, sorted(m for m in ('argparse', 'dataclasses', 'pydantic', 'tomllib', 'sqlite3', 'unidiff', "
            "'libcst', 'mcp', 'sentinel.fix', 'sentinel.mcp', 'hashlib', 'pathspec') if m in sys.modules))")
    first = repo.run_python(code)
    assert first.returncode == 0, first.stderr
    # The first run parses the config files and records the run; later runs read all of that from the cache.
    # Neither translates a path pattern: the defaults are answered with string operations, so no pathspec
    # (which brings dataclasses) even without a cache.
    assert first.stdout.strip().splitlines()[-1] == "0 ['sqlite3', 'tomllib']"
    again = repo.run_python(code)
    assert again.stdout.strip().splitlines()[-1] == "0 []"  # a clean run after a clean run


def test_a_project_config_is_read_without_pydantic_unless_a_value_needs_converting(repo):
    """The first run after a config edit (and every CI checkout, which has no cache) validates the table; one
    whose values already have their types needs no pydantic (~100 ms to import)."""
    repo.write("pyproject.toml", "[tool.sentinel]\nfail-level = \"error\"\nexclude = [\"docs/**\"]\n"
                                 "[tool.sentinel.severity]\nSEN305 = \"error\"\n"
                                 "[tool.sentinel.memory]\nrecall-k = 2\nmin-score = 1\n"
                                 "[tool.sentinel.per-path-ignores]\n\"tests/**\" = [\"SEN304\"]\n")
    repo.write("a.py", "x = 1\n")
    repo.add("a.py", "pyproject.toml")
    code = ("import sys; sys.argv = ['sentinel', 'check', '--no-memory']\n"
            "from sentinel.cli import main\nrc = main()\n"
            "from sentinel.config import load_config\nc = load_config('.')\n"
            "print(rc, 'pydantic' in sys.modules, c.fail_level.value, c.memory.recall_k, c.memory.min_score, "
            "c.severity, c.per_path_ignores)")
    out = repo.run_python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "0 False error 2 1.0 {'SEN305': 'error'} {'tests/**': ['SEN304']}"
    # 2.0 where an integer is declared: pydantic converts it, as it always did
    repo.write("pyproject.toml", "[tool.sentinel.memory]\nrecall-k = 2.0\n")
    repo.add("pyproject.toml")
    out = repo.run_python(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1].split()[:4] == ["0", "True", "error", "2"]


def test_digests_without_openssl_are_sha256():
    import hashlib

    from sentinel.digest import sha256

    for data in (b"", b"abc", bytes(range(256)) * 300):
        assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        h = sha256()
        h.update(data[:7])
        h.update(data[7:])
        assert h.digest() == hashlib.sha256(data).digest()


def test_bare_check_skips_argparse_with_the_parsers_own_defaults():
    from sentinel.cli import build_parser
    from sentinel.commands.core import check_defaults

    assert vars(build_parser("check").parse_args(["check"])) == vars(check_defaults())


# --- config cache ------------------------------------------------------------------------------


def test_config_round_trips_through_plain_data():
    cfg = Config()
    cfg.jail.banned_imports = ["flask"]
    cfg.severity = {"SEN301": "warning"}
    cfg.fail_level = Severity.WARNING
    assert from_plain(to_plain(cfg)) == cfg


def test_cached_config_is_used_without_parsing_and_follows_every_edit(repo, tmp_path):
    cache = tmp_path / "cache"
    repo.write("pyproject.toml", "[tool.sentinel]\nfail-level = 'warning'\n")
    assert load_config(str(repo.path), cache_dir=str(cache)).fail_level is Severity.WARNING
    assert list(cache.glob("config*.marshal"))
    # A hit must not parse TOML: poison the parser for the second load.
    import tomllib
    real = tomllib.loads
    try:
        tomllib.loads = None
        assert load_config(str(repo.path), cache_dir=str(cache)).fail_level is Severity.WARNING
    finally:
        tomllib.loads = real
    # Same size, new content: the exact bytes decide, not a size or a timestamp.
    repo.write("pyproject.toml", "[tool.sentinel]\nfail-level = 'error'  \n")
    assert load_config(str(repo.path), cache_dir=str(cache)).fail_level is Severity.ERROR
    # A dedicated file appearing takes over from pyproject.toml.
    repo.write(".sentinel.toml", "fail-level = 'info'\n")
    assert load_config(str(repo.path), cache_dir=str(cache)).fail_level is Severity.INFO


def test_a_corrupt_cache_entry_is_rebuilt(repo, tmp_path):
    cache = tmp_path / "cache"
    repo.write(".sentinel.toml", "fail-level = 'warning'\n")
    load_config(str(repo.path), cache_dir=str(cache))
    for entry in cache.glob("config*.marshal"):
        entry.write_bytes(b"\x00garbage")
    assert load_config(str(repo.path), cache_dir=str(cache)).fail_level is Severity.WARNING


# --- the quiet-store note -----------------------------------------------------------------------


def _runs(repo) -> int:
    with closing(sqlite3.connect(repo.path / ".git" / "sentinel" / "hypotheses.sqlite3")) as db:
        return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_clean_runs_after_a_clean_run_leave_the_store_alone_but_findings_are_always_recorded(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    assert repo.sentinel("check").returncode == 0
    assert _runs(repo) == 1  # the first clean run of a branch is recorded
    db = repo.path / ".git" / "sentinel" / "hypotheses.sqlite3"
    before = db.stat().st_mtime_ns
    time.sleep(0.01)
    assert repo.sentinel("check").returncode == 0
    assert _runs(repo) == 1 and db.stat().st_mtime_ns == before  # nothing to add: not even opened
    repo.write("b.py", "try:\n    pass\nexcept:\n    pass\n")
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 1
    assert _runs(repo) == 2
    repo.write("b.py", "try:\n    pass\nexcept ValueError:\n    pass\n")
    repo.add("b.py")
    assert repo.sentinel("check").returncode == 0
    assert _runs(repo) == 3  # the fix is recorded: it resolves the failure
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM resolutions").fetchone()[0] == 1


def test_a_failing_hook_run_compiles_no_glob_or_code_cue_and_records_its_run_beside_the_search(repo):
    repo.write("tests/test_b.py", "try:\n    pass\nexcept:\n    pass\n")
    repo.write("b.py", "try:\n    pass\nexcept:\n    pass\n")
    repo.add("b.py", "tests/test_b.py")
    code = ("import sys; sys.argv = ['sentinel', 'check']\n"
            "from sentinel.cli import main\nrc = main()\n"
            "from sentinel import globs\ntax = sys.modules.get('sentinel.memory.cards.taxonomy')\n"
            "print(rc, globs._compile.cache_info().currsize, tax is not None and len(tax._CODE))")
    out = repo.run_python(code)
    assert out.returncode == 0, out.stderr
    # role patterns answered by string operations; the recall query's mechanisms asked of its text only
    assert out.stdout.strip().splitlines()[-1] == "1 0 0"
    assert "Experience memory" in out.stdout and "tests/test_b.py" in out.stdout
    assert _runs(repo) == 1  # recorded by the store phase that ran while the cards were searched


def test_background_work_keeps_its_deadline_from_its_start_and_hands_back_errors():
    import threading

    from sentinel.memory.store import Background, StoreUnavailable

    go = threading.Event()
    work = Background(lambda: "done" if go.wait(10) else "late")
    go.set()
    assert work.result(10.0) == "done"
    slow = Background(lambda: time.sleep(5))
    time.sleep(1.0)  # the caller's own work meanwhile
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="the store did not answer within 1.5s"):
        slow.result(1.5, "the store")
    assert time.monotonic() - started < 1.2  # only what was left of its 1.5 s
    with pytest.raises(ZeroDivisionError):
        Background(lambda: 1 / 0).result(10.0)


def test_another_writer_invalidates_the_note(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.sentinel("check")
    repo.sentinel("check")
    assert _runs(repo) == 1
    with closing(sqlite3.connect(repo.path / ".git" / "sentinel" / "hypotheses.sqlite3")) as db:
        db.execute("INSERT INTO runs(run_key, project, change_id, change_ref, content_digest, outcome, created_at, "
                   "last_seen) VALUES ('k', 'x', 'y', 'y', 'd', 'passed', 0, 0)")
        db.commit()
    repo.sentinel("check")
    with closing(sqlite3.connect(repo.path / ".git" / "sentinel" / "hypotheses.sqlite3")) as db:
        # the database changed under the note: the run took the full path (a re-run of the same content)
        assert db.execute("SELECT SUM(reruns) FROM runs").fetchone()[0] == 1


# --- parallel parse and analysis -----------------------------------------------------------------


def _many_files_diff(n: int) -> str:
    parts = []
    for i in range(n):
        body = "import os\n\n\ndef f(p):\n    return p\n" if i % 7 else (
            "import shutil\n\n\ndef clean(p):\n    try:\n        shutil.rmtree(p)\n        return rebuild(p)\n"
            "    except:\n        pass\n")
        parts.append(new_file_diff(f"pkg/mod_{i:03}.py", body))
    return "".join(parts)


def _verdict(text: str, jobs: int):
    cs = parse_diff(text)
    return engine.run(Change(cs, content_rev=None), Config(), engine.RunOptions(jobs=jobs))


def test_parallel_analysis_gives_the_serial_verdict():
    if not parallel.can_fork():
        pytest.skip("no fork on this platform: analysis is always serial here")
    text = _many_files_diff(50)
    one, three = _verdict(text, 1), _verdict(text, 3)
    assert [(f.rule, f.path, f.line) for f in one.findings] == [(f.rule, f.path, f.line) for f in three.findings]
    assert {f.rule for f in one.findings} >= {"SEN103", "SEN301"}
    assert [(r.check, r.status) for r in one.checks] == [(r.check, r.status) for r in three.checks]


def test_a_check_crashing_in_a_worker_is_an_error_naming_the_file(monkeypatch):
    if not parallel.can_fork():
        pytest.skip("no fork on this platform")
    crasher = types.ModuleType("sentinel_test_late_crasher")
    crasher.RULES = ()

    def check_file(ctx):
        if ctx.path.endswith("mod_045.py"):  # in the last shard: analysed by a worker
            raise RuntimeError("boom")
        return []

    crasher.check_file = check_file
    monkeypatch.setitem(sys.modules, "sentinel_test_late_crasher", crasher)
    monkeypatch.setitem(CHECK_MODULES, "late", "sentinel_test_late_crasher")
    v = _verdict(_many_files_diff(50), 3)
    res = {r.check: r for r in v.checks}["late"]
    assert res.status.value == "error" and "boom" in res.reason and "mod_045.py" in res.reason
    assert not v.passed


def test_plan_jobs_stays_serial_for_small_changes():
    cs = parse_diff(_many_files_diff(5))
    contexts, _ = engine.build_contexts(Change(cs, content_rev=None), Config(), Config().filter_mode)
    assert parallel.plan_jobs(None, contexts) == 1
    assert parallel.plan_jobs(1, contexts) == 1
    if parallel.can_fork():
        assert parallel.plan_jobs(4, contexts) == 4


# --- the AST walk --------------------------------------------------------------------------------

_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


@pytest.mark.parametrize("module", ["ast", "argparse", "json.decoder", "sentinel.checks.jail"])
def test_walk_visits_what_ast_walk_does_minus_leaf_singletons(module):
    __import__(module)
    with open(sys.modules[module].__file__, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    expected = [n for n in ast.walk(tree) if not isinstance(n, _LEAVES)]
    assert walk(tree) == expected
    parents = parent_map(tree)
    for outer in expected:
        for child in ast.iter_child_nodes(outer):
            if not isinstance(child, _LEAVES):
                assert parents[id(child)] is outer


@pytest.mark.parametrize("module", ["ast", "argparse", "dataclasses", "sentinel.checks.chaos.none_access",
                                    "sentinel.memory.cards.index"])
def test_parents_found_by_position_are_the_parent_maps(module):
    # A hook looks a finding's parents up by position (FileContext._path_to); the parent map answers the rest
    __import__(module)
    with open(sys.modules[module].__file__, encoding="utf-8") as fh:
        text = fh.read()
    change = parse_diff(new_file_diff("m.py", text)).files[0]
    tree = ast.parse(text)
    parents = parent_map(tree)
    ctx = FileContext(change, Config(), Config().filter_mode, text)
    ctx._tree, ctx._parsed = tree, True
    nodes = walk(tree)
    by_position = 0
    for node in nodes:
        ctx._parents, ctx._descents = None, 0  # each node as a file's first lookup
        found = ctx._path_to(node) is not None
        by_position += found
        ctx._descents = 0
        assert ctx.parent(node) is parents.get(id(node))
        assert (ctx._parents is None) == found  # found by position: no map was built for it
        expected = []
        cur = parents.get(id(node))
        while cur is not None:
            expected.append(cur)
            cur = parents.get(id(cur))
        ctx._parents, ctx._descents = None, 0
        assert list(ctx.ancestors(node)) == expected
    assert by_position > 0.9 * len(nodes)  # decorators and f-string parts fall back to the map
    # past the lookups a map is cheaper for, the map is built, and answers the same
    ctx._parents, ctx._descents = None, 0
    for node in nodes[:200]:
        assert ctx.parent(node) is parents.get(id(node))
    assert ctx._parents is not None


def test_rules_are_frozen_records():
    from sentinel.checks.chaos import RULES

    rule = RULES[0]
    assert isinstance(rule, Rule)
    with pytest.raises(AttributeError):
        rule.code = "X"


def test_entry_point_exits_with_the_gate_code_after_flushing(repo):
    repo.write("b.py", "try:\n    pass\nexcept:\n    pass\n")
    repo.add("b.py")
    proc = repo.sentinel("check", "--no-memory", "--format", "json")
    assert proc.returncode == 1
    assert proc.stdout.rstrip().endswith("}")  # the whole report arrived before os._exit
    assert '"SEN301"' in proc.stdout


def test_a_check_that_cannot_load_is_an_error_not_a_skip(monkeypatch):
    monkeypatch.setitem(CHECK_MODULES, "ghost", "sentinel_test_no_such_module")
    v = _verdict(_many_files_diff(2), 1)
    res = {r.check: r for r in v.checks}["ghost"]
    assert res.status.value == "error" and "ModuleNotFoundError" in res.reason
    assert not v.passed and {r.check: r.status.value for r in v.checks}["chaos"] == "failed"


def test_a_worker_that_dies_has_its_files_analysed_here(monkeypatch):
    if not parallel.can_fork():
        pytest.skip("no fork on this platform")
    parent = os.getpid()
    killer = types.ModuleType("sentinel_test_worker_killer")
    killer.RULES = ()

    def check_file(ctx):
        if os.getpid() != parent:
            os._exit(3)  # what a segfaulting extension does to a worker
        return []

    killer.check_file = check_file
    monkeypatch.setitem(sys.modules, "sentinel_test_worker_killer", killer)
    monkeypatch.setitem(CHECK_MODULES, "killer", "sentinel_test_worker_killer")
    text = _many_files_diff(30)
    survived, serial = _verdict(text, 2), _verdict(text, 1)
    assert [(f.rule, f.path, f.line) for f in survived.findings] == [(f.rule, f.path, f.line) for f in serial.findings]
    assert {r.check: r.status.value for r in survived.checks}["killer"] == "passed"


def test_project_line_length_is_cached_across_runs_and_follows_edits(repo):
    from sentinel import projectconf

    repo.write("pyproject.toml", "[tool.ruff]\nline-length = 88\n[tool.ruff.lint]\nselect = ['E']\n")
    root = str(repo.path)
    projectconf.project_policy.cache_clear()
    first = projectconf.project_policy(root)
    assert (first.limit, first.source) == (88, "ruff E501 in pyproject.toml")
    assert list((repo.path / ".git" / "sentinel").glob("line-length-policy.marshal"))
    import tomllib
    real = tomllib.load, tomllib.loads
    try:
        tomllib.load = tomllib.loads = None  # a cache hit must not parse TOML
        projectconf.project_policy.cache_clear()
        again = projectconf.project_policy(root)
    finally:
        tomllib.load, tomllib.loads = real
    assert again == first
    repo.write("pyproject.toml", "[tool.ruff]\nline-length = 99\n[tool.ruff.lint]\nselect = ['E']\n")
    projectconf.project_policy.cache_clear()
    assert projectconf.project_policy(root).limit == 99
    projectconf.project_policy.cache_clear()
