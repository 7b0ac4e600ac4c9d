"""A team on one PostgreSQL + pgvector memory (a real server from pgserver), through the installed `sentinel`
console script:

- three clones of one bare origin with different directory names are one project: failures on different
  branches in two clones are one recurring pattern seen from the third, and a fix learned in one clone is found
  by search and by the gate's recall in another that never ran `memory learn`;
- a database that is down for the first runs loses none of them: they wait in each clone's outbox and are sent
  by the next run that reaches it, with the pattern counts of runs that never waited;
- eight runners gating at once on a saturated machine lose no run once their outboxes are sent;
- repositories without a remote are told apart by their history, not their directory name (before their first
  commit, by a name of their own that the first commit's history takes over).

The learned card is written through the learned-card store interface `sentinel memory learn` uses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import _INSTALLED, PROJECT, GitRepo  # the non-editable install's console script
from tests.pgfixture import new_database, pause_server, pg_server, psql, resume_server  # noqa: F401
from tests.test_learn_resolution import fixes  # noqa: F401 - a history of real fixes, learned from their code

BARE = "def {name}():\n    try:\n        {call}()\n    except:\n        pass\n"


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def _clone(origin: Path, dest: Path) -> Path:
    _git(dest.parent, "clone", "-q", str(origin), dest.name)
    for key, value in (("user.email", "t@example.com"), ("user.name", "T"), ("commit.gpgsign", "false")):
        _git(dest, "config", key, value)
    return dest


def _sentinel(cwd, *args, env=None, script=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}
    full.update(env or {})
    return subprocess.run([script or _INSTALLED["path"], *args], cwd=cwd, capture_output=True, text=True, env=full,
                          timeout=600)


def _origin(tmp_path, name="origin.git") -> Path:
    seed = GitRepo(tmp_path / f"seed-{name}")
    seed.write("app/__init__.py", "")
    seed.write("app/core.py", "def ping():\n    return 'pong'\n")
    # room in recall for the project's own cards next to the rule's bundled ones
    seed.write("pyproject.toml", "[tool.sentinel.memory]\nrecall-k = 6\n")
    seed.add("app/__init__.py", "app/core.py", "pyproject.toml")
    seed.commit("initial")
    origin = tmp_path / name
    _git(tmp_path, "clone", "-q", "--bare", str(seed.path), str(origin))
    return origin


def _stage(clone: Path, rel: str, text: str) -> None:
    (clone / rel).parent.mkdir(parents=True, exist_ok=True)
    (clone / rel).write_text(text)
    _git(clone, "add", rel)


def _patterns(clone, env) -> dict:
    proc = _sentinel(clone, "memory", "patterns", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _counts(pats: dict) -> dict:
    return {p["rule"]: (p["changes"], p["attempts"], bool(p["last_resolution"])) for p in pats["patterns"]}


LEARN = r"""
import json, sys
from sentinel import gitio
from sentinel.config import load_config
from sentinel.memory.store.backends import open_learned_store
root = gitio.repo_root()
cfg = load_config(root)
with open_learned_store(cfg.memory, gitio.git_dir(root)) as cards:  # what `sentinel memory learn` writes through
    cards.put([json.loads(sys.argv[1])])
    print(json.dumps({"project": cards.project, "count": cards.count()}))
"""


def _learned_card() -> dict:
    """A governed card (the checklist's shape), as `memory learn` writes them."""
    base = next(json.loads(line) for line in (PROJECT / "memory" / "cards" / "rule-classes.jsonl").open()
                if "SEN301" in json.loads(line)["tags"]["rules"])
    return dict(base, id="learned-settings-swallow",
                problem_summary="Settings that failed to load were swallowed by a bare except, so the service "
                                "started with an empty configuration and failed later, far from the cause.",
                provenance={**base["provenance"], "source": "learned", "repository": "acme/app",
                            "commit": "5e771" * 8})


def _wait_for_cache(clone: Path, version: int, seconds: float = 120.0) -> dict:
    """The clone's learned-card cache once it reflects `version` (a detached `memory sync` builds it)."""
    state_file = clone / ".git" / "sentinel" / "learned-sync.json"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = json.loads(state_file.read_text())
            if state["version"] >= version:
                return state
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"the cache of {clone.name} never reached version {version}")


