"""Fix planning is linear in the file and its findings: each fixer reads a file once for all of its findings,
and the plan, the unified diff, SARIF fixes and review suggestions are built from spans of the checked text
without running any fixer again. (Speed itself is measured by benchmarks/scaling.py, not here.)"""

from __future__ import annotations

import ast
import json
import subprocess

import libcst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel.fix import planner, splice
from tests.harden_util import assert_clean_exit, run_sentinel
from tests.test_fix import after, fix_staged, regate, stage


def functions(n: int) -> str:
    return "".join(f"def f{i}(x):\n    y = x + {i}   \n    try:\n        return y\n    except:\n        return None\n\n\n"
                   for i in range(n))


def _counting(monkeypatch, module, name: str) -> list:
    calls = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("n", [10, 120])
def test_a_file_is_parsed_a_fixed_number_of_times_however_many_findings_it_has(repo, monkeypatch, n):
    stage(repo, {"mod.py": functions(n)})
    from tests.test_fix import gate

    change, config, verdict = gate(repo)
    assert sorted({f.rule for f in verdict.findings}) == ["SEN205", "SEN301"]
    assert len(verdict.findings) == 2 * n
    cst_parses = _counting(monkeypatch, libcst, "parse_module")
    ast_parses = _counting(monkeypatch, ast, "parse")
    plan = planner.plan(change, verdict.findings, config)
    fp = after(plan, "mod.py")
    assert len(fp.fixes) == 2 * n and not fp.not_fixed
    # one libcst parse for the bare excepts; the AST read for their names, then to check the layout fixes keep
    # the code (before and after) and that all fixes together parse: the same for 10 findings as for 240
    assert len(cst_parses) == 1, len(cst_parses)
    assert len(ast_parses) <= 4, len(ast_parses)
    assert fp.after == functions(n).replace("   \n", "\n").replace("except:", "except Exception:")
    # each fix alone is its own line of the checked file
    for fx in fp.fixes:
        [edit] = fx.edits
        assert edit.first_line == edit.last_line == fx.finding.line
    assert set(regate(repo, fp)) == {"SEN302"}  # what is left: each handler swallows the error


def test_the_diff_of_thousands_of_fixes_applies_with_git(repo):
    stage(repo, {"mod.py": functions(400)})
    proc = run_sentinel("check", "--diff-fixes", "--no-memory", cwd=repo.path, timeout=600)
    assert_clean_exit(proc, 1)
    assert "800 finding(s) would be fixed in 1 file(s)" in proc.stderr
    patch = repo.path / "fixes.diff"
    patch.write_text(proc.stdout)
    subprocess.run(["git", "apply", str(patch)], cwd=repo.path, check=True)
    assert (repo.path / "mod.py").read_text() == functions(400).replace("   \n", "\n").replace(
        "except:", "except Exception:")


def test_sarif_fixes_of_every_finding_replace_only_its_own_line(repo):
    stage(repo, {"mod.py": functions(200)})
    proc = run_sentinel("check", "--format", "sarif", "--no-memory", cwd=repo.path, timeout=600)
    assert_clean_exit(proc, 1)
    results = json.loads(proc.stdout)["runs"][0]["results"]
    fixed = [r for r in results if r.get("fixes")]
    assert len(fixed) == 400
    for r in fixed:
        line = r["locations"][0]["physicalLocation"]["region"]["startLine"]
        [change] = r["fixes"][0]["artifactChanges"]
        [replacement] = change["replacements"]
        assert replacement["deletedRegion"] == {"startLine": line, "startColumn": 1, "endLine": line + 1,
                                                "endColumn": 1}


def test_a_fix_whose_spans_overlap_an_earlier_one_is_refused_with_the_other_named():
    from sentinel.fix.model import FilePlan, Outcome
    from sentinel.models import Finding, Severity

    def proposed(rule, line, spans, layout):
        f = Finding(rule=rule, check="x", severity=Severity.INFO, path="a.py", line=line, message="m")
        return planner._Proposed(finding=f, outcome=Outcome(spans=spans, description=rule), safety="safe",
                                 layout=layout)

    fp = FilePlan(path="a.py", before="", after="")
    items = [proposed("SEN205", 1, [(10, 12, "")], True), proposed("SEN205", 1, [(10, 12, "")], True),
             proposed("SEN301", 1, [(11, 11, " X")], False), proposed("SEN301", 2, [(12, 12, " Y")], False),
             proposed("SEN203", 3, [(20, 30, "z")], False), proposed("SEN203", 3, [(25, 25, "w")], False)]
    kept = planner._without_overlaps(items, fp)
    # an identical span is shared, an insertion inside a replacement clashes, one at its edge does not
    assert kept == [items[0], items[1], items[3], items[4]]
    assert [(f.line, why) for f, why in fp.not_fixed] == [
        (1, "its fix overlaps the fix of SEN205 at line 1"), (3, "its fix overlaps the fix of SEN203 at line 3")]


