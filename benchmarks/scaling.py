"""Is every rule, every output format and the fix planner linear in its input?

Feeds each rule its own triggering construct — its documented example (with its message, task and the file
before the change, when it has them), repeated 1K, 2K, 4K, 8K and 16K times in one change — and times the gate
with only that rule's check; then renders the verdict of a change that trips several rules in every output
format, and plans the fixes of every fixable rule. For each it prints the cost per line (per finding for the
formats) at every size, as the marginal cost over the smallest size (so that fixed costs, imports and model
loads, do not count), and its spread: linear means flat, within +-30% of the median. Quadratic work shows as a
cost per line that doubles with each size.

In-process and serial (--jobs 1), the cyclic GC off as in the console script, each size timed --rounds times
interleaved, the fastest kept: the machine's load hits every size alike. No shared data needed.

    nice python benchmarks/scaling.py [--sizes 1000,2000,4000,8000,16000] [--rounds 2] [--rules SEN301,SEN304]
                                      [--only rules|formats|fixes]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TOLERANCE = 0.30
# A change that trips several rules on every repetition: what the reporters get to render.
MIXED = ('def handler_{i}(raw, session):   \n'
         '    try:\n'
         '        value = eval(raw)  # TODO: parse this safely, then pass it to the session of the request\n'
         '    except:\n'
         '        return None\n'
         '    password_{i} = "Zq7-s3cret-pw-{i}"\n'
         '    return session.run(value, password_{i})\n\n\n')


def _lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _ended(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def _diff(path: str, before: str | None, after: str) -> str:
    """The change as a diff that shows the whole file (its unchanged lines as context, when one side is short
    enough for difflib; else one hunk replacing every line); a new file when `before` is None."""
    old = before.split("\n")[:-1] if before else []
    new = after.split("\n")[:-1]
    if old and min(len(old), len(new)) < 100:
        import difflib

        body = "".join(difflib.unified_diff([ln + "\n" for ln in old], [ln + "\n" for ln in new], f"a/{path}",
                                            f"b/{path}", n=len(old) + len(new)))
        return f"diff --git a/{path} b/{path}\n{body}"
    head = f"diff --git a/{path} b/{path}\n" + ("new file mode 100644\n--- /dev/null\n" if before is None
                                                 else f"--- a/{path}\n") + f"+++ b/{path}\n"
    return (head + f"@@ -{1 if old else 0},{len(old)} +1,{len(new)} @@\n" + "".join(f"-{ln}\n" for ln in old)
            + "".join(f"+{ln}\n" for ln in new))


# Rules whose example cannot simply repeat in one file: a TOML table declared twice is invalid, one tab line in
# every four is a file that mixes both styles. Their construct, as (before, after) templates of one repetition.
CONSTRUCTS = {  # code: (the file before, a header written once, the template repeated)
    "SEN801": ('[tool.sentinel]\nfail-level = "error"\n', '[tool.sentinel]\nfail-level = "error"\n\n'
               '[tool.sentinel.per-path-ignores]\n', '"src/p{i}/*" = ["SEN301"]\n'),
    "SEN201": (None, "", "function f{i}(p) {\n    const a = p;\n    const b = a;\n    const c = b;\n"
                         "    if (a) {\n        return b;\n    }\n\treturn c;\n}\n"),
}


def _repeated(template: str, reps: int) -> str:
    return "".join(template.replace("{i}", str(i)) for i in range(reps))


def rule_input(rule, reps: int) -> tuple[str, str | None, str | None, int]:
    """(diff, message, task, lines) of `reps` repetitions of the rule's example."""
    before, after, message, task, lines = rule_files(rule, reps)
    return _diff(rule.example_path, before, after), message, task, lines


def rule_files(rule, reps: int) -> tuple[str | None, str, str | None, str | None, int]:
    """(the file before, after, message, task, lines) of `reps` repetitions of the rule's example."""
    if rule.code in CONSTRUCTS or rule.code == "SEN802":
        # SEN802 (tightened) is SEN801's change the other way: every ignore taken out
        before, header, template = CONSTRUCTS["SEN801" if rule.code == "SEN802" else rule.code]
        after = header + _repeated(template, reps)
        if rule.code == "SEN802":
            before, after = after, before
        lines = _lines(after) + (_lines(before) if before else 0)
        return before, after, None, None, lines
    after = _ended(rule.example) * reps
    before = _ended(rule.example_before) * reps if rule.example_before is not None else None
    message = "\n".join([rule.example_message] * reps) if rule.example_message else None
    task = " ".join([rule.example_task] * reps) if rule.example_task else None
    lines = _lines(after) + (_lines(before) if before else 0) + (_lines(message) if message else 0)
    return before, after, message, task, lines


