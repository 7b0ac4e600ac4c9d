"""Team memory as a team meets it, this tree against another revision (default: main) in the same run, on a
real PostgreSQL + pgvector (pgserver):

- **runs lost by a fleet**: eight CI runners (a clone of one origin each, one change each) gating at once,
  with no other load and with two busy loops per core (the machine saturated). Counted: runs in the database
  right after the runners exit; runs that said "memory skipped" (dropped) or "memory queued" (in the outbox);
  for a revision with `sentinel memory sync`, runs in the database after each runner's sync (what the Action's
  last step does). Lost = 8 minus the runs the database ends with. Rounds alternate the revisions.
- **a card learned in one clone, searched in another**: clone A puts a learned card through the learned-card
  store `memory learn` writes to; clone B (another directory name, same origin), which never learned anything,
  runs `memory search` for its symptom: the card's rank (or not found).
- **`memory export` of a SQLite clone with learned cards**: how many learned cards the export says it wrote.

Both revisions are installed the same way (a plain `pip install` of the tree into a virtualenv that reaches
this environment's dependencies), as the tests install this one.

    python benchmarks/team_fleet_bench.py [--against main] [--rounds 2] [--json out.json]

Needs the [postgres] and [test] extras (pgserver). Takes a few minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def install(tree: Path, where: Path) -> str:
    """`sentinel` of `tree`, from a plain pip install into a fresh virtualenv: its console script."""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(where)
    python = where / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "_parent_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(tree)], check=True, capture_output=True)
    return str(where / "bin" / "sentinel")


def fleet(tmp: Path, url: str, script: str, hogs_per_core: int) -> dict:
    from tests.pgfixture import psql
    from tests.test_team_memory import _sentinel, saturated_runners

    started = time.monotonic()
    out = saturated_runners(tmp, url, script=script, hogs_per_core=hogs_per_core)
    wall = time.monotonic() - started
    time.sleep(2.0)  # a worker that outlived its runner's verdict has ended with its process
    after_runs = int(psql(url, "SELECT COUNT(*) FROM runs").strip())
    texts = [text for _, text in out["results"]]
    res = {"recorded_at_exit": out["recorded"], "recorded_after_exit": after_runs,
           "skipped": sum("memory skipped" in t for t in texts), "queued": sum("memory queued" in t for t in texts),
           "exit_codes": sorted({rc for rc, _ in out["results"]}), "wall_s": round(wall, 1)}
    has_sync = _sentinel(out["clones"][0], "memory", "sync", "--help", script=script).returncode == 0
    if has_sync:
        for clone in out["clones"]:
            _sentinel(clone, "memory", "sync", "--runs", env={"SENTINEL_DATABASE_URL": url}, script=script)
        res["recorded_after_sync"] = int(psql(url, "SELECT COUNT(*) FROM runs").strip())
    final = res.get("recorded_after_sync", after_runs)
    res["lost"] = 8 - final
    res["distinct_changes"] = int(psql(url, "SELECT COUNT(DISTINCT change_id) FROM runs").strip())
    return res


def cross_clone(tmp: Path, url: str, script: str) -> dict:
    from tests.test_team_memory import LEARN, _clone, _learned_card, _origin, _sentinel

    origin = _origin(tmp, "shop.git")
    alice, bob = _clone(origin, tmp / "alice-work"), _clone(origin, tmp / "bob_checkout")
    env = {"SENTINEL_DATABASE_URL": url}
    python = str(Path(script).parent / "python")
    put = subprocess.run([python, "-c", LEARN, json.dumps(_learned_card())], cwd=alice, capture_output=True,
                         text=True, env={**{k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")},
                                         **env})
    if put.returncode != 0:
        return {"error": put.stderr[-500:]}
    query = "service started with an empty configuration because a settings load error was swallowed"
    proc = _sentinel(bob, "memory", "search", query, "--json", env=env, script=script)
    try:
        ids = [h["id"] for h in json.loads(proc.stdout)["results"]]
    except (ValueError, KeyError):
        return {"error": (proc.stdout + proc.stderr)[-500:]}
    rank = ids.index("learned-settings-swallow") + 1 if "learned-settings-swallow" in ids else None
    return {"rank_in_other_clone": rank, "results": len(ids)}


PUT = """
import json, sys
from sentinel import gitio
from sentinel.config import load_config
from sentinel.memory.store.backends import open_learned_store
root = gitio.repo_root()
store = open_learned_store(load_config(root).memory, gitio.git_dir(root))  # what `sentinel memory learn` writes to
store.put([json.loads(sys.argv[1])])
print(store.count())
store.close()
"""


def sqlite_export(tmp: Path, script: str) -> dict:
    from tests.conftest import GitRepo
    from tests.test_team_memory import _learned_card, _sentinel

    repo = GitRepo(tmp / "solo")
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("start")
    python = str(Path(script).parent / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SENTINEL_")}
    cards = [dict(_learned_card(), id=f"learned-settings-swallow-{i}") for i in range(3)]
    for card in cards:
        subprocess.run([python, "-c", PUT, json.dumps(card)], cwd=repo.path, capture_output=True, text=True,
                       env=env, check=True)
    proc = _sentinel(repo.path, "memory", "export", "-o", str(tmp / "export.jsonl"), script=script)
    written = sum(1 for line in (tmp / "export.jsonl").read_text().splitlines()
                  if json.loads(line).get("type") == "card") if (tmp / "export.jsonl").exists() else 0
    return {"learned_cards_put": len(cards), "cards_in_export": written, "says": proc.stdout.strip()[-200:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="main", help="the other revision (a git ref), installed the same way")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of each fleet load, the revisions alternating")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args(argv)

    from tests.pgfixture import _start, new_database, stop_server

    work = Path(tempfile.mkdtemp(prefix="sentinel-fleet-"))
    try:
        other_tree = work / "other-tree"
        other_tree.mkdir()
        archive = subprocess.run(["git", "archive", args.against], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(other_tree)], input=archive, check=True)
        log(f"installing {args.against} and this tree")
        scripts = {args.against: install(other_tree, work / "venv-other"), "this tree": install(ROOT, work / "venv")}
        base = _start()
        report: dict = {"against": args.against, "cpus": os.cpu_count(), "fleet": {}, "cross_clone": {},
                        "sqlite_export": {}}
        n = 0
        for hogs in (0, 2):
            key = f"{hogs} busy loops per core"
            for rnd in range(args.rounds):
                order = list(scripts) if rnd % 2 == 0 else list(scripts)[::-1]
                for name in order:
                    n += 1
                    tmp = work / f"run{n}"
                    tmp.mkdir()
                    load_before = os.getloadavg()[0]
                    res = fleet(tmp, new_database(base), scripts[name], hogs)
                    res["load_1min_before"] = round(load_before, 1)
                    report["fleet"].setdefault(key, {}).setdefault(name, []).append(res)
                    log(f"{key}, {name}: {res}")
                    shutil.rmtree(tmp, ignore_errors=True)
        for name, script in scripts.items():
            n += 1
            tmp = work / f"run{n}"
            tmp.mkdir()
            report["cross_clone"][name] = cross_clone(tmp, new_database(base), script)
            report["sqlite_export"][name] = sqlite_export(tmp, script)
            log(f"{name}: {report['cross_clone'][name]}, {report['sqlite_export'][name]}")
        stop_server()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(render(report))
    return 0


def render(r: dict) -> str:
    lines = ["| load | revision | round | runs in the database at exit | said skipped / queued | after sync | lost |",
             "|---|---|---|---|---|---|---|"]
    for load, by_rev in r["fleet"].items():
        for rev, rounds in by_rev.items():
            for i, res in enumerate(rounds, 1):
                lines.append(f"| {load} (load {res['load_1min_before']} before) | {rev} | {i} | "
                             f"{res['recorded_after_exit']} of 8 | {res['skipped']} / {res['queued']} | "
                             f"{res.get('recorded_after_sync', '-')} | {res['lost']} |")
    lines += ["", "| revision | card learned in clone A, rank in clone B's search | SQLite export: learned cards "
              "of 3 |", "|---|---|---|"]
    for rev in r["cross_clone"]:
        cc, ex = r["cross_clone"][rev], r["sqlite_export"][rev]
        rank = cc.get("rank_in_other_clone") or ("not found" if "error" not in cc else f"error: {cc['error'][:80]}")
        lines.append(f"| {rev} | {rank} | {ex['cards_in_export']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
