"""Every rule's documented example must fire it and its counter-example must not."""

from __future__ import annotations

import pytest

from sentinel.checks import all_rules
from tests.conftest import codes, gate_new_file

RULES = all_rules()


def test_rule_codes_are_unique_and_stable_shape():
    seen = [r.code for r in RULES]
    assert len(seen) == len(set(seen))
    for r in RULES:
        assert r.code.startswith("SEN") and len(r.code) == 6 and r.code[3:].isdigit(), r.code
        assert r.summary and r.rationale and r.example and r.counter_example


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_example_fires(rule):
    verdict = gate_new_file(rule.example_path, rule.example, rule.example_config)
    assert rule.code in codes(verdict), f"{rule.code} example did not fire: {codes(verdict)}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_counter_example_is_clean(rule):
    verdict = gate_new_file(rule.example_path, rule.counter_example, rule.example_config)
    assert rule.code not in codes(verdict), f"{rule.code} counter-example fired"