def time_rule(rule, reps: int) -> tuple[float, int, int]:
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change

    from sentinel import sources

    before, after, message, task, lines = rule_files(rule, reps)
    config = validate({k: dict(v) if isinstance(v, dict) else v for k, v in rule.example_config.items()}, "bench")
    opts = engine.RunOptions(only_checks=[rule.check], message=message, task=task, jobs=1)
    if before is not None:  # a modification: as a hook sees it, the file's content read from git
        where = Path(tempfile.mkdtemp(prefix="sentinel-scaling-"))
        _repo_with({rule.example_path: before}, where, commit=True)
        (where / rule.example_path).write_text(after)
        subprocess.run(["git", "add", "-A"], cwd=where, check=True)
        start = time.perf_counter()
        verdict = engine.run(sources.staged(str(where)), config, opts)
    else:
        cs = parse_diff(_diff(rule.example_path, None, after), source="bench")
        start = time.perf_counter()
        verdict = engine.run(Change(cs, content_rev=None), config, opts)
    took = time.perf_counter() - start
    return took, lines, sum(1 for f in verdict.findings if f.rule == rule.code)


def _verdict_of(text: str):
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.sources import Change

    cs = parse_diff(_diff("app/handlers.py", None, text), source="bench")
    return engine.run(Change(cs, content_rev=None), validate({}, "bench"), engine.RunOptions(jobs=1))


_GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x",
            "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _repo_with(files: dict[str, str], where: Path, commit: bool = False) -> Path:
    env = {**os.environ, **_GIT_ENV}
    subprocess.run(["git", "init", "-q", str(where)], check=True, env=env)
    for rel, text in files.items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        (where / rel).write_text(text)
    if any(rel.startswith("mods/") for rel in files):
        (where / "mods" / "__init__.py").write_text("")
    subprocess.run(["git", "add", "-A"], cwd=where, check=True, env=env)
    if commit:
        subprocess.run(["git", "commit", "-qm", "before"], cwd=where, check=True, env=env)
    return where


def _spread(costs: dict[int, float]) -> float:
    med = statistics.median(costs.values())
    return max(abs(c / med - 1) for c in costs.values()) if med > 0 else 0.0


def _marginal(times: dict[int, float], units: dict[int, int]) -> dict[int, float]:
    """Cost per unit above the smallest size: (t(N) - t(smallest)) / (units(N) - units(smallest))."""
    sizes = sorted(times)
    base = sizes[0]
    return {n: (times[n] - times[base]) / max(units[n] - units[base], 1) for n in sizes[1:]}


def _report(label: str, times: dict[int, float], units: dict[int, int], extra: str = "") -> bool:
    costs = _marginal(times, units)
    spread = _spread(costs)
    ok = spread <= TOLERANCE
    cells = "  ".join(f"{n:>6} {c * 1e6:8.2f}" for n, c in costs.items())
    print(f"{label:<34} {cells}   spread {spread:5.0%} {'ok' if ok else 'NOT LINEAR'}{extra}")
    return ok


def run_rules(sizes: list[int], rounds: int, only: set[str] | None) -> list[str]:
    from sentinel.checks import all_rules

    os.chdir(tempfile.mkdtemp(prefix="sentinel-scaling-"))  # a diff's files are read from the working directory
    bad = []
    print("rules: microseconds per line of input, marginal over the smallest size (gate with the rule's check only)")
    for rule in all_rules():
        if only and rule.code not in only:
            continue
        if rule.check == "llm":
            print(f"{rule.code} {rule.name:<27} skipped: its cost is the model's (an LLM server answers it)")
            continue
        times: dict[int, float] = {}
        units: dict[int, int] = {}
        found: dict[int, int] = {}
        time_rule(rule, sizes[0])  # imports, models and caches: not part of any size
        for _ in range(rounds):
            for n in sizes:
                took, lines, hits = time_rule(rule, n)
                times[n] = min(times.get(n, took), took)
                units[n], found[n] = lines, hits
        extra = f"   findings {found[sizes[0]]}..{found[sizes[-1]]}"
        if not _report(f"{rule.code} {rule.name}", times, units, extra):
            bad.append(rule.code)
    return bad


