"""Hostile repositories and config files for benchmarks/fuzz.py (issue 24).

*Fix cases*: a real git repository whose staged files have fixable findings, with traps planted where the fixer
writes: committed links named like the temporary files it once used (``name.sentinel-fix.<pid>``, and its present
prefix without the random part) pointing at ``.git/hooks/pre-commit`` or a file outside the tree, a staged file
that is itself a link out of the tree, a directory swapped for a link after staging, the file swapped for a link
or edited between planning and writing, names with a tab or a line break. The fixer runs as ``--fix`` runs it
(planner.plan, then planner.write). Counted as an *escape*: any change under .git, any change outside the
working tree, a link retargeted or replaced, a temporary file left behind. Counted as *missed*: a plain file
that nothing touched after the check and that was not fixed.

*Config cases*: pyproject.toml or .sentinel.toml in every wrong shape (a value where a table belongs, a table
where a value belongs, arrays of tables, rule codes in the wrong case or unknown, severities that are no
severity, bytes that are not UTF-8, TOML that does not parse) mixed with random tables. Loading must give a
config or a ConfigError naming the file (exit 2); anything else is an internal error, and a shape that must be
refused but loads is *accepted silently*.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

FIXABLE = "def handler_{i}(raw):   \n    try:\n        return int(raw)\n    except:\n        return None\n\n\n"
UNSAFE = "def calc_{i}(raw):\n    return eval(raw)\n\n\n"
NAMES = ("app.py", "pkg/sub/app.py", "tab\tapp.py", "line\nbreak.py", "Plan b/app.py", "caf\xe9.py")
TRAPS = ("old-temp-names", "temp-prefix", "file-is-link", "dir-swapped", "swap-after-plan", "edit-after-plan")
GIT_ENV = {"GIT_AUTHOR_NAME": "fuzz", "GIT_AUTHOR_EMAIL": "fuzz@example.invalid", "GIT_COMMITTER_NAME": "fuzz",
           "GIT_COMMITTER_EMAIL": "fuzz@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


# --- fix cases ------------------------------------------------------------------------------------

def make_fix_case(rng: random.Random, index: int) -> dict:
    name = rng.choice(NAMES)
    body = "".join(rng.choice((FIXABLE, FIXABLE, UNSAFE)).replace("{i}", str(i)) for i in range(rng.randint(1, 40)))
    traps = sorted(rng.sample(TRAPS, rng.randint(1, 3)))
    return {"index": index, "kind": "fix", "name": name, "body": body, "traps": traps,
            "unsafe": rng.random() < 0.5, "pids": rng.randint(50, 400), "mutations": ["fix-repo", *traps],
            "inject": None, "data": b"", "message": ""}


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def _tree(top: Path) -> dict[str, str]:
    """Every entry below `top`: a link's target, a file's hash, a directory's kind — to compare after."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(top))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def _git_state(git_dir: Path) -> dict[str, str]:
    # the index is git's to refresh (its stat data), .git/sentinel the gate's own cache (the run's, not the
    # fixer's); everything else under .git must stay as it was
    return {k: v for k, v in _tree(git_dir).items() if k != "index" and k.split("/")[0] != "sentinel"}


