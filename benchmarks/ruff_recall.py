"""Recall against ruff on the rules both have, on product code: does Sentinel report every line ruff reports?

For each Python file of ../shared/corpus/noise (the content after each commit, product code only: no tests, docs,
examples), ruff is run with the rules that have a Sentinel equivalent, and the whole file is gated as a new file
(the same line length as ruff's, so SEN202 is on):

    E722 -> SEN301   S307/S102 -> SEN303   S602/S604/S605 (non-literal commands) -> SEN306   E501 -> SEN202

A ruff finding is recalled when Sentinel reports the mapped rule on the same line (any severity). Ruff's "seems safe"
variants of S602/S605 (a literal command) and S604 with a literal are not in the overlap: SEN306 leaves literal
commands alone by design. Needs `ruff` on PATH; skips cleanly without it or without the corpus.

    python benchmarks/ruff_recall.py [--shared ../shared] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MAPPING = {"E722": "SEN301", "S307": "SEN303", "S102": "SEN303", "S602": "SEN306", "S604": "SEN306",
           "S605": "SEN306", "E501": "SEN202"}
LINE_LENGTH = 100
SAFE_VARIANT = ("seems safe",)


def _files(shared: Path, limit: int | None):
    from sentinel.config import Config
    from sentinel.roles import RoleResolver

    by_path = RoleResolver(Config()).by_path
    seen = set()
    for path in sorted((shared / "corpus" / "noise").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                commit = json.loads(line)
                for f in commit["files"]:
                    text, rel = f.get("after"), f["path"]
                    if not text or not rel.endswith(".py") or (commit["repo"], rel) in seen:
                        continue
                    if by_path(rel) is not None:  # product code: no other role's pattern claims it
                        continue
                    seen.add((commit["repo"], rel))
                    yield commit["repo"], rel, text
                    if limit and len(seen) >= limit:
                        return


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=HERE.parent.parent / "shared")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args()
    ruff = shutil.which("ruff")
    if ruff is None or not (args.shared / "corpus" / "noise").is_dir():
        print("skipped: needs `ruff` on PATH and ../shared/corpus/noise")
        return 0
    from tests.conftest import gate_new_file

    expected = recalled = 0
    missed = []
    per_rule: dict[str, list[int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repo, rel, text in _files(args.shared, args.limit):
            target = Path(tmp) / "f.py"
            target.write_text(text, encoding="utf-8")
            proc = subprocess.run([ruff, "check", "--isolated", "--select", ",".join(MAPPING), "--line-length",
                                   str(LINE_LENGTH), "--output-format", "json", "--exit-zero", str(target)],
                                  capture_output=True, text=True, check=False)
            wanted = [(d["code"], d["location"]["row"]) for d in json.loads(proc.stdout or "[]")
                      if d.get("code") in MAPPING and not any(s in d["message"] for s in SAFE_VARIANT)
                      and not (d["code"] == "S604" and _literal_command(text, d["location"]["row"]))]
            if not wanted:
                continue
            verdict = gate_new_file(rel, text, {"style": {"line-length": LINE_LENGTH}},
                                    only_checks=["chaos", "style"])
            got = {(f.rule, f.line) for f in verdict.findings} | {
                (f.rule, n) for f in verdict.findings if f.end_line for n in range(f.line, f.end_line + 1)}
            for code, row in wanted:
                hit = (MAPPING[code], row) in got
                expected += 1
                recalled += hit
                per_rule.setdefault(code, [0, 0])[0] += 1
                per_rule[code][1] += hit
                if not hit:
                    missed.append(f"{repo} {rel}:{row} {code}")
    print("| ruff rule | Sentinel rule | ruff findings | recalled |\n|---|---|---|---|")
    for code, (n, hit) in sorted(per_rule.items()):
        print(f"| {code} | {MAPPING[code]} | {n} | {hit} |")
    print(f"\nrecall {recalled}/{expected}" + (f" = {recalled / expected:.1%}" if expected else ""))
    for m in missed[:50]:
        print("missed:", m)
    return 0


def _literal_command(text: str, row: int) -> bool:
    """S604 on a call whose first argument is a plain string literal (outside the overlap, as for S602)."""
    import ast

    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno == row and node.args:
            return isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, (str, bytes))
    return False


if __name__ == "__main__":
    sys.exit(main())