def test_three_clones_one_project_one_memory(tmp_path, pg_server):
    origin = _origin(tmp_path)
    url = new_database(pg_server)
    # the ~1 s bound is tested below; here a busy CI machine must not make a run wait in the outbox
    env = {"SENTINEL_DATABASE_URL": url, "SENTINEL_MEMORY_WAIT": "60"}
    alice = _clone(origin, tmp_path / "alice-work")
    bob = _clone(origin, tmp_path / "bob_checkout")
    ci = _clone(origin, tmp_path / "ci-runner-7")

    # Alice and Bob, on their branches: a bare except swallowing a failure, with other names
    _git(alice, "checkout", "-q", "-b", "alice/settings")
    _stage(alice, "app/settings.py", BARE.format(name="load_settings", call="read"))
    started = time.monotonic()
    assert _sentinel(alice, "check", env=env).returncode == 1
    # a store that answers is not waited for up to the bound: the recall takes the card version the store phase
    # asked on its own connection (it waited the whole 60 s when it looked before the store phase had answered)
    assert time.monotonic() - started < 30
    _git(bob, "checkout", "-q", "-b", "bob/cache")
    _stage(bob, "app/cache.py", BARE.format(name="warm_cache", call="fetch_all"))
    assert _sentinel(bob, "check", env=env).returncode == 1

    # the CI runner's clone sees one project and one recurring pattern, with both examples
    pats = _patterns(ci, env)
    assert pats["project"] == "file://" + str(origin.resolve())[: -len(".git")]
    [bare] = [p for p in pats["patterns"] if p["rule"] == "SEN301"]
    assert bare["changes"] == 2 and bare["urgency"] == "medium"
    assert {(e["file"], e["change"].split("@")[0]) for e in bare["examples"]} == {
        ("app/settings.py", "alice/settings"), ("app/cache.py", "bob/cache")}
    brief = json.loads(_sentinel(ci, "memory", "brief", "--format", "json", "--no-cards", env=env).stdout)
    assert [p["rule"] for p in brief["recurring_patterns"]] == ["SEN301"]
    # and no clone keeps a store of its own
    assert not any((c / ".git" / "sentinel" / "hypotheses.sqlite3").exists() for c in (alice, bob, ci))

    # a fix learned in Alice's clone ...
    put = subprocess.run([sys.executable, "-c", LEARN, json.dumps(_learned_card())], cwd=alice,
                         capture_output=True, text=True, env={**os.environ, **env}, check=True)
    assert json.loads(put.stdout) == {"project": pats["project"], "count": 1}
    version = int(psql(url, "SELECT seq FROM card_versions").strip())

    # ... is found by a search in Bob's clone, which never learned anything (its cache is refreshed first)
    query = "service started with an empty configuration because a settings load error was swallowed"
    hits = json.loads(_sentinel(bob, "memory", "search", query, "--json", env=env).stdout)
    assert hits["results"][0]["id"] == "learned-settings-swallow", hits
    assert hits["results"][0]["source"] == "project"
    assert json.loads((bob / ".git" / "sentinel" / "learned-sync.json").read_text())["version"] == version

    # ... and by the gate's recall in the CI runner's clone: its first run after the card was learned notices the
    # new version (one query) and brings the cache up to date in a `memory sync` of its own
    _git(ci, "checkout", "-q", "-b", "ci/config")
    _stage(ci, "app/config.py", BARE.format(name="load_config", call="read_config"))
    first = _sentinel(ci, "check", "--format", "json", env=env)
    assert first.returncode == 1, first.stderr
    _wait_for_cache(ci, version)
    index_meta = ci / ".git" / "sentinel" / "learned-index" / "meta.json"
    built = index_meta.stat().st_mtime_ns
    again = json.loads(_sentinel(ci, "check", "--format", "json", env=env).stdout)
    [group] = [g for g in again["recall"] if g["rule"] == "SEN301"]
    assert "learned-settings-swallow" in [s["card_id"] for s in group["similar"]], group
    # an up-to-date cache costs a run one version check, never a rebuild
    assert index_meta.stat().st_mtime_ns == built

    # removing the card reaches the caches too (a tombstone with the next version)
    remove = ("from sentinel import gitio; from sentinel.config import load_config; "
              "from sentinel.memory.store.backends import open_learned_store; r = gitio.repo_root(); "
              "c = open_learned_store(load_config(r).memory, gitio.git_dir(r)); print(c.remove(['learned-settings-"
              "swallow'])); c.close()")
    assert subprocess.run([sys.executable, "-c", remove], cwd=alice, capture_output=True, text=True,
                          env={**os.environ, **env}, check=True).stdout.strip() == "1"
    synced = json.loads(_sentinel(bob, "memory", "sync", "--json", env=env).stdout)
    assert synced["cards"]["removed"] == 1 and not synced["cards"]["whole"], synced
    hits = json.loads(_sentinel(bob, "memory", "search", query, "--json", env=env).stdout)
    assert "learned-settings-swallow" not in [h["id"] for h in hits["results"]]