def run_fix_case(case: dict) -> dict:
    """Stage the file and its traps in a new repository, plan and write the fixes as --fix does, and compare."""
    from sentinel import engine
    from sentinel.config import Config
    from sentinel.fix import planner
    from sentinel.sources import staged

    out: dict = {"outcome": "ran", "internal": None, "crashes": {}, "leaks": [], "escapes": [], "missed": False}
    top = Path(tempfile.mkdtemp(prefix="sentinel-fuzz-fix-"))
    try:
        root, outside = top / "repo", top / "outside"
        root.mkdir()
        (outside / "pkg").mkdir(parents=True)
        victim = outside / "victim.py"
        victim.write_text(case["body"], encoding="utf-8")
        (outside / "pkg" / "app.py").write_text(case["body"], encoding="utf-8")
        _git(root, "init", "-q")
        name, traps = case["name"], set(case["traps"])
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(case["body"], encoding="utf-8")
        depth = "../" * name.count("/")
        links: list[str] = []
        base, parent = os.path.basename(name), os.path.dirname(name)
        if "old-temp-names" in traps:  # the names of the fixer that could install a hook (issue 24, N1)
            for pid in range(1, case["pids"]):
                links.append(os.path.join(parent, f"{base}.sentinel-fix.{pid}"))
                os.symlink(f"{depth}.git/hooks/pre-commit", root / links[-1])
        if "temp-prefix" in traps:  # today's prefix without its random part, and one pointing out of the tree
            for suffix, dest in (("", f"{depth}.git/hooks/pre-commit"), ("0" * 16, str(victim))):
                links.append(os.path.join(parent, f".{base}.sentinel-fix-{suffix}"))
                os.symlink(dest, root / links[-1])
        if "file-is-link" in traps:
            links.append("linked.py")
            os.symlink(str(victim), root / "linked.py")
        if "dir-swapped" in traps:
            (root / "lib").mkdir()
            (root / "lib" / "app.py").write_text(case["body"], encoding="utf-8")
        _git(root, "add", "-A")
        if "dir-swapped" in traps:  # staged as a directory, a link out of the tree by the time --fix runs
            shutil.rmtree(root / "lib")  # sentinel: ignore[SEN103] - inside the case's own mkdtemp
            os.symlink(str(outside / "pkg"), root / "lib")
            links.append("lib")
        git_before, outside_before = _git_state(root / ".git"), _tree(outside)
        links_before = {p: os.readlink(root / p) for p in links}

        change = staged(str(root))
        verdict = engine.run(change, Config(), engine.RunOptions())
        plan = planner.plan(change, verdict.findings, Config(), unsafe=case["unsafe"])
        touched = False
        if "swap-after-plan" in traps:  # the checked file is a link out of the tree when the fix is written
            target.unlink()  # sentinel: ignore[SEN103] - inside the case's own mkdtemp
            os.symlink(str(victim), target)
            links.append(name)
            links_before[name] = str(victim)
            touched = True
        elif "edit-after-plan" in traps:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write("# edited after the check\n")
            touched = True
        written = planner.write(plan, str(root))

        if _git_state(root / ".git") != git_before:
            changed = sorted(set(_git_state(root / ".git").items()) ^ set(git_before.items()))
            out["escapes"].append(f".git changed: {changed[:3]}")
        if _tree(outside) != outside_before:
            out["escapes"].append("a file outside the working tree changed")
        for p, dest in links_before.items():
            if not os.path.islink(root / p) or os.readlink(root / p) != dest:
                out["escapes"].append(f"link {p!r} replaced or retargeted")
        left = [str(p.relative_to(root)) for p in root.rglob("*.sentinel-fix-*") if not p.is_symlink()]
        if left:
            out["escapes"].append(f"temporary files left: {left[:3]}")
        if not touched and name not in written:
            out["missed"] = True
            out["why_missed"] = "; ".join(why for p, why in plan.refused)[:300] or "no fix planned"
    finally:
        shutil.rmtree(top, ignore_errors=True)  # sentinel: ignore[SEN103] - the case's own mkdtemp
    return out


# --- config cases ---------------------------------------------------------------------------------

