"""Govern ../shared/fixrecords through the same pipeline as `sentinel memory learn`, for review and evaluation.

For each repository's records file, the records that already have a bundled card (any memory/cards/*.jsonl with
that provenance.record_id) are left out, and the rest go through `sentinel memory learn --records FILE --license L
--out DIR/learned-<repo>.jsonl` — candidates, purification, the offline standardiser, checklist QC with the copy
check, dedup. The stage counts of each repository are printed (and kept in the cards' quality block).

The output does not go into the bundle (DIR defaults to benchmarks/results/governed, which git ignores): the
standardiser's cards shipped until issue 22 took 49 of the 87 slots shown on bug reports of projects outside the
bundle, 23 of them relevant even under a lenient reading, and none of the 151 in a top 3 had a fix that would fix
the reported bug (benchmarks/bundle_transfer.py). A card enters memory/cards only when it is written for its case
- problem, root cause and a fix that transfers - and measured there.

    python scripts/govern_fixrecords.py [--shared ../shared] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LICENSES = {"sqlalchemy/sqlalchemy": "MIT", "pytest-dev/pytest": "MIT", "aio-libs/aiohttp": "Apache-2.0",
            "pypa/pip": "MIT", "tox-dev/tox": "MIT", "pypa/virtualenv": "MIT", "pypa/setuptools": "MIT"}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "governed"),
                    help="directory for the learned-<repo>.jsonl files (default benchmarks/results/governed)")
    args = ap.parse_args()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    records_dir = Path(args.shared) / "fixrecords"
    if not records_dir.is_dir():
        print(f"skipped: {records_dir} not found")
        return 0
    covered = set()
    for path in (ROOT / "memory" / "cards").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                covered.add(json.loads(line)["provenance"].get("record_id"))
    sentinel = str(Path(sys.executable).parent / "sentinel")
    totals = {}
    for path in sorted(records_dir.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        repo = records[0]["repo"]
        todo = [r for r in records if r["id"] not in covered]
        name = repo.rsplit("/", 1)[-1]
        out = out_dir / f"learned-{name}.jsonl"
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as fh:
            for r in todo:
                fh.write(json.dumps(r) + "\n")
        proc = subprocess.run([sentinel, "memory", "learn", "--records", fh.name, "--license", LICENSES[repo],
                               "--out", str(out), "--json"], capture_output=True, text=True, cwd=ROOT)
        Path(fh.name).unlink()  # sentinel: ignore[SEN103] the temporary records file written above
        if proc.returncode:
            print(proc.stdout, proc.stderr)
            return 1
        counts = json.loads(proc.stdout)["runs"][0]["counts"]
        totals[repo] = {"records": len(records), "hand_written": len(records) - len(todo), **{
            k: counts[k] for k in ("candidates", "purified", "standardised", "qc_passed", "merged", "cards")},
            "dropped": counts["dropped"]}
        print(f"{repo}: {json.dumps(totals[repo])}", flush=True)
    keys = ("records", "hand_written", "candidates", "purified", "standardised", "qc_passed", "merged", "cards")
    print("\n| repository | " + " | ".join(keys) + " |\n|" + "---|" * (len(keys) + 1))
    for repo, t in totals.items():
        print(f"| {repo} | " + " | ".join(str(t[k]) for k in keys) + " |")
    print("| total | " + " | ".join(str(sum(t[k] for t in totals.values())) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