def test_fixes_that_fail_together_are_narrowed_to_the_culprits_within_a_bounded_number_of_checks():
    from sentinel.fix.model import FilePlan, Outcome
    from sentinel.models import Finding, Severity

    items = [planner._Proposed(finding=Finding(rule="SEN205", check="style", severity=Severity.INFO, path="a.py",
                                               line=n, message="m"),
                               outcome=Outcome(spans=[], description=""), safety="safe", layout=True)
             for n in range(1, 1001)]
    bad = {items[17].finding.line, items[600].finding.line}
    checks = []

    def valid(chosen):
        checks.append(len(chosen))
        return not any(p.finding.line in bad for p in chosen)

    fp = FilePlan(path="a.py", before="", after="")
    kept = planner._verified(items, fp, valid, "no")
    assert {f.line for f, _ in fp.not_fixed} == bad and len(kept) == 998
    assert len(checks) <= planner._MAX_CHECKS
    # everything bad: the budget runs out and the rest is refused, never checked one by one
    checks.clear()
    fp = FilePlan(path="a.py", before="", after="")
    assert planner._verified(items, fp, lambda chosen: checks.append(1) and False, "no") == []
    assert len(fp.not_fixed) == 1000 and len(checks) <= planner._MAX_CHECKS


_LINE = st.text(st.sampled_from("ab \t:"), max_size=6)


@st.composite
def texts_and_spans(draw):
    lines = draw(st.lists(_LINE, min_size=0, max_size=30))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=10)))
    spans = []
    for start, end in zip(cuts[::2], cuts[1::2]):
        spans.append((start, end, draw(st.text(st.sampled_from("xy\n"), max_size=5))))
    return text, spans


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=texts_and_spans())
def test_the_diff_made_from_spans_is_one_git_applies(tmp_path_factory, case):
    text, spans = case
    work = tmp_path_factory.mktemp("apply")
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "f.txt").write_bytes(text.encode())
    result = splice.apply(text, spans)
    diff = splice.unified_diff("f.txt", text, result, spans)
    if result == text:
        assert diff == ""
        return
    (work / "p.diff").write_bytes(diff.encode())
    subprocess.run(["git", "apply", "--unidiff-zero", "p.diff"], cwd=work, check=True, capture_output=True)
    assert (work / "f.txt").read_bytes() == result.encode()
    # and each edit of the spans, alone, replaces whole lines of the text as it was
    lines = splice.Lines(text)
    rebuilt, pos = [], 1
    for edit in splice.line_edits(lines, spans):
        rebuilt += [lines.line(n) for n in range(pos, edit.first_line)]
        rebuilt.append(edit.text)
        pos = edit.last_line + 1
    rebuilt += [lines.line(n) for n in range(pos, len(lines) + 1)]
    assert "".join(rebuilt) == result


def test_the_diff_made_from_spans_is_the_one_difflib_writes_for_ordinary_fixes():
    import difflib

    text = functions(12)
    spans = [(m, m + 3, "") for m in range(len(text)) if text.startswith("   \n", m)]
    spans += [(m + 6, m + 6, " Exception") for m in range(len(text)) if text.startswith("except:", m)]
    result = splice.apply(text, spans)
    expected = "".join(difflib.unified_diff(text.splitlines(True), result.splitlines(True), "a/m.py", "b/m.py"))
    assert splice.unified_diff("m.py", text, result, spans) == expected


def test_the_wildcard_fixer_reads_only_files_the_snapshot_holds(repo, monkeypatch):
    # Finding `mods.m3` tries app/mods/m3.py and app/mods/m3/__init__.py first: each read a git process, two of
    # the three a wildcard made were of files that are not there. The snapshot's paths are listed once instead.
    n = 12
    files = {f"mods/m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(n)}
    files.update({"mods/__init__.py": "",  # app/ is no package: its own directory is searched first
                  "app/handlers.py": "".join(f"from mods.m{i} import *\nvalue_{i} = f{i}()\n" for i in range(n))})
    stage(repo, files)
    from tests.test_fix import gate

    change, config, verdict = gate(repo)
    assert sum(f.rule == "SEN203" for f in verdict.findings) == n
    reads = []
    real = type(change).read
    monkeypatch.setattr(type(change), "read", lambda self, paths: reads.extend(paths) or real(self, paths))
    plan = planner.plan(change, verdict.findings, config, unsafe=True)
    fp = after(plan, "app/handlers.py")
    assert len(fp.fixes) == n and "from mods.m0 import f0\n" in fp.after
    assert all(path in files for path in reads), sorted(set(reads) - set(files))
    assert len(reads) <= n + 2  # the file itself, each module once (before: 3 n + 2)