def test_runs_wait_in_the_outbox_while_the_database_is_down(tmp_path, pg_server):
    origin = _origin(tmp_path)
    url, control_url = new_database(pg_server), new_database(pg_server)
    dev = _clone(origin, tmp_path / "dev")
    control = _clone(origin, tmp_path / "control")

    def session(clone, env, down: bool):
        """Two failed attempts on two branches while the database is away (or not), then the fix of the first."""
        outs = []
        for branch, name in (("feature/a", "load_a"), ("feature/b", "load_b")):
            _git(clone, "checkout", "-q", "-b", branch, "main")
            _stage(clone, f"app/{name}.py", BARE.format(name=name, call="read"))
            outs.append(_sentinel(clone, "check", env=env))
            _git(clone, "stash", "-q")
        if down:
            resume_server()
        _git(clone, "checkout", "-q", "feature/a")
        _stage(clone, "app/load_a.py", "def load_a():\n    return read()\n")
        outs.append(_sentinel(clone, "check", env=env))
        return outs

    # a database that is down refuses at once; the wait only keeps a loaded CI machine from queueing the last run
    env = {"SENTINEL_DATABASE_URL": url, "SENTINEL_MEMORY_WAIT": "30"}
    pause_server()
    try:
        failed_a, failed_b, fixed = session(dev, env, down=True)
    finally:
        resume_server()  # (a no-op when session() restarted it)
    for proc in (failed_a, failed_b):
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        assert "memory queued: cannot reach the team database" in proc.stdout, proc.stdout
        assert "waits in the outbox" in proc.stdout
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    # the run that reached the database sent both queued runs first, and nothing waits any more
    assert not list((dev / ".git" / "sentinel" / "outbox").glob("*.json"))
    stats = _sentinel(dev, "memory", "stats", env=env)
    assert "queued runs (outbox): none" in stats.stdout, stats.stdout

    control_env = {"SENTINEL_DATABASE_URL": control_url, "SENTINEL_MEMORY_WAIT": "60"}
    never_waited = session(control, control_env, down=False)
    assert [p.returncode for p in never_waited] == [1, 1, 0]
    # the same patterns, attempts and resolution as runs that never waited
    assert _counts(_patterns(dev, env)) == _counts(_patterns(control, control_env)) == {"SEN301": (2, 2, True)}
    assert psql(url, "SELECT COUNT(*), COUNT(DISTINCT run_key) FROM runs").strip() == "3|3"


def test_stats_shows_what_waits_and_sync_sends_it(tmp_path, pg_server):
    origin = _origin(tmp_path)
    url = new_database(pg_server)
    env = {"SENTINEL_DATABASE_URL": url}
    dev = _clone(origin, tmp_path / "dev")
    _stage(dev, "app/jobs.py", BARE.format(name="run_jobs", call="step"))
    pause_server()
    try:
        assert "memory queued" in _sentinel(dev, "check", env=env).stdout
        stats = _sentinel(dev, "memory", "stats", env=env)
        assert "queued runs (outbox): 1 waiting" in stats.stdout, stats.stdout
        down = _sentinel(dev, "memory", "sync", "--runs", "--wait", "1", env=env)
        assert down.returncode == 1 and "1 still wait" in down.stdout, down.stdout
    finally:
        resume_server()
    sent = json.loads(_sentinel(dev, "memory", "sync", "--runs", "--json", env=env).stdout)
    assert sent["runs"]["sent"] == 1 and sent["runs"]["left"] == 0
    again = json.loads(_sentinel(dev, "memory", "sync", "--runs", "--json", env=env).stdout)
    assert again["runs"]["sent"] == 0 and again["runs"]["left"] == 0  # idempotent: nothing twice
    assert psql(url, "SELECT COUNT(*) FROM runs").strip() == "1"