def run_formats(sizes: list[int], rounds: int) -> list[str]:
    from sentinel import report

    verdicts = {n: _verdict_of("".join(MIXED.format(i=i) for i in range(n // 8))) for n in sizes}
    units = {n: len(v.findings) for n, v in verdicts.items()}
    print(f"formats: microseconds per finding ({units[sizes[0]]:,}..{units[sizes[-1]]:,} findings), marginal")
    bad = []
    for fmt in report.FORMATS:
        times: dict[int, float] = {}
        report.render(verdicts[sizes[0]], fmt)  # imports: not part of any size
        for _ in range(rounds):
            for n in sizes:
                start = time.perf_counter()
                report.render(verdicts[n], fmt)
                took = time.perf_counter() - start
                times[n] = min(times.get(n, took), took)
        if not _report(f"format {fmt}", times, units):
            bad.append(fmt)
    return bad


def run_fixes(sizes: list[int], rounds: int) -> list[str]:
    from sentinel import engine, sources
    from sentinel.config import load_config
    from sentinel.fix import planner

    print("fix planner: microseconds per fixed finding, marginal (each fixable rule's fix, and all together)")
    constructs = {
        "SEN205 trailing whitespace": "def f_{i}(x):   \n    return x\n\n\n",
        "SEN204 line endings": "def f_{i}(x):\r\n    return x\n\n\n",
        "SEN201 indentation": CONSTRUCTS["SEN201"][2],
        "SEN301 bare except": "def f_{i}(x):\n    try:\n        return x()\n    except:\n        return None\n\n\n",
        "SEN303 eval": "def f_{i}(x):\n    return eval(x)\n\n\n",
        "SEN203 wildcard import": "from mods.m{i} import *\nvalue_{i} = f{i}()\n",
        "all of them (issue 24's N3 case)": ("def f_{i}(x):\n    y = x + 1   \n    try:\n        return eval(y)\n"
                                             "    except:\n        return None\n\n\n"),
    }
    bad = []
    with tempfile.TemporaryDirectory(prefix="sentinel-scaling-") as tmp:
        for label, construct in constructs.items():
            times: dict[int, float] = {}
            units: dict[int, int] = {}
            for r in range(rounds):
                for n in sizes:
                    reps = max(n // max(construct.count("\n"), 1), 1)
                    path = "app/handlers.js" if label.startswith("SEN201") else "app/handlers.py"
                    extra = {f"mods/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(reps)} \
                        if label.startswith("SEN203") else {}
                    repo = _repo_with({path: "".join(construct.replace("{i}", str(i)) for i in range(reps)), **extra},
                                      Path(tmp) / f"{label.split()[0]}-{n}-{r}")
                    change = sources.staged(str(repo))
                    config = load_config(change.changeset.root, None)
                    verdict = engine.run(change, config, engine.RunOptions(jobs=1))
                    start = time.perf_counter()
                    plan = planner.plan(change, verdict.findings, config, unsafe=True, require_worktree=False)
                    "".join(planner.unified_diff(fp) for fp in plan.changed_files)
                    took = time.perf_counter() - start
                    times[n] = min(times.get(n, took), took)
                    units[n] = len(plan.fixed)
            extra = f"   fixed {units[sizes[0]]}..{units[sizes[-1]]}"
            if not _report(label, times, units, extra):
                bad.append(label)
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,2000,4000,8000,16000", help="repetitions (formats, fixes: lines)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rules", default="", help="only these rule codes, comma-separated")
    ap.add_argument("--only", choices=("rules", "formats", "fixes"))
    args = ap.parse_args()
    # As the console script runs (sentinel/cli.py): with the cyclic GC on, its full collections walk every AST
    # node alive and the cost per line of a large input grew 2-3x with noise, in a process no user runs.
    gc.disable()
    sizes = [int(s) for s in args.sizes.split(",")]
    only = {c.strip().upper() for c in args.rules.split(",") if c.strip()} or None
    bad: list[str] = []
    if args.only in (None, "rules"):
        bad += run_rules(sizes, args.rounds, only)
    if args.only in (None, "formats"):
        bad += run_formats(sizes, args.rounds)
    if args.only in (None, "fixes"):
        bad += run_fixes(sizes, args.rounds)
    print(f"not linear within +-{TOLERANCE:.0%}: {', '.join(bad) if bad else 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
