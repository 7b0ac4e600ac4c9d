"""The change digest is linear in the definitions a change rewrites: a removed signature finds the symbol it
belongs to through a queue per name, not by asking every symbol again (benchmarks/scaling.py measures speed:
SEN609's example 16,000 times was 0.54 ms a line against 0.07 at 2,000; this counts the work)."""

from __future__ import annotations

import ast
import difflib

import pytest

from sentinel.diffparse import parse_diff
from sentinel.intent import digest as digest_mod


class _CountingList(list):
    """A list that counts the items its iterations hand out."""

    handed = 0

    def __iter__(self):
        for item in super().__iter__():
            _CountingList.handed += 1
            yield item


@pytest.mark.parametrize("n", [10, 400])
def test_each_rewritten_signature_is_matched_once(n, monkeypatch):
    before = "def fetch(url):\n    return url, 10\n" * n
    after = "def fetch(url, timeout):\n    return url, timeout\n" * n
    body = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/app.py", "b/app.py", n=0))
    [fc] = parse_diff(f"diff --git a/app.py b/app.py\n{body}", source="test").files
    digest = digest_mod.Digest(symbols=_CountingList())
    _CountingList.handed = 0
    digest_mod._python_symbols(fc, ast.parse(after), digest)
    symbols = list.__iter__(digest.symbols)
    got = [(s.action, s.name, s.old_signature) for s in symbols]
    assert got == [("modified", "fetch", "def fetch(url):")] * n  # each rewritten, each with its old line
    assert _CountingList.handed <= 2 * n  # asked once each (every symbol for each removed def: n * n / 2)
