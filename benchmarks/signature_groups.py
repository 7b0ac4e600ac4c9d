"""How the hypothesis store groups real findings: signatures (rule + the tokens that name the mechanism) against
the keying of Sentinel up to schema 4 (rule + normalized message + normalized line shape).

Needs ../shared/corpus/commits.jsonl (900 `.py` diffs of flask, requests and sqlalchemy with their messages) and
the rules' own examples; skips the corpus cleanly when it is absent. Every diff is gated in-process as
`sentinel check --diff -` would gate it (no file contents, default config); every finding of any severity is
keyed both ways. Per rule it prints findings, distinct keys before and after, and for each signature that joins
several old keys up to three of the lines it joined, to read: one mechanism, or several wrongly merged?

    python benchmarks/signature_groups.py [--shared DIR] [--limit N] [--show RULE]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def _old_key(rule: str, message: str, code: str) -> str:
    from sentinel.memory.hypotheses.signature import normalize_code, normalize_text
    from sentinel.redact import redact

    return f"{rule}|{normalize_text(redact(message))}|{normalize_code(redact(code))}"


def _findings(diffs):
    from sentinel import engine
    from sentinel.config import validate
    from sentinel.diffparse import parse_diff
    from sentinel.errors import SentinelError
    from sentinel.sources import Change

    cfg = validate({}, "bench")
    for diff, message in diffs:
        try:
            cs = parse_diff(diff, source="diff")
        except SentinelError:
            continue
        verdict = engine.run(Change(cs, content_rev=None), cfg,
                             engine.RunOptions(message=message or None, only_checks=["jail", "chaos", "placeholder"]))
        yield from verdict.findings


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(HERE.parent.parent / "shared"))
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--show", default="", help="print every joined group of this rule")
    args = ap.parse_args()
    from sentinel.memory.hypotheses.signature import signature

    corpus = Path(args.shared) / "corpus" / "commits.jsonl"
    if not corpus.exists():
        print(f"skipped: {corpus} is absent")
        return 0
    with open(corpus, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    if args.limit:
        rows = rows[:args.limit]
    diffs = [(r["diff"], (r.get("subject") or "") + "\n\n" + (r.get("body") or "")) for r in rows]
    per_rule: dict[str, dict] = collections.defaultdict(
        lambda: {"n": 0, "old": set(), "new": collections.defaultdict(set)})
    samples: dict[str, list[str]] = collections.defaultdict(list)
    for f in _findings(diffs):
        old, new = _old_key(f.rule, f.message, f.code), signature(f.rule, f.message, f.code)
        d = per_rule[f.rule]
        d["n"] += 1
        d["old"].add(old)
        d["new"][new].add(old)
        if len(samples[new]) < 3 and f.code.strip() not in samples[new]:
            samples[new].append(f.code.strip()[:90])
    print(f"{len(rows)} commits; findings keyed by rule+message+line shape (schema 4) and by signature (schema 5)\n")
    print(f"{'rule':8} {'findings':>8} {'keys before':>11} {'after':>6}  joined")
    total = [0, 0, 0]
    for rule in sorted(per_rule):
        d = per_rule[rule]
        joined = sum(1 for olds in d["new"].values() if len(olds) > 1)
        print(f"{rule:8} {d['n']:8} {len(d['old']):11} {len(d['new']):6}  {joined}")
        total = [total[0] + d["n"], total[1] + len(d["old"]), total[2] + len(d["new"])]
    print(f"{'all':8} {total[0]:8} {total[1]:11} {total[2]:6}\n")
    for rule in sorted(per_rule):
        for new, olds in sorted(per_rule[rule]["new"].items(), key=lambda kv: -len(kv[1])):
            if len(olds) > 1 and (args.show in ("", rule)):
                print(f"{new[:110]}  <- {len(olds)} keys; e.g. " + " | ".join(samples[new]))
                if not args.show:
                    break
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
