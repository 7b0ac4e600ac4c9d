"""Claims are judged in time linear in the message: a judge that reads only the change's evidence judges all the
claims of its kind once, however often the message repeats them (judged once per claim, 800 repetitions of
"Make the counter thread-safe." took 27 s: benchmarks/scaling.py measures the speed, this counts the work)."""

from __future__ import annotations

import inspect
import re

import pytest

from sentinel.checks import claims
from tests.test_claims import claim_findings, gate

COUNTER = "class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def incr(self):\n        self.n += 1\n"


def test_the_judges_said_to_read_only_the_evidence_never_read_their_claim():
    for kind, judge in claims._JUDGES.items():
        reads = "claim." in inspect.getsource(judge)
        assert reads == (kind in claims._READS_CLAIM), kind


@pytest.mark.parametrize("kind, sentence", [("thread_safe", "Make the counter thread-safe."),
                                            ("performance", "Speed up port parsing.")])
def test_a_repeated_claim_is_judged_once(monkeypatch, kind, sentence):
    calls = []
    real = claims._JUDGES[kind]
    monkeypatch.setitem(claims._JUDGES, kind, lambda claim, ev: calls.append(claim) or real(claim, ev))
    once = claim_findings(gate(sentence, {"app.py": COUNTER}))
    assert len(calls) == 1 and once
    calls.clear()
    many = claim_findings(gate("\n".join([sentence] * 60), {"app.py": COUNTER}))
    assert len(calls) == 1  # judged for every claim: 60 scans of the change and of the message
    assert [(f.rule, f.severity, re.sub(r" \(also line [^)]*\)", "", f.message)) for f in many] == \
        [(f.rule, f.severity, f.message) for f in once]
    assert "(also line 2, 3, 4" in many[0].message  # the other claims of the kind are named, as before
