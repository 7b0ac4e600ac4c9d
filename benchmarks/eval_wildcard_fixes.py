"""SEN203's fix on real code: the wildcard imports of the installed standard library and site-packages.

The replayed corpora of eval_fixes.py hold no reportable wildcard (well-kept projects use them only to
re-export from a package ``__init__``, which the rule leaves alone), so this replays the modules of this
interpreter that do: every ``.py`` file outside tests and package ``__init__`` files holding
``from m import *``. Each file's top-level package is copied into a fresh git repository, the file is
staged as added and gated whole; then its fixes are planned twice — plain ``--fix`` (safe) and with
``--unsafe-fixes`` — and for each it reports how many findings were fixed or refused and why, whether the
result compiles, whether the finding is gone when the gate runs again, and, for safe fixes, whether the
module still binds exactly the same names (its namespace, read statically as the fixer reads modules).
Nothing is imported from the replayed code.

    python benchmarks/eval_wildcard_fixes.py [--limit N]
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sentinel import engine, sources  # noqa: E402
from sentinel.config import load_config  # noqa: E402
from sentinel.fix import planner  # noqa: E402
from sentinel.fix.context import FixContext  # noqa: E402
from sentinel.fix.wildcard import _bound_by, _module_level, _Resolver  # noqa: E402
from sentinel.models import FilterMode  # noqa: E402

STAR = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)
SKIP_PARTS = {"test", "tests", "testing", "__pycache__", "_vendor", "vendor"}


def candidates() -> dict[tuple[str, str], list[str]]:
    """(root, top-level name) -> the paths (relative to root) of its modules holding a wildcard import."""
    roots = dict.fromkeys([sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]])
    out: dict[tuple[str, str], list[str]] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            parts = [] if rel_dir == "." else rel_dir.split(os.sep)
            if parts and (parts[0] == "site-packages" or parts[0].endswith((".dist-info", ".egg-info"))):
                dirnames[:] = []
                continue
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_PARTS and not d.startswith("test"))
            for name in sorted(filenames):
                if not name.endswith(".py") or name == "__init__.py" or name.startswith("test"):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    text = Path(path).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if STAR.search(text):
                    top = parts[0] if parts else name
                    out.setdefault((root, top), []).append(os.path.relpath(path, root))
    return out


def git(where: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=where, check=True, capture_output=True)


def build(root: str, top: str, files: list[str], where: Path) -> None:
    where.mkdir(parents=True)
    git(where, "init", "-q")
    git(where, "config", "user.email", "e@example.com")
    git(where, "config", "user.name", "eval")
    src = Path(root) / top
    if src.is_dir():
        for path in src.rglob("*.py"):
            rel = path.relative_to(root)
            if str(rel) in files or SKIP_PARTS & set(rel.parts):
                continue
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, where / rel)
    (where / ".keep").write_text("")
    git(where, "add", "-A")
    git(where, "commit", "-q", "-m", "package")
    for rel in files:
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(root) / rel, where / rel)
    git(where, "add", "-A")


def gate(where: Path):
    change = sources.staged(str(where))
    config = load_config(str(where), None)
    verdict = engine.run(change, config, engine.RunOptions(filter_mode=FilterMode.FILE, jobs=1, use_baseline=False))
    return change, config, verdict


def namespace(text: str, path: str, where: Path) -> set[str] | None:
    """Every name the module binds at module level, wildcards expanded as the fixer reads them."""
    tree = ast.parse(text)

    def read(rel: str) -> str | None:
        full = where / rel
        return full.read_text(encoding="utf-8") if full.is_file() else None

    resolver = _Resolver(FixContext(path, "python", set(), root=str(where), read=read))
    names: set[str] = set()
    for node in _module_level(tree.body):
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            try:
                names |= resolver.exports(*resolver.locate(node.level, node.module, path))
            except Exception:  # noqa: BLE001 - an unresolvable wildcard: the namespace is unknown
                return None
        else:
            names |= _bound_by(node)
    return names


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0, help="at most N packages")
    args = ap.parse_args()
    groups = candidates()
    seen = Counter()
    fixed = {"safe": Counter(), "unsafe": Counter()}
    refused = {"safe": Counter(), "unsafe": Counter()}
    kept_namespace = changed_namespace = unknown_namespace = 0
    broken: list[str] = []
    still = 0
    n = 0
    for (root, top), files in sorted(groups.items()):
        if args.limit and n >= args.limit:
            break
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            where = Path(tmp) / "r"
            build(root, top, files, where)
            change, config, verdict = gate(where)
            findings = [f for f in verdict.findings if f.rule == "SEN203"]
            seen["findings"] += len(findings)
            seen["files"] += len(files)
            plans = {mode: planner.plan(change, findings, config, unsafe=mode == "unsafe") for mode in fixed}
            for mode, plan in plans.items():
                for fp in plan.files:
                    for f, why in fp.not_fixed:
                        refused[mode][re.sub(r"`[^`]*`|\S+\.py\b|\b\d+\b", "…", why)[:110]] += 1
                    for fx in fp.fixes:
                        fixed[mode][fx.safety] += 1
                    if not fp.changed:
                        continue
                    try:
                        compile(fp.after, fp.path, "exec")
                    except SyntaxError as exc:
                        broken.append(f"{mode} {fp.path}: {exc}")
                    if mode == "safe":
                        before, after = namespace(fp.before, fp.path, where), namespace(fp.after, fp.path, where)
                        if before is None or after is None:
                            unknown_namespace += 1
                        elif before == after:
                            kept_namespace += 1
                        else:
                            changed_namespace += 1
                            print(f"namespace changed: {fp.path}: {sorted(before ^ after)[:5]}")
            safe = plans["safe"]
            for fp in safe.changed_files:
                (where / fp.path).write_text(fp.after, encoding="utf-8")
            if safe.changed_files:
                git(where, "add", "-A")
                _, _, again = gate(where)
                left = Counter(f.path for f in again.findings if f.rule == "SEN203")
                for fp in safe.changed_files:
                    before = sum(1 for f in findings if f.path == fp.path)
                    still += max(left[fp.path] - (before - len(fp.fixes)), 0)
    print(f"{n} packages, {seen['files']} modules with a wildcard import, {seen['findings']} SEN203 findings\n")
    for mode in fixed:
        print(f"{'--fix' if mode == 'safe' else '--fix --unsafe-fixes'}: fixed {dict(fixed[mode]) or 0}")
        for why, k in refused[mode].most_common(6):
            print(f"  refused {k}x: {why}")
    print(f"\nsafe fixes keeping the module's namespace: {kept_namespace}, changing it: {changed_namespace}, "
          f"not comparable: {unknown_namespace}")
    print(f"fixed findings still reported after --fix: {still}")
    print(f"results that do not compile: {len(broken)}")
    for b in broken[:10]:
        print("  " + b)
    return 1 if broken or changed_namespace else 0


if __name__ == "__main__":
    sys.exit(main())