def _busy(n: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def saturated_runners(tmp_path: Path, url: str, script: str | None = None, runners: int = 8,
                      hogs_per_core: int = 2) -> dict:
    """Eight CI runners (a clone each, one change each) gating at once while two busy loops per core keep the
    machine saturated; what each printed and how many runs the database holds right after. Shared with
    benchmarks/team_fleet_bench.py, which runs the same setup with Sentinel before the outbox (another
    `sentinel` script) and other loads."""
    origin = _origin(tmp_path, "fleet.git")
    clones = [_clone(origin, tmp_path / f"runner-{i}") for i in range(runners)]
    for i, clone in enumerate(clones):
        _stage(clone, f"app/job_{i}.py", BARE.format(name=f"job_{i}", call=f"step_{i}"))
    migrated = _sentinel(clones[0], "memory", "migrate", env={"SENTINEL_DATABASE_URL": url}, script=script)
    assert migrated.returncode == 0, migrated.stderr  # the team's database exists before its runners do
    hogs = _busy(hogs_per_core * (os.cpu_count() or 2))
    try:
        time.sleep(1.0)

        def run(i: int):
            proc = _sentinel(clones[i], "check", env={"SENTINEL_DATABASE_URL": url, "SENTINEL_CHANGE_REF": f"pr-{i}"},
                             script=script)
            return proc.returncode, proc.stdout

        with ThreadPoolExecutor(max_workers=runners) as pool:
            results = list(pool.map(run, range(runners)))
        recorded = int(psql(url, "SELECT COUNT(*) FROM runs").strip())
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    return {"clones": clones, "results": results, "recorded": recorded}


def test_eight_runners_on_a_saturated_machine_lose_no_run(tmp_path, pg_server):
    url = new_database(pg_server)
    fleet = saturated_runners(tmp_path, url)
    results, clones = fleet["results"], fleet["clones"]
    assert all(rc == 1 for rc, _ in results), results
    queued = [out for _, out in results if "memory queued" in out]
    assert not [out for _, out in results if "memory skipped" in out], results
    waiting = sum(len(list((c / ".git" / "sentinel" / "outbox").glob("*.json"))) for c in clones)
    # every run is in the database or in its clone's outbox (never both counted: a late record drops its entry)
    assert fleet["recorded"] + waiting >= 8 and waiting >= len(queued) - (fleet["recorded"] + waiting - 8), (
        fleet["recorded"], waiting, len(queued))
    for clone in clones:  # the runner's last step: send what waits
        proc = _sentinel(clone, "memory", "sync", "--runs", env={"SENTINEL_DATABASE_URL": url})
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert psql(url, "SELECT COUNT(*), COUNT(DISTINCT change_id) FROM runs").strip() == "8|8"
    print(f"\nsaturated: {fleet['recorded']} of 8 runs recorded at once, {len(queued)} queued, 8 of 8 after sync")


def test_repositories_without_a_remote_are_told_apart_by_their_history(tmp_path, pg_server):
    url = new_database(pg_server)
    env = {"SENTINEL_DATABASE_URL": url, "SENTINEL_MEMORY_WAIT": "60"}
    ours = GitRepo(tmp_path / "team-a" / "app")
    theirs = GitRepo(tmp_path / "team-b" / "app")  # unrelated, same directory name, no remote either
    for repo, name in ((ours, "ours"), (theirs, "theirs")):
        repo.write("README.md", f"{name}\n")
        repo.add("README.md")
        repo.commit(f"start {name}")
        _stage(repo.path, f"{name}.py", BARE.format(name=f"f_{name}", call="g"))
        assert _sentinel(repo.path, "check", env=env).returncode == 1
    mine, other = _patterns(ours.path, env), _patterns(theirs.path, env)
    root = ours.git("rev-list", "--max-parents=0", "HEAD").strip()
    assert mine["project"] == f"git-root:{root}" and other["project"] != mine["project"]
    assert [e["file"] for p in mine["patterns"] for e in p["examples"]] == ["ours.py"]
    assert [e["file"] for p in other["patterns"] for e in p["examples"]] == ["theirs.py"]
    # a copy of the same history under another name is the same project; an override names it
    copy = tmp_path / "elsewhere" / "app-copy"
    shutil.copytree(ours.path, copy)
    shutil.rmtree(copy / ".git" / "sentinel", ignore_errors=True)
    assert _patterns(copy, env)["project"] == mine["project"]
    named = _patterns(ours.path, {**env, "SENTINEL_PROJECT": "acme/app"})
    assert named["project"] == "acme/app" and named["patterns"] == []


def test_a_repository_gated_before_its_first_commit_keeps_those_runs(tmp_path, pg_server):
    """`git init`, a failing first change, its first commit: the runs before the commit (no history, no remote
    to be named by) are the project's, in the team database and in the clone's own SQLite store alike; and two
    such repositories with one directory name share nothing even before either has a commit."""
    url = new_database(pg_server)
    for env in ({"SENTINEL_DATABASE_URL": url, "SENTINEL_MEMORY_WAIT": "60"}, {"SENTINEL_MEMORY_WAIT": "60"}):
        kind = "team" if env.get("SENTINEL_DATABASE_URL") else "sqlite"
        ours, theirs = GitRepo(tmp_path / kind / "a" / "app"), GitRepo(tmp_path / kind / "b" / "app")
        for repo in (ours, theirs):  # both unborn: no commit, no remote
            _stage(repo.path, "first.py", BARE.format(name="first", call="g"))
            assert _sentinel(repo.path, "check", env=env).returncode == 1
        unborn = [_patterns(r.path, env)["project"] for r in (ours, theirs)]
        assert all(p.startswith("git-new:") for p in unborn) and unborn[0] != unborn[1], unborn
        ours.commit("start")
        _stage(ours.path, "second.py", BARE.format(name="second", call="h"))
        assert _sentinel(ours.path, "check", env=env).returncode == 1
        pats = _patterns(ours.path, env)
        root = ours.git("rev-list", "--max-parents=0", "HEAD").strip()
        assert pats["project"] == f"git-root:{root}"
        # the first change's run moved to the history's name: two changes, one recurring pattern
        assert _counts(pats) == {"SEN301": (2, 2, False)}, pats
        assert sorted(e["file"] for p in pats["patterns"] for e in p["examples"]) == ["first.py", "second.py"]
        assert _counts(_patterns(theirs.path, env)) == {"SEN301": (1, 1, False)}  # the other repository's own
    assert psql(url, "SELECT COUNT(*) FROM runs WHERE project LIKE 'git-new:%'").strip() == "1"  # theirs only


def test_a_store_that_named_the_project_after_its_directory_is_migrated(tmp_path):
    """A clone without a remote whose SQLite store of schema 5 recorded runs (and learned cards) under the
    directory name: the first command of this Sentinel moves them to the history's identity."""
    import sqlite3

    from sentinel.memory.store import FindingRecord, RunRecord
    from sentinel.memory.store.cards import LearnedCards
    from sentinel.memory.store.sqlite import SQLiteStore

    repo = GitRepo(tmp_path / "shop")
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("start")
    path = repo.path / ".git" / "sentinel" / "hypotheses.sqlite3"
    store = SQLiteStore(str(path))
    for i in (1, 2):
        store.record_run(RunRecord("shop", f"b{i}", "failed", [FindingRecord("SEN301", "SEN301|x|bare", "a.py")],
                                   change_id=f"b{i}", content_digest=f"d{i}"))
    LearnedCards(store, "shop").put([_learned_card()], vectors=False)
    store.close()
    db = sqlite3.connect(path)  # back to schema 5: what Sentinel before the card versions wrote
    db.executescript("DROP INDEX cards_seq; ALTER TABLE cards DROP COLUMN seq; DROP TABLE card_versions; "
                     "DROP TABLE card_removals; UPDATE meta SET value='5' WHERE key='schema_version';")
    db.close()
    pats = _patterns(repo.path, {})
    root = repo.git("rev-list", "--max-parents=0", "HEAD").strip()
    assert pats["project"] == f"git-root:{root}"
    assert _counts(pats) == {"SEN301": (2, 2, False)}
    exported = _sentinel(repo.path, "memory", "export", "-o", str(tmp_path / "x.jsonl"), "--format", "json")
    assert json.loads(exported.stdout)["cards"] == 1, exported.stdout + exported.stderr


def test_cards_learned_from_the_fix_travel_between_backends_whole(fixes, pg_server, tmp_path):
    """Cards `memory learn` reads from the fix itself (what it changed and how, its key lines, the regression
    test, the symbols) go SQLite -> PostgreSQL -> SQLite whole and once: every field of every card, their
    vectors and the learning state come back as they were, importing again adds nothing, and the clone that
    reads them from the team database shows the same card and finds it."""
    from sentinel.config import load_config
    from sentinel.memory.store.backends import open_learned_store

    repo, shas = fixes
    learned = _sentinel(repo.path, "memory", "learn", "--json", "--repo-name", "acme/shop")
    assert learned.returncode == 0, learned.stderr
    with open_learned_store(load_config(str(repo.path)).memory, str(repo.path / ".git")) as cards:
        original = {c["id"]: c for c in cards.cards()}
    guard = next(c for c in original.values() if c["provenance"]["commit"] == shas["guard"])
    # the fields of cards learned from the fix are there to be carried
    assert guard["tags"]["symbols"] and guard["patch_digest"]["changes"] and guard["patch_digest"]["excerpt"]
    assert guard["verification"]["regression_test"]["assertion"]

    def export(path, env=None, *args):
        proc = _sentinel(repo.path, "memory", "export", "-o", str(path), *args, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [json.loads(line) for line in path.read_text().splitlines()]

    def rows(records):
        return [{k: v for k, v in r.items() if k != "from"} for r in records]

    first = export(tmp_path / "sqlite.jsonl")
    assert {r["card_id"]: r["card"] for r in first if r["type"] == "card"} == original  # every field, as stored
    assert all(r["vector"] for r in first if r["type"] == "card")
    url = new_database(pg_server)
    imported = _sentinel(repo.path, "memory", "import", str(tmp_path / "sqlite.jsonl"), "--json",
                         "--database-url", url)
    assert imported.returncode == 0, imported.stderr
    added = json.loads(imported.stdout)["added"]
    assert added["cards"] == len(original) and added["learn_seen"] > 0 and added["learn_runs"] == 1, added
    again = json.loads(_sentinel(repo.path, "memory", "import", str(tmp_path / "sqlite.jsonl"), "--json",
                                 "--database-url", url).stdout)["added"]
    assert not any(again[k] for k in ("runs", "cards", "learn_seen", "learn_runs")), again  # idempotent
    team = {"SENTINEL_DATABASE_URL": url}
    second = export(tmp_path / "pg.jsonl", team)
    back = tmp_path / "back.sqlite3"
    assert _sentinel(repo.path, "memory", "import", str(tmp_path / "pg.jsonl"), "--database-url",
                     f"sqlite:///{back}").returncode == 0
    third = export(tmp_path / "back.jsonl", None, "--database-url", f"sqlite:///{back}")
    assert rows(first) == rows(second) == rows(third)

    # read from the team database (this clone's cache is rebuilt from it: another store), the card is the same
    shown = _sentinel(repo.path, "memory", "show", guard["id"], "--json", env=team)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout) == guard
    state = json.loads((repo.path / ".git" / "sentinel" / "learned-sync.json").read_text())
    assert state["store"] == psql(url, "SELECT value FROM meta WHERE key = 'store_id'").strip()
    assert state["cards"] == len(original)
    hits = json.loads(_sentinel(repo.path, "memory", "search", "removing an unknown sku raises KeyError",
                                "--json", env=team).stdout)
    assert hits["results"] and hits["results"][0]["id"] == guard["id"], hits


def _sessions(url: str, since: int | None = None) -> int:
    """Connections ever made to the database of `url` (the server's statistics, read from another database so
    that reading them is not one). `since`: a count before some runs; their backends report as they end, so
    this waits (up to 30 s) until the count has moved, then a moment more."""
    name = url.split("?")[0].rsplit("/", 1)[1]
    admin = url.replace(f"/{name}", "/postgres", 1)

    def count() -> int:
        return int(psql(admin, f"SELECT sessions FROM pg_stat_database WHERE datname = '{name}'").strip())

    if since is None:
        return count()
    deadline = time.monotonic() + 30
    while count() == since and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)
    return count()


