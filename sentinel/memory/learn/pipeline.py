"""The governance pipeline: candidates -> purified -> standardised -> QC passed -> dedup/merge -> store.

Every stage is counted; the counts are printed, kept in the LearnedCardStore's run log and shown by
`sentinel memory stats`. Sources are iterables of Candidate, so git history, GitHub and fix records share all
of it.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from sentinel.memory.learn import dedup as dedup_mod
from sentinel.memory.learn.model import Candidate
from sentinel.memory.learn.purify import DEFAULT_TAU, purify
from sentinel.memory.learn.qc import MAX_ROUNDS, qc, refine_deterministic
from sentinel.memory.learn.standardise import standardise
from sentinel.redact import redact_tree

STAGES = ("candidates", "purified", "standardised", "qc_passed", "cards")


@dataclass
class Options:
    tau: float = DEFAULT_TAU
    card_source: str = "learned"  # provenance.source of the cards ("fixrecord" for the bundled corpus)
    max_rounds: int = MAX_ROUNDS
    dedup_threshold: float = dedup_mod.THRESHOLD
    llm: object | None = None  # an LLMStandardiser, or None for the deterministic one
    progress: Callable[[str], None] | None = None


@dataclass
class Result:
    cards: list[dict] = field(default_factory=list)  # new cards after dedup
    updated: list[dict] = field(default_factory=list)  # stored cards that absorbed a near duplicate
    counts: dict = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)  # purification reasons
    qc_problems: Counter = field(default_factory=Counter)  # why cards failed QC (field of each problem)
    cost: float | None = None
    seconds: float = 0.0


class Progress:
    """A line on stderr every few seconds on long runs (and a final one), nothing on short ones."""

    def __init__(self, enabled: bool, every: float = 2.0):
        self.enabled = enabled
        self.every = every
        self.start = time.monotonic()
        self.last = self.start

    def __call__(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.enabled and (force or now - self.last >= self.every):
            self.last = now
            sys.stderr.write(f"sentinel: learn: {text} ({now - self.start:.0f}s)\n")
            sys.stderr.flush()


_OWN_KEYS = frozenset({"id"})


def run(cands: Iterable[Candidate], opts: Options, existing: list[dict] | None = None,
        source_counts: dict | None = None) -> Result:
    """Run every stage over the candidates. source_counts: the source's own counts (commits listed, pull
    requests read...), filled while the candidates are read and kept with the stage counts."""
    started = time.perf_counter()
    res = Result()
    counts = Counter({s: 0 for s in STAGES})
    cards: list[dict] = []
    refine = opts.llm.refine if opts.llm is not None else refine_deterministic
    for cand in cands:
        counts["candidates"] += 1
        if opts.progress:
            opts.progress(f"{counts['candidates']} candidates, {counts['qc_passed']} cards so far")
        verdict = purify(cand, opts.tau)
        if not verdict.keep:
            res.dropped[verdict.reason] += 1
            continue
        counts["purified"] += 1
        if opts.llm is not None:
            card = opts.llm.standardise(cand, verdict.relevance, source=opts.card_source)
        else:
            card = standardise(cand, verdict.relevance, source=opts.card_source)
        if card is None:
            counts["standardise_failed"] += 1
            continue
        counts["standardised"] += 1
        passed, problems, rounds = qc(card, cand, refine=refine, max_rounds=opts.max_rounds)
        if passed is None:
            for p in problems:
                res.qc_problems[p.split(":", 1)[0]] += 1
            continue
        passed.setdefault("quality", {})["refine_rounds"] = rounds
        counts["qc_passed"] += 1
        counts["refined"] += 1 if rounds else 0
        cards.append(passed)
    new, updated, merged = dedup_mod.dedup(cards, existing, threshold=opts.dedup_threshold)
    # Cards are stored (and shared through a team database): whatever a commit carried goes through the one
    # redaction path first; ids are ours.
    new, updated = [redact_tree(c, _OWN_KEYS) for c in new], [redact_tree(c, _OWN_KEYS) for c in updated]
    counts["merged"] = merged
    counts["cards"] = len(new)
    res.cards, res.updated = new, updated
    res.counts = dict(counts)
    if source_counts:
        res.counts["source"] = dict(source_counts)
    res.counts["dropped"] = dict(res.dropped)
    res.counts["qc_failed"] = dict(res.qc_problems)
    res.cost = getattr(opts.llm, "cost", None) if opts.llm is not None else None
    res.seconds = time.perf_counter() - started
    return res


def stage_line(counts: dict) -> str:
    src = counts.get("source") or {}
    head = []
    if "commits" in src:
        head = [f"{src['commits']} commits"]
    elif "pull_requests" in src:
        head = [f"{src['pull_requests']} pull requests"]
    parts = head + [f"{counts.get('candidates', 0)} candidates", f"{counts.get('purified', 0)} purified",
             f"{counts.get('standardised', 0)} standardised", f"{counts.get('qc_passed', 0)} QC passed",
             f"{counts.get('cards', 0)} after merge ({counts.get('merged', 0)} merged)"]
    return " -> ".join(parts)
