"""Workers are forked only as far as the memory budget pays for them (sentinel.parallel.affordable_jobs): a fork
holds about what the forking process holds, so for a 5 MB change one fork doubled the run's memory (10 x the
input summed over the processes, benchmarks/memory.py; the budget is 5 x)."""

from __future__ import annotations

import pytest

from sentinel import parallel
from sentinel.checks.base import FileContext
from sentinel.config import Config
from sentinel.diffparse import parse_diff
from sentinel.models import FilterMode
from tests.conftest import new_file_diff

MB = 1024 * 1024


def _contexts(files: int, lines: int) -> list[FileContext]:
    body = "".join(f"value_{i} = {i}  # a line of ordinary code, forty-odd bytes\n" for i in range(lines))
    diff = "".join(new_file_diff(f"pkg/m{k}.py", body) for k in range(files))
    return [FileContext(fc, Config(), FilterMode.ADDED, None) for fc in parse_diff(diff).files]


@pytest.fixture
def contexts():
    return _contexts(4, 25_000)  # 100K lines, about 5.9 MB


def test_the_input_is_measured_as_the_change_holds_it(contexts):
    size = sum(parallel._input_bytes(ctx) for ctx in contexts)
    assert size == sum(len(ctx.text) for ctx in contexts) and 5 * MB < size < 7 * MB


@pytest.mark.parametrize("resident_mb, expected", [(60, 1), (30, 1), (14, 2), (9, 3), (None, parallel.MAX_JOBS)])
def test_forks_fit_the_budget_of_five_times_the_input(contexts, monkeypatch, resident_mb, expected):
    monkeypatch.setattr(parallel, "_resident_bytes", lambda: resident_mb and resident_mb * MB)
    assert parallel.affordable_jobs(contexts) == expected
    if parallel.can_fork():
        monkeypatch.setattr(parallel, "available_cpus", lambda: 8)
        assert parallel.plan_jobs(None, contexts) == min(expected, len(contexts))
        assert parallel.plan_jobs(3, contexts) == 3  # asked for: as asked


def test_this_process_is_measured():
    if parallel._resident_bytes() is None:
        pytest.skip("no /proc/self/statm")
    assert 5 * MB < parallel._resident_bytes() < 4096 * MB
