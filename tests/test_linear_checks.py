"""Checks whose work grew with the product of two sizes of their input, found by benchmarks/scaling.py: the claims
check formatted every placeholder finding for every claim of a message, and the gate-config check scanned every
added line of the config file for every setting it reports. Their work is counted here, not timed (the benchmark
measures the time)."""

from __future__ import annotations

import pytest

from sentinel import engine, sources
from sentinel.config import load_config
from sentinel.checks import claims as claims_check


class CountingLines(dict):
    reads = 0

    def __getitem__(self, n):
        CountingLines.reads += 1
        return super().__getitem__(n)

    def get(self, n, default=None):
        CountingLines.reads += 1
        return super().get(n, default)


@pytest.mark.parametrize("n", [40, 160])
def test_each_claim_is_judged_without_formatting_every_finding_again(repo, monkeypatch, n):
    repo.write("app.py", "x = 1\n")
    repo.add("app.py")
    repo.commit("base")
    repo.write("app.py", "".join(f"def f{i}():\n    raise NotImplementedError\n\n\n" for i in range(n)))
    repo.add("app.py")
    calls = []
    real = claims_check._where
    monkeypatch.setattr(claims_check, "_where", lambda f: calls.append(1) or real(f))
    message = "Parsing is done.\n\n" + "\n".join(f"Step {i} of the parser is done." for i in range(n))
    change = sources.staged(str(repo.path))
    verdict = engine.run(change, load_config(str(repo.path), None),
                         engine.RunOptions(message=message, only_checks=["placeholder", "claims"], jobs=1))
    done = [f for f in verdict.findings if f.rule == "SEN604"]
    assert done and f"+{n - 3}" in done[0].message, [f.message for f in done]  # n placeholders, 3 named
    assert len(calls) <= 3 * (n + 1), len(calls)  # each claim names three at most: n * n before


def _config_reads(repo, n: int) -> int:
    repo.write("pyproject.toml", '[tool.sentinel]\nfail-level = "error"\n')
    repo.add("pyproject.toml")
    repo.commit("base")
    repo.write("pyproject.toml", '[tool.sentinel]\nfail-level = "error"\n\n[tool.sentinel.per-path-ignores]\n'
               + "".join(f'"src/p{i}/*" = ["SEN301"]\n' for i in range(n)))
    repo.add("pyproject.toml")
    change = sources.staged(str(repo.path))
    [fc] = change.changeset.files
    fc.added = CountingLines(fc.added)
    CountingLines.reads = 0
    verdict = engine.run(change, load_config(str(repo.path), None), engine.RunOptions(only_checks=["gateconfig"], jobs=1))
    loosened = [f for f in verdict.findings if f.rule == "SEN801"]
    assert len(loosened) == n
    # every finding on the line that sets its own pattern
    assert sorted(f.line for f in loosened) == list(range(5, 5 + n))
    return CountingLines.reads


def test_each_config_setting_is_found_without_reading_every_line_again(tmp_path, installed_sentinel):
    from tests.conftest import GitRepo

    reads = {}
    for n in (40, 160):
        reads[n] = _config_reads(GitRepo(tmp_path / str(n), installed_sentinel), n)
    # a few reads a line, whatever the size: linear is 4 times the reads for 4 times the settings (it was 16)
    assert reads[160] <= 5 * reads[40], reads


class CountingNodes(list):
    yielded = 0

    def __iter__(self):
        for node in list.__iter__(self):
            CountingNodes.yielded += 1
            yield node


_BODIES = {  # each rule's own example, as one function: (check, the function's body)
    "SEN305": ("chaos", '    return re.match(r"(\\d+)\\.", version).group(1)\n\n\n'),
    "SEN404": ("placeholder", "    return 0.5  # placeholder\n\n\n"),
}


def _function_lookups(rule: str, n: int) -> int:
    """Functions of the file looked at while `rule` judges its n candidates, each in a function of its own."""
    from sentinel.config import Config
    from sentinel.diffparse import parse_diff
    from tests.conftest import new_file_diff

    check, body = _BODIES[rule]
    text = "import re\n\n\n" + "".join(f"def major_{i}(version):\n" + body for i in range(n))
    change = sources.Change(parse_diff(new_file_diff("example.py", text), source="t"), content_rev=None)
    CountingNodes.yielded = 0
    verdict = engine.run(change, Config(), engine.RunOptions(only_checks=[check], jobs=1))
    assert sum(f.rule == rule for f in verdict.findings) == n
    return CountingNodes.yielded


@pytest.mark.parametrize("rule", sorted(_BODIES))
def test_each_candidate_finds_its_function_without_scanning_every_function(monkeypatch, rule):
    # found by benchmarks/scaling.py: SEN305 (a possible None access) and SEN404 (a placeholder comment in a
    # function that does nothing) scanned every function of the file for the one around each candidate
    # (their own examples 16,000 times: SEN305 2.8 ms a line, 7x the cost at 4,000; SEN404 6 ms at 8,000)
    import ast

    from sentinel.checks.base import FileContext

    real = FileContext.nodes
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    monkeypatch.setattr(FileContext, "nodes", lambda self, *types: CountingNodes(real(self, *types))
                        if types == functions else real(self, *types))
    work = {n: _function_lookups(rule, n) for n in (40, 160)}
    assert work[160] <= 5 * work[40], work  # 16 times before


def test_what_a_docs_only_message_says_it_fixes_is_read_once_not_once_a_claim(monkeypatch):
    # found by benchmarks/scaling.py: each "fixes" claim of a change without code searched the whole message
    # for the names of its files again (SEN603's example 1,000 times: 1.7 ms a line, 4x the cost at 500)
    from sentinel.config import Config
    from sentinel.diffparse import parse_diff
    from tests.conftest import new_file_diff

    calls = []
    real = claims_check._says_what_it_touches
    monkeypatch.setattr(claims_check, "_says_what_it_touches", lambda ev: calls.append(1) or real(ev))
    change = sources.Change(parse_diff(new_file_diff("docs/ports.md", "# Ports\n\nA port is a number.\n"),
                                       source="t"), content_rev=None)
    message = "Fix the crash on an empty value.\n\n" + "\n".join(f"Fixes #{i}." for i in range(200))
    verdict = engine.run(change, Config(), engine.RunOptions(message=message, only_checks=["claims"], jobs=1))
    assert any(f.rule == "SEN603" for f in verdict.findings)
    assert len(calls) == 1, len(calls)