def test_a_hook_run_costs_the_team_database_one_connection(tmp_path, pg_server):
    """With the learned cards' cache up to date, a failing run (recorded, recalled, the card version checked)
    and a passing run each open one connection: the version check rides on the store phase's, and nothing is
    downloaded or synced."""
    origin = _origin(tmp_path)
    url = new_database(pg_server)
    env = {"SENTINEL_DATABASE_URL": url, "SENTINEL_MEMORY_WAIT": "60"}
    dev = _clone(origin, tmp_path / "dev")
    subprocess.run([sys.executable, "-c", LEARN, json.dumps(_learned_card())], cwd=dev, capture_output=True,
                   text=True, env={**os.environ, **env}, check=True)
    assert _sentinel(dev, "memory", "sync", env=env).returncode == 0  # the cache is current
    state = (dev / ".git" / "sentinel" / "learned-sync.json").read_text()
    _stage(dev, "app/settings.py", BARE.format(name="load_settings", call="read"))
    before = _sessions(url)
    started = time.monotonic()
    failing = _sentinel(dev, "check", "--format", "json", env=env)
    assert failing.returncode == 1
    assert time.monotonic() - started < 30  # the recall took the store phase's answer, not the 60 s bound
    [group] = [g for g in json.loads(failing.stdout)["recall"] if g["rule"] == "SEN301"]
    assert "learned-settings-swallow" in [s["card_id"] for s in group["similar"]]
    assert _sessions(url, since=before) - before == 1
    assert (dev / ".git" / "sentinel" / "learned-sync.json").read_text() == state  # no sync ran
    _stage(dev, "app/settings.py", "def load_settings():\n    return read()\n")
    before = _sessions(url)
    assert _sentinel(dev, "check", env=env).returncode == 0
    assert _sessions(url, since=before) - before == 1


