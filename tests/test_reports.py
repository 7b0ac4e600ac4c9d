"""Reporters: text, JSON, SARIF, GitHub workflow commands and Markdown, on hand-built and real verdicts.

SARIF is validated against the official OASIS 2.1.0 schema (tests/data, offline) and JSON against
the schema pydantic generates from the models, tightened so an undocumented field fails.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from referencing import Registry
from referencing.exceptions import NoSuchResource

from sentinel.baseline import fingerprint
from sentinel.models import (CheckResult, CheckStatus, EarlierAttempt, Finding, NotChecked, RecallGroup,
                             RecurringPattern, Severity, SimilarFix, Verdict)
from sentinel.record_schema import adapter as TypeAdapter
from sentinel.report import github, jsonfmt, markdown, render, sarif, terminal
from sentinel.rules import Rule
from tests.conftest import PROJECT, gate_new_file
from tests.sarif_rules import sarif_for

DATA = Path(__file__).resolve().parent / "data"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Built at run time so this file never contains a credential-shaped literal.
TOKEN = "ghp_" + "Ab3" * 12


def _f(rule, check, sev, path, line, message, **kw) -> Finding:
    return Finding(rule=rule, check=check, severity=Severity(sev), path=path, line=line, message=message, **kw)


def sample_verdict(**overrides) -> Verdict:
    f1 = _f("SEN301", "chaos", "error", "src/app.py", 12, "bare `except:` catches everything", column=5,
            code="except:", hint="catch the exceptions you expect")
    f2 = _f("SEN202", "style", "warning", "src/app.py", 40, "line too long (130 > 120)", code="x = 1  # long")
    f3 = _f("SEN401", "placeholder", "info", "lib/util.js", 3, "TODO marker in a comment", column=4,
            code="// TODO: later", end_line=4)
    f4 = _f("SEN601", "claims", "error", "", None, "message claims all tests pass; no test evidence")
    checks = [CheckResult("jail", CheckStatus.PASSED, duration_ms=0.4),
              CheckResult("style", CheckStatus.FAILED, [f2]),
              CheckResult("chaos", CheckStatus.FAILED, [f1]),
              CheckResult("placeholder", CheckStatus.PASSED, [f3]),
              CheckResult("drift", CheckStatus.SKIPPED, reason="no task"),
              CheckResult("claims", CheckStatus.FAILED, [f4])]
    recall = [RecallGroup("SEN301", "bare-except", 1,
                          similar=[SimilarFix("card-7", 0.83, "narrowed a bare except in the fetcher",
                                              "catch OSError")],
                          patterns=[RecurringPattern("SEN301:except:", "SEN301", "high", 4, 3, "abc1234")])]
    fields = dict(passed=False, fail_level=Severity.WARNING, checks=checks, findings=[f4, f1, f2, f3],
                  source="staged", files_changed=3, lines_added=55,
                  not_checked=[NotChecked("assets/logo.png", "binary file")], suppressed=1, baselined=2,
                  duration_ms=3.5, recall=recall, recall_note="lexical search only")
    fields.update(overrides)
    return Verdict(**fields)


def passed_verdict() -> Verdict:
    return Verdict(passed=True, fail_level=Severity.ERROR, checks=[CheckResult("jail", CheckStatus.PASSED)],
                   findings=[], source="range main...HEAD", files_changed=2, lines_added=10)


def errored_verdict(**overrides) -> Verdict:
    fields = dict(checks=[CheckResult("jail", CheckStatus.PASSED),
                          CheckResult("chaos", CheckStatus.ERROR, reason="ValueError: boom while checking src/app.py")],
                  findings=[], recall=[], recall_note="")
    fields.update(overrides)
    return sample_verdict(**fields)


def sample_rules() -> dict:
    def rule(code, name, check, sev, example="x = 1\n", counter="y = 2\n", path="example.py"):
        return Rule(code, name, check, Severity(sev), summary=f"{name} summary", rationale=f"{name} rationale",
                    example=example, counter_example=counter, hint=f"fix {name}", example_path=path)
    return {r.code: r for r in (
        rule("SEN101", "banned-import", "jail", "error"),
        rule("SEN202", "line-too-long", "style", "warning"),
        rule("SEN301", "bare-except", "chaos", "error", "try:\n    f()\nexcept:\n    pass\n",
             "try:\n    f()\nexcept OSError:\n    log()\n"),
        rule("SEN401", "todo-marker", "placeholder", "info", "// TODO: ```later```\n", "// see #12\n", "a.js"),
    )}


# --- text ------------------------------------------------------------------------------------------


def test_text_groups_by_file_with_location_severity_rule_code_and_hint():
    out = render(sample_verdict(), "text", color=False)
    lines = out.splitlines()
    assert lines.count("src/app.py") == 1 and lines.count("lib/util.js") == 1
    block = out[out.index("src/app.py"):out.index("lib/util.js")]
    assert re.search(r"12:5\s+error\s+SEN301\s+bare `except:` catches everything", block)
    assert re.search(r"\n\s+40\s+warning\s+SEN202", block)
    assert "| except:" in block and "hint: catch the exceptions you expect" in block
    assert "(whole change)" in out and re.search(r"\n\s+-\s+error\s+SEN601", out)


def test_text_check_status_line_not_checked_and_one_summary_line_last():
    out = render(sample_verdict(), "text", color=False)
    lines = out.rstrip("\n").splitlines()
    assert ("checks: jail passed, style failed (1), chaos failed (1), placeholder passed (1 below fail-level), "
            "drift skipped (no task), claims failed (1)") in lines
    assert "assets/logo.png: not checked (binary file)" in lines
    assert lines[-1].startswith("sentinel: failed - 2 errors, 1 warning, 1 info in 3 file(s), 55 added line(s)")
    assert "(1 suppressed inline, 2 in baseline, 1 file(s) not checked)" in lines[-1]
    assert sum(line.startswith("sentinel:") for line in lines) == 1


def test_text_colour_only_when_asked():
    plain = render(sample_verdict(), "text", color=False)
    coloured = render(sample_verdict(), "text", color=True)
    assert "\x1b" not in plain
    assert ANSI.search(coloured)
    assert ANSI.sub("", coloured) == plain


def test_text_passed_and_errored():
    out = render(passed_verdict(), "text")
    assert out.splitlines()[-1].startswith("sentinel: passed - no findings in 2 file(s)")
    out = render(errored_verdict(), "text")
    assert "checks: jail passed, chaos crashed" in out
    assert "error: check 'chaos' crashed: ValueError: boom while checking src/app.py" in out
    assert out.splitlines()[-1].startswith("sentinel: error - ")
    assert "1 check crashed" in out.splitlines()[-1]


def test_text_recall_is_short():
    groups = [RecallGroup(f"SEN30{i}", f"group {i}", 2,
                          similar=[SimilarFix(f"c{i}{j}", 0.9, "x" * 500, "y" * 500) for j in range(10)],
                          patterns=[RecurringPattern(f"s{j}", "SEN301", "low", 2, 2) for j in range(10)])
              for i in range(8)]
    out = render(sample_verdict(recall=groups), "text")
    recall = out[out.index("Experience memory"):out.index("checks:")]
    assert len(recall.strip().splitlines()) <= 30
    assert max(len(line) for line in recall.splitlines()) < 140
    assert "5 more group(s)" in recall and "17 more" in recall


def _with_earlier_attempts(code: str):
    attempts = [EarlierAttempt(at=at, path="src/calc.py", line=2, code=code, message="`eval()` runs code",
                               findings=2, commit=None, subject=None) for at in (1_767_350_000.0, 1_767_353_600.0)]
    # the same attempt recorded twice is one line
    group = RecallGroup("SEN303", "`eval()` runs arbitrary code from a string", 1,
                        earlier_attempts=[attempts[0], attempts[0], attempts[1]])
    return sample_verdict(recall=[group])


LONG_LINE = "return eval(expression_text, {'__builtins__': {}}, " + ", ".join(f"argument_{n}" for n in range(40))


def test_text_shows_one_line_per_earlier_attempt_cut_at_a_word_boundary():
    out = render(_with_earlier_attempts(LONG_LINE), "text")
    lines = [line for line in out.splitlines() if "tried before" in line]
    assert len(lines) == 2 and all("still failed at src/calc.py:2 (+1 more): return eval(expression_text," in ln
                                   for ln in lines)
    tail = lines[0].rsplit(" ", 1)[-1]
    assert tail.endswith("\u2026") and (tail[:-1] in LONG_LINE.split() or tail[:-1] + "," in LONG_LINE.split())


def test_markdown_shows_one_line_per_earlier_attempt_cut_at_a_word_boundary():
    import html

    md = markdown.render(_with_earlier_attempts(LONG_LINE + " <script>"))
    assert "<script>" not in md
    lines = [html.unescape(line) for line in md.splitlines() if "tried before" in line]
    assert len(lines) == 2 and "still failed at src/calc.py:2 (+1 more): `return eval(expression_text," in lines[0]
    assert lines[0].endswith("\u2026`")
    shown = lines[0].split("`")[-2][: -len("\u2026")]
    assert shown.rsplit(" ", 1)[-1].rstrip(",") in [w.rstrip(",") for w in LONG_LINE.split()]


def test_text_neutralises_terminal_control_sequences():
    f = _f("SEN301", "chaos", "error", "a\x1b[2J.py", 1, "msg \x1b]0;pwned\x07 end", code="x = '\u202e' # \x1b[31m")
    out = render(sample_verdict(findings=[f], checks=[]), "text", color=False)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert '"a\\033[2J.py"' in out and "\\u202e" in out  # the path quoted as git quotes it
    f = _f("SEN301", "chaos", "error", "a.py", 1, "one\ntwo\r\nthree")
    out = render(sample_verdict(findings=[f], checks=[]), "text", color=False)
    assert "one\\x0atwo\\x0d\\x0athree" in out


# --- JSON ------------------------------------------------------------------------------------------


def report_schema() -> dict:
    """The pydantic schema of Verdict plus the report-only fields, closed everywhere."""
    schema = TypeAdapter(Verdict).json_schema(mode="serialization")
    schema["properties"].update({
        "schema_version": {"const": jsonfmt.SCHEMA_VERSION},
        "tool": {"type": "object", "properties": {"name": {"const": "sentinel"}, "version": {"type": "string"}},
                 "required": ["name", "version"], "additionalProperties": False},
        "errored": {"type": "boolean"},
        "counts": {"type": "object", "properties": {s.value: {"type": "integer", "minimum": 0} for s in Severity},
                   "required": [s.value for s in Severity], "additionalProperties": False},
    })
    schema["$defs"]["Finding"]["properties"]["fingerprint"] = {"type": "string", "pattern": "^[0-9a-f]{32}$"}
    for obj in [schema, *schema["$defs"].values()]:
        if obj.get("type") == "object":
            obj["additionalProperties"] = False
            obj["required"] = list(obj["properties"])  # every field is always written
    return schema


def _validate_json(text: str) -> dict:
    data = json.loads(text)
    jsonschema.Draft202012Validator(report_schema()).validate(data)
    return data


@pytest.mark.parametrize("make", [sample_verdict, passed_verdict, errored_verdict])
def test_json_validates_against_generated_schema_and_round_trips(make):
    verdict = make()
    text = render(verdict, "json")
    data = _validate_json(text)
    assert data["schema_version"] == 1 and data["passed"] is verdict.passed
    assert data["errored"] is verdict.errored
    assert jsonfmt.from_json(text) == verdict


def test_json_large_reports_are_compact_with_the_same_content(monkeypatch):
    pretty = render(sample_verdict(), "json")
    monkeypatch.setattr(jsonfmt, "PRETTY_MAX_FINDINGS", 1)
    compact = render(sample_verdict(), "json")
    assert compact.count("\n") == 1 and pretty.count("\n") > 50
    assert json.loads(compact) == json.loads(pretty)
    _validate_json(compact)


def test_json_enums_are_strings_and_fingerprints_match_baseline():
    verdict = sample_verdict()
    data = json.loads(render(verdict, "json"))
    assert data["fail_level"] == "warning"
    assert [c["status"] for c in data["checks"]] == ["passed", "failed", "failed", "passed", "skipped", "failed"]
    assert {f["severity"] for f in data["findings"]} == {"error", "warning", "info"}
    assert data["counts"] == {"info": 1, "warning": 1, "error": 2}
    assert [f["fingerprint"] for f in data["findings"]] == [fingerprint(f) for f in verdict.findings]
    chaos = next(c for c in data["checks"] if c["check"] == "chaos")
    assert chaos["findings"][0] == next(f for f in data["findings"] if f["rule"] == "SEN301")


def test_json_schema_rejects_drift():
    data = json.loads(render(sample_verdict(), "json"))
    bad = copy.deepcopy(data)
    bad["findings"][0]["undocumented"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(report_schema()).validate(bad)
    bad = copy.deepcopy(data)
    bad["fail_level"] = 3
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(report_schema()).validate(bad)


def test_json_doc_describes_every_field():
    doc = (PROJECT / "docs" / "json-schema.md").read_text(encoding="utf-8")
    schema = report_schema()
    names = set(schema["properties"])
    for d in schema["$defs"].values():
        names |= set(d.get("properties", {}))
    missing = sorted(n for n in names if f"| `{n}` |" not in doc)
    assert not missing, f"docs/json-schema.md does not describe: {missing}"
    assert "schema_version" in doc and "`1`" in doc


def test_json_from_json_refuses_unknown_version():
    data = json.loads(render(passed_verdict(), "json"))
    data["schema_version"] = 99
    with pytest.raises(ValueError, match="schema_version"):
        jsonfmt.from_json(json.dumps(data))


# --- SARIF: tests/test_sarif.py ------------------------------------------------------------------


# --- GitHub workflow commands ---------------------------------------------------------------------


@pytest.mark.parametrize("raw, data, prop", [
    ("plain", "plain", "plain"),
    ("100%", "100%25", "100%25"),
    ("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"),
    ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
    ("%0A", "%250A", "%250A"),  # an already-escaped-looking value must not decode to a newline
    ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
])
def test_github_escaping(raw, data, prop):
    assert github.escape_data(raw) == data
    assert github.escape_property(raw) == prop


def _unescape(text: str, prop: bool) -> str:
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def parse_command(line: str) -> tuple[str, dict, str]:
    """Parse a workflow command the way the Actions runner does."""
    assert line.startswith("::")
    head, _, message = line[2:].partition("::")
    name, _, props = head.partition(" ")
    fields = dict(p.split("=", 1) for p in props.split(",")) if props else {}
    return name, {k: _unescape(v, True) for k, v in fields.items()}, _unescape(message, False)


@given(st.text())
def test_github_escaping_round_trips(text):
    assert _unescape(github.escape_data(text), False) == text
    assert _unescape(github.escape_property(text), True) == text
    assert not set("\r\n") & set(github.escape_data(text))
    assert not set("\r\n:,") & set(github.escape_property(text))


def test_github_annotations_survive_hostile_paths_and_messages():
    path = "src/a,b:c%0A.py"
    message = "50% done\r\n::set-env name=X::pwned\n::add-mask::x"
    f = _f("SEN301", "chaos", "warning", path, 7, message, column=3, code="except:  # a, b: c", end_line=9)
    out = render(sample_verdict(findings=[f], checks=[], not_checked=[]), "github", rules=sample_rules())
    lines = out.splitlines()
    assert len(lines) == 2 and lines[1].startswith("sentinel: ")  # the annotation and the summary, nothing injected
    name, props, text = parse_command(lines[0])
    assert name == "warning"
    assert props == {"file": path, "line": "7", "col": "3", "endLine": "9", "title": "SEN301 bare-except"}
    assert text.splitlines()[0] == "50% done"
    assert "::set-env name=X::pwned" in text and "except:  # a, b: c" in text


def test_github_levels_checks_and_summary():
    out = render(errored_verdict(findings=sample_verdict().findings), "github")
    lines = out.splitlines()
    kinds = [parse_command(ln)[0] for ln in lines if ln.startswith("::")]
    assert kinds.count("notice") == 1  # the info finding
    assert kinds.count("error") == 3  # two error findings and the crashed check
    crashed = next(parse_command(ln) for ln in lines if "crashed" in ln)
    assert crashed[1]["title"] == "sentinel: chaos crashed"
    assert any(parse_command(ln)[1].get("file") == "assets/logo.png" for ln in lines if ln.startswith("::warning"))
    claims = next(parse_command(ln) for ln in lines if "SEN601" in ln)
    assert "file" not in claims[1] and "line" not in claims[1]
    assert lines[-1].startswith("sentinel: error")
    assert all(ln.startswith(("::", "checks: ", "sentinel: ")) for ln in lines)


def test_github_caps_annotations_per_kind_and_prints_the_rest():
    errors = [_f("SEN104", "jail", "error", f"m{n:02}.py", n, f"problem {n}") for n in range(1, 26)]
    notes = [_f("SEN401", "placeholder", "info", "n.py", n, "todo") for n in range(1, 4)]
    lines = render(sample_verdict(findings=errors + notes, not_checked=[]), "github").splitlines()
    annotated = [parse_command(ln) for ln in lines if ln.startswith("::")]
    assert sum(1 for name, props, _ in annotated if name == "error" and props.get("file")) == 10
    assert sum(1 for name, _, _ in annotated if name == "notice" and "todo" in _) == 3
    assert "sentinel: 15 more item(s) past GitHub's 10 annotations per severity:" in lines
    assert "sentinel: m25.py:25: error SEN104 problem 25" in lines
    assert all(ln.startswith(("::", "checks: ", "sentinel: ")) for ln in lines)
    # a plain line carries untrusted text too: it must not be able to start a command
    hostile = [_f("SEN104", "jail", "error", "x\n::error::forged.py", n, "m\n::set-env name=A::b") for n in range(12)]
    lines = render(sample_verdict(findings=hostile, not_checked=[], checks=[]), "github").splitlines()
    assert len(lines) == 10 + 1 + 2 + 1
    assert all(ln.startswith(("::error file=", "sentinel: ")) for ln in lines)


# --- Markdown --------------------------------------------------------------------------------------


HOSTILE_MESSAGE = ("<script>alert(1)</script> | cell `code` *bold* [link](https://evil.example) "
                   "![x](https://evil.example/p.png) cc @octocat @org/team &amp; $x$ \u202e\n## heading")
HOSTILE_PATH = "src/a|b`<img src=x onerror=alert(1)>.py"
HOSTILE_CODE = "s = '</code><script>x</script>' | `y` @decorator"


def _table_rows(md: str) -> list[str]:
    return [ln for ln in md.splitlines() if ln.startswith("| ") and not ln.startswith(("| Line", "| ---"))]


def test_markdown_renders_untrusted_text_as_the_literal_text_it_is():
    """Rendered by GitHub's own parser: no element, link, image or cell from the change's text; its code shown
    exactly as it is (in a code span: GitHub links and mentions nothing there)."""
    from tests.gfm import render as gfm

    f = _f("SEN301", "chaos", "error", HOSTILE_PATH, 3, HOSTILE_MESSAGE, code=HOSTILE_CODE, hint="use <b>x</b>")
    nc = NotChecked("bin/<evil>|.dat", "binary <file>")
    md = markdown.render(sample_verdict(findings=[f], not_checked=[nc]))
    page = gfm(md)
    assert not {"script", "img", "b", "evil", "file", "em"} & set(page.tags), page.tags
    assert not [u for u in page.links if "evil" in u], page.links  # no link, no image
    assert "\u202e" not in md and "\n## heading" not in md
    [row] = [r for r in page.rows if r[0] == "3"]
    assert len(row) == 4  # exactly the four cells: no pipe of the text ended one
    assert HOSTILE_CODE in page.code  # the line of code, as it is in the file
    assert "src/a|b`<img src=x onerror=alert(1)>.py" in page.code  # the path too (its heading)
    assert "bin/<evil>|.dat" in page.code
    assert "@\u200boctocat" in page.text and "@\u200borg/team" in page.text  # mentions defused, still readable
    assert "&amp; $x$" in page.text  # an entity in the text is shown as typed, not decoded
    assert "[link](https\u200b://evil.example)" in page.text and "<script>alert(1)</script>" in page.text


TRICKY_CODE = ["return eval(x)  # ``` `` `", "`leading and trailing`", "s = 'https://evil.example/phish'",
               "a \\| b | c", "x = '`'", "www.evil.example @someone #12", 'GITHUB_TOKEN = "ghp_***"']


def test_markdown_code_spans_hold_any_backtick_run_and_show_urls_unlinked():
    from tests.gfm import render as gfm

    findings = [_f("SEN303", "chaos", "error", "app.py", n, "`eval()` runs code", code=c)
                for n, c in enumerate(TRICKY_CODE, 1)]
    page = gfm(markdown.render(sample_verdict(findings=findings)))
    # exactly the line, whatever backticks and pipes it holds (in a table cell, a backslash before a pipe is
    # followed by an invisible zero-width space: cmark-gfm would otherwise read the two as one escape)
    shown = [c.replace("\u200b", "") for c in page.code]
    for c in TRICKY_CODE:
        assert c in shown, c
    assert not [u for u in page.links if "evil" in u]
    assert all(len(r) == 4 for r in page.rows)
    assert page.code.count("eval()") == len(TRICKY_CODE)  # the message's own backticks are code, not literal
    assert "`eval()`" not in page.text


def test_markdown_failed_report_structure_and_recall():
    md = markdown.render(sample_verdict(), title="Sentinel gate")
    first = md.splitlines()[0]
    assert first.startswith("## ") and "Sentinel gate: failed" in first and "2 errors" in first
    assert "**Checks:**" in md and "drift skipped" in md
    assert "#### `src/app.py` \u2014 2 findings" in md and "#### `lib/util.js` \u2014 1 finding" in md
    assert "| 12:5 |" in md and "| - |" in md
    assert "not checked: `assets/logo.png`" in md
    # what the code does comes first: files, then the message's claims (the change as a whole last)
    assert md.index("`src/app.py`") < md.index("`lib/util.js`") < md.index("the change as a whole")
    assert "Experience memory" in md and "card-7" in md and "catch OSError" in md
    assert "recurring:" in md and "4 attempts in 3 changes" in md and "last resolved in abc1234" in md
    assert md.count("<details>") == md.count("</details>")


def test_markdown_says_passed_clearly():
    md = markdown.render(passed_verdict())
    assert md.splitlines()[0] == "## \u2705 Sentinel: passed"
    assert "No findings" in md and "failed" not in md
    md = markdown.render(errored_verdict())
    assert "error" in md.splitlines()[0] and "passed" not in md.splitlines()[0]
    assert "crashed" in md


def test_markdown_collapses_long_files():
    many = [_f("SEN202", "style", "warning", "big.py", n, "line too long") for n in range(1, 30)]
    md = markdown.render(sample_verdict(findings=many))
    assert "<details><summary><code>big.py</code> \u2014 29 findings</summary>" in md
    assert md.count("<details>") == md.count("</details>")
    assert len(_table_rows(md)) == 29


@pytest.mark.parametrize("limit", [65_536, 20_000, 3_000])
def test_markdown_truncates_within_max_bytes(limit):
    many = [_f("SEN202", "style", "warning", f"pkg/mod{n // 50}.py", n, "line too long \u00e9\u4e2d", code="x" * 200)
            for n in range(3000)]
    md = markdown.render(sample_verdict(findings=many), max_bytes=limit)
    assert len(md.encode("utf-8")) <= limit
    shown = len(_table_rows(md))
    assert 0 < shown < 3000
    assert f"{shown} of 3000 findings shown" in md
    assert md.count("<details>") == md.count("</details>")
    assert "Experience memory" in md  # recall is kept when findings are cut


def test_markdown_tiny_limit_never_exceeds():
    for limit in (0, 10, 60, 200):
        assert len(markdown.render(sample_verdict(), max_bytes=limit).encode("utf-8")) <= limit


# --- secrets: the last line of defence ------------------------------------------------------------


def _secret_verdict() -> Verdict:
    f = _f("SEN304", "chaos", "error", "cfg.py", 1, f"token {TOKEN} in source", code=f'token = "{TOKEN}"')
    return sample_verdict(findings=[f], checks=[CheckResult("chaos", CheckStatus.FAILED, [f])])


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "markdown"])
def test_every_reporter_redacts_secrets(fmt):
    verdict = _secret_verdict()
    out = markdown.render(verdict) if fmt == "markdown" else render(verdict, fmt)
    assert TOKEN not in out
    assert ("ghp&#95;&#42;&#42;&#42;" if fmt == "markdown" else "ghp_***") in out


def test_redaction_does_not_depend_on_the_checks(monkeypatch):
    # Output redaction fails closed: it lives in sentinel.redact, which imports no check.
    import sentinel.redact

    monkeypatch.setattr(sentinel.redact, "_REDACTED", {})
    monkeypatch.setitem(sys.modules, "sentinel.checks.secrets", None)  # importing it now raises ImportError
    assert terminal.redact("plain text") == "plain text"
    assert TOKEN not in terminal.redact(f"t {TOKEN}")


# --- a real verdict through the whole engine -------------------------------------------------------


REAL = "import os\n\n\ndef f():\n    try:\n        os.remove('x')\n    except:\n        pass\n"


def test_real_verdict_renders_in_every_format():
    verdict = gate_new_file("pkg/real.py", REAL)
    text = render(verdict, "text")
    assert text.splitlines()[-1].startswith("sentinel: ")
    for f in verdict.findings:
        assert f.rule in text
    data = _validate_json(render(verdict, "json"))
    assert len(data["findings"]) == len(verdict.findings)
    doc = sarif_for(verdict, rules={})
    assert len(doc["runs"][0]["results"]) == len(verdict.findings)
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is (not verdict.errored)
    gh = render(verdict, "github")
    assert sum(ln.startswith(("::error", "::warning", "::notice")) for ln in gh.splitlines()) >= len(verdict.findings)
    md = markdown.render(verdict)
    assert len(_table_rows(md)) == len(verdict.findings)


def test_cli_json_report_to_file_echoes_the_summary(repo):
    repo.write("app.py", REAL)
    repo.add("app.py")
    proc = repo.sentinel("check", "--format", "json", "--output", "report.json", "--no-memory")
    assert proc.returncode in (0, 1, 2), proc.stderr
    data = _validate_json((repo.path / "report.json").read_text(encoding="utf-8"))
    assert proc.stdout.strip().splitlines()[-1].startswith("sentinel: ")
    assert data["source"] == "staged" and data["files_changed"] == 1
    assert proc.returncode == (2 if data["errored"] else 0 if data["passed"] else 1)
