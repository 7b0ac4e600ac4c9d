"""Generate a large synthetic card corpus (default 135,000 cards) from the real ones, for the memory benchmark.

Deterministic (seeded) perturbation and recombination of the real cards' fields:
  - each synthetic card starts from a real "base" card (cycled in order) and a "donor" card drawn by the RNG;
  - problem_summary: the base summary with ~15% of its content words replaced by content words of the donor's
    summary (same length, same punctuation), so term statistics stay realistic while texts differ;
  - signals: 6-9 of the base's signals plus 4-7 of the donor's, de-duplicated, topped up from the base and cut
    to 10-16 entries;
  - tags: base components plus one donor component; about 1 card in 8 is relabelled to another language and
    1 in 10 gets a Sentinel rule code, so filters have something to select;
  - the resolution layer (root cause, fix, digest, verification) is the base's, which only browse reads;
  - ids are "<base id>-s<n>" (unique); provenance keeps the base's record with record_id suffixed.
The output passes the card checklist (the builder re-checks every card anyway). Not committed: it is ~400 MB.

    python scripts/generate_scale_corpus.py [--count 135000] [--seed 7]
        [--out benchmarks/results/scale/cards-135000.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "scale" / "cards-135000.jsonl"
_WORD_RE = re.compile(r"[A-Za-z]{4,}")
OTHER_LANGUAGES = ("go", "javascript", "typescript", "java", "rust", "ruby", "c++")
RULES = ("SEN101", "SEN201", "SEN301", "SEN303", "SEN401", "SEN501")


def load_real_cards(paths: list[Path]) -> list[dict]:
    sys.path.insert(0, str(ROOT))
    from sentinel.memory.cards.corpus import load_entries

    entries = load_entries(paths)
    cards = [e.raw for e in entries if e.valid]
    if not cards:
        raise SystemExit("no valid cards to generate from")
    return cards


def _mix_summary(base: str, donor: str, rng: random.Random, rate: float = 0.15) -> str:
    donor_words = [w for w in _WORD_RE.findall(donor) if w.islower()]
    if not donor_words:
        return base

    def swap(m: re.Match) -> str:
        word = m.group(0)
        if word.islower() and rng.random() < rate:
            return rng.choice(donor_words)
        return word

    return _WORD_RE.sub(swap, base)


def synthesize(real: list[dict], count: int, seed: int = 7):
    """Yield `count` synthetic cards, deterministically for a given corpus and seed."""
    rng = random.Random(seed)
    n = len(real)
    for i in range(count):
        base = real[i % n]
        donor = real[rng.randrange(n)]
        card = json.loads(json.dumps(base))
        card["id"] = f"{base['id']}-s{i:06d}"
        card["problem_summary"] = _mix_summary(base["problem_summary"], donor["problem_summary"], rng)
        sig = rng.sample(base["signals"], min(len(base["signals"]), rng.randint(6, 9)))
        sig += rng.sample(donor["signals"], min(len(donor["signals"]), rng.randint(4, 7)))
        # top up from the base when the two samples overlap, so every card keeps 10+ distinct signals
        sig += [s for s in base["signals"] if s not in sig]
        seen, signals = set(), []
        for s in sig:
            if s.lower() not in seen:
                seen.add(s.lower())
                signals.append(s)
        card["signals"] = signals[:rng.randint(10, 16)]
        tags = card["tags"]
        extra = [c for c in donor["tags"]["components"] if c not in tags["components"]][:1]
        tags["components"] = (tags["components"] + extra)[:5]
        if rng.random() < 0.125:
            tags["language"] = rng.choice(OTHER_LANGUAGES)
        if rng.random() < 0.1:
            tags["rules"] = [rng.choice(RULES)]
        prov = card["provenance"]
        if prov.get("record_id"):
            prov["record_id"] = f"{prov['record_id']}#s{i}"
        card["quality"] = {"governed_by": "scale-benchmark"}
        yield card


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=135_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cards", action="append", help="real card files (default: memory/cards/*.jsonl)")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    paths = [Path(p) for p in args.cards] if args.cards else sorted((ROOT / "memory" / "cards").glob("*.jsonl"))
    real = load_real_cards(paths)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        for card in synthesize(real, args.count, args.seed):
            fh.write(json.dumps(card, ensure_ascii=False) + "\n")
    print(f"wrote {args.count} cards generated from {len(real)} real cards to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