# (text, must it be refused?) — each a shape issue 24 (N6) or the docs name
SHAPES = (
    ('tool = "x"\n', True),
    ("tool = 3\n", True),
    ('[tool]\nsentinel = "on"\n', True),
    ("[[tool.sentinel]]\nfail-level = \"error\"\n", True),
    ('[tool.sentinel.severity]\nsen303 = "off"\n', True),
    ('[tool.sentinel.severity]\nSen303 = "off"\n', True),
    ('[tool.sentinel.severity]\n"SEN303 " = "off"\n', True),
    ('[tool.sentinel.severity]\nSEN9999 = "off"\n', True),
    ('[tool.sentinel.severity]\nSEN303 = "loud"\n', True),
    ("[tool.sentinel.severity]\nSEN303 = 3\n", True),
    ('[tool.sentinel]\nseverity = ["SEN303"]\n', True),
    ('[tool.sentinel]\nseverity = "off"\n', True),
    ('[tool.sentinel]\nfail-level = "fatal"\n', True),
    ("[tool.sentinel]\nfail-level = true\n", True),
    ('[tool.sentinel]\nexclude = "build/"\n', False),  # a string where a list belongs: one pattern, or refused
    ("[tool.sentinel]\nexclude = [1, 2]\n", True),
    ('[tool.sentinel.per-path-ignores]\n"tests/*" = "SEN303"\n', False),
    ('[tool.sentinel.per-path-ignores]\n"tests/*" = ["sen303"]\n', True),
    ("[tool.sentinel.per-path-ignores]\n\"tests/*\" = [[\"SEN303\"]]\n", True),
    ('[tool.sentinel]\nnonsense = 1\n', True),
    ('[tool.sentinel.jail]\nallow = {a = 1}\n', True),
    ('[tool.sentinel.memory]\nenabled = "yes"\n', False),
    ("[tool.sentinel]\nstyle = 5\n", True),
    ('[tool.sentinel.style]\nmax-line-length = -1\n', True),
    ('[tool.sentinel.style]\nmax-line-length = 1e400\n', True),
    ("[tool.sentinel.style]\nmax-line-length = 99999999999999999999\n", True),
    ('[tool.sentinel]\nfail-level = "error"\nfail-level = "info"\n', True),
    ("[tool.sentinel\n", True),
    ('[tool.sentinel]\nfail-level = "err\n', True),
    ('[tool.sentinel]\nfail-level = "\x00"\n', True),
)
KEYS = ("fail-level", "filter-mode", "exclude", "baseline", "severity", "per-path-ignores", "jail", "style",
        "placeholder", "chaos", "memory", "roles", "llm", "claims", "drift", "SEN303", "sen303")


def _random_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 2 else 5)
    if kind == 0:
        return rng.choice([True, False])
    if kind == 1:
        return rng.randint(-10**6, 10**6)
    if kind == 2:
        return rng.choice([0.5, -1.0, 1e300])
    if kind in (3, 4):
        return rng.choice(["off", "OFF", "error", "warning", "info", "SEN303", "sen303", "", "*.py", "x" * 300])
    if kind in (5, 6):
        return {rng.choice(KEYS): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + "}"


def make_config_case(rng: random.Random, index: int) -> dict:
    file = rng.choice(["pyproject.toml", ".sentinel.toml"])
    if rng.random() < 0.6:
        text, must_refuse = rng.choice(SHAPES)
        how = "shape"
    else:
        table = {rng.choice(KEYS): _random_value(rng) for _ in range(rng.randint(1, 4))}
        text = "[tool.sentinel]\n" + "".join(f'"{k}" = {_toml_value(v)}\n' for k, v in table.items())
        must_refuse, how = False, "random"
    data = text.encode("utf-8")
    if rng.random() < 0.1:
        data = data.replace(b"=", b"= \xff", 1)  # not UTF-8
        must_refuse = True
    return {"index": index, "kind": "config", "file": file, "config": data, "must_refuse": must_refuse,
            "mutations": ["config", how], "inject": None, "data": b"", "message": ""}


def run_config_case(case: dict) -> dict:
    from sentinel.config import load_config
    from sentinel.errors import ConfigError

    out: dict = {"outcome": "loaded", "internal": None, "crashes": {}, "leaks": [], "accepted_silently": False}
    top = tempfile.mkdtemp(prefix="sentinel-fuzz-config-")
    try:
        Path(top, case["file"]).write_bytes(case["config"])
        try:
            load_config(top)
        except ConfigError as exc:
            out["outcome"] = "refused"
            if case["file"] not in str(exc):
                out["internal"] = f"the message does not name the file: {exc}"[:300]
        else:
            out["accepted_silently"] = case["must_refuse"]
        if out["accepted_silently"]:
            out["config_text"] = case["config"].decode("utf-8", "replace")[:200]
    finally:
        shutil.rmtree(top, ignore_errors=True)  # sentinel: ignore[SEN103] - the case's own mkdtemp
    return out