HOOK_IMPORTS = ("import sys; sys.argv = ['sentinel', 'check']\nfrom sentinel.cli import main\nrc = main()\n"
                "print(rc, sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_binary', "
                "'psycopg_pool', 'pgvector')))")


def test_the_hook_without_a_database_url_imports_no_database_driver(repo):
    """The clone's SQLite store, learned cards in it and their cache: a failing run (its recall checks the
    cards' version) and a passing run import no PostgreSQL driver."""
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("start")
    put = repo.run_python(LEARN.replace("sys.argv[1]", repr(json.dumps(_learned_card()))))
    assert put.returncode == 0, put.stderr
    assert repo.sentinel("memory", "sync").returncode == 0
    repo.write("settings.py", BARE.format(name="load_settings", call="read"))
    repo.add("settings.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}
    failing = subprocess.run([sys.executable, "-c", HOOK_IMPORTS], cwd=repo.path, capture_output=True, text=True,
                             env=env)
    assert failing.stdout.strip().splitlines()[-1] == "1 []", failing.stdout + failing.stderr
    assert "learned-settings-swallow" in failing.stdout  # the learned card was read, from the clone's store
    repo.write("settings.py", "def load_settings():\n    return read()\n")
    repo.add("settings.py")
    passing = subprocess.run([sys.executable, "-c", HOOK_IMPORTS], cwd=repo.path, capture_output=True, text=True,
                             env=env)
    assert passing.stdout.strip().splitlines()[-1] == "0 []", passing.stdout + passing.stderr


def _hnsw_options(url: str) -> list[str]:
    return psql(url, "SELECT c.relname || ' ' || coalesce(array_to_string(c.reloptions, ','), '') FROM pg_class c JOIN pg_index i "
                     "ON i.indexrelid = c.oid WHERE i.indrelid = 'cards'::regclass AND c.relname LIKE 'cards_hnsw%' "
                     "ORDER BY 1").split()


def test_an_earlier_versions_hnsw_index_is_rebuilt_by_migrate_and_search_still_finds(tmp_path, pg_server):
    from sentinel.memory.store.postgres import HNSW_EF_CONSTRUCTION, HNSW_M

    url = new_database(pg_server)
    dev = _clone(_origin(tmp_path), tmp_path / "dev")
    env = {"SENTINEL_DATABASE_URL": url}
    subprocess.run([sys.executable, "-c", LEARN, json.dumps(_learned_card())], cwd=dev, capture_output=True,
                   text=True, env={**os.environ, **env}, check=True)
    wanted = f"m={HNSW_M},ef_construction={HNSW_EF_CONSTRUCTION}"
    name, options = _hnsw_options(url)
    assert options == wanted  # what a new database gets
    # what Sentinel before this version made: pgvector's default graph (m=16, ef_construction=64)
    dim = name.rsplit("_", 1)[1]
    psql(url, f"DROP INDEX {name}; CREATE INDEX {name} ON cards USING hnsw ((vector::vector({dim})) "
              f"vector_cosine_ops) WHERE dim = {dim}")
    assert _hnsw_options(url) == [name]
    stats = _sentinel(dev, "memory", "stats", env=env)
    assert stats.returncode == 0 and "m=16, ef_construction=64 (an earlier version's graph" in stats.stdout, stats

    migrated = _sentinel(dev, "memory", "migrate", "--json", env=env)
    assert migrated.returncode == 0, migrated.stderr
    assert json.loads(migrated.stdout)["rebuilt_vector_indexes"] == [{"dim": int(dim), "shards": 1, "from_shards": 1}]
    assert _hnsw_options(url) == [name, wanted]  # one index, under its own name, with this version's graph
    again = _sentinel(dev, "memory", "migrate", env=env)
    assert again.returncode == 0 and "rebuilt" not in again.stdout, again.stdout  # nothing twice

    found = _sentinel(dev, "memory", "search", "settings swallowed by a bare except", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert "learned-settings-swallow" in found.stdout
    stats = json.loads(_sentinel(dev, "memory", "stats", "--json", env=env).stdout)
    assert stats["learned"]["vector_indexes"] == [{"dim": int(dim), "shards": 1, "m": HNSW_M, "cards": 1,
                                                   "ef_construction": HNSW_EF_CONSTRUCTION, "wanted_shards": 1,
                                                   "current": True}]


def test_a_sharded_layout_is_searched_shown_and_merged_back_by_migrate(tmp_path, pg_server):
    """Shards over a card or two (what `memory migrate` makes of a million): search walks them, stats names them
    and says they are more than the cards need, migrate merges them into one graph and search still finds."""
    from sentinel.memory.store.postgres import _hnsw_definition, _index_name

    url = new_database(pg_server)
    dev = _clone(_origin(tmp_path), tmp_path / "dev")
    env = {"SENTINEL_DATABASE_URL": url}
    subprocess.run([sys.executable, "-c", LEARN, json.dumps(_learned_card())], cwd=dev, capture_output=True,
                   text=True, env={**os.environ, **env}, check=True)
    (name, _), = [_hnsw_options(url)]
    dim = int(name.rsplit("_", 1)[1])
    psql(url, f"DROP INDEX {name}; " + "; ".join(
        f"CREATE INDEX {_index_name(dim, 2, s)} ON cards USING hnsw {_hnsw_definition(dim, 2, s)}" for s in (0, 1)))
    found = _sentinel(dev, "memory", "search", "settings swallowed by a bare except", "--json", env=env)
    assert found.returncode == 0 and "learned-settings-swallow" in found.stdout, found
    stats = _sentinel(dev, "memory", "stats", env=env)
    assert stats.returncode == 0, stats.stderr
    assert (f"vector index ({dim} dims, 1 card): 2 HNSW shards" in stats.stdout
            and "more shards than its cards need" in stats.stdout and "rebuilds it as one graph" in stats.stdout), stats

    migrated = _sentinel(dev, "memory", "migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr
    assert f"rebuilt the HNSW index of {dim}-dimension card vectors: 2 shards -> one graph" in migrated.stdout
    assert [n for n in _hnsw_options(url) if n.startswith("cards_hnsw")] == [name]
    found = _sentinel(dev, "memory", "search", "settings swallowed by a bare except", "--json", env=env)
    assert found.returncode == 0 and "learned-settings-swallow" in found.stdout, found
