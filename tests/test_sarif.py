"""SARIF for GitHub code scanning: valid against the official schema, and acceptable to GitHub
(tests/sarif_rules.py): every result in a real file of the repository with a start line, rules
with help URIs, stable and distinct fingerprints, GitHub's limits kept."""

from __future__ import annotations

import json

import pytest

from sentinel.models import FileChange, FileStatus, Finding, Severity
from sentinel.report import sarif
from sentinel.report.locate import Locator
from tests.conftest import GitRepo
from tests.sarif_rules import DATA, github_problems, sarif_for, sarif_validator, schema_errors
from tests.test_reports import _f, errored_verdict, passed_verdict, sample_rules, sample_verdict

import jsonschema


def _fc(path, added=None, status=FileStatus.MODIFIED):
    return FileChange(path=path, old_path=None, status=status, language="python", added=dict(added or {}))


def test_sarif_schema_file_is_the_official_one():
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    assert len((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")) == 112768
    jsonschema.Draft7Validator.check_schema(schema)
    with pytest.raises(jsonschema.ValidationError):
        sarif_validator().validate({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})


def test_the_github_rules_catch_what_github_rejects(tmp_path):
    (tmp_path / "a.py").write_text("x\n")
    base = {"$schema": sarif.SCHEMA_URI, "version": "2.1.0", "runs": [{"tool": {"driver": {
        "name": "t", "rules": [{"id": "R1", "helpUri": "https://x/r1", "name": "r"}]}}, "results": []}]}

    def with_result(**res):
        doc = json.loads(json.dumps(base))
        doc["runs"][0]["results"] = [{"ruleId": "R1", "message": {"text": "m"}, "partialFingerprints": {"k": "1"},
                                      **res}]
        return github_problems(doc, tmp_path)

    loc = {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 1}}}
    assert with_result(locations=[loc]) == []
    assert "no location" in with_result()[0]
    missing = {"physicalLocation": {"artifactLocation": {"uri": "COMMIT_MSG"}, "region": {"startLine": 1}}}
    assert "not a file of the repository" in with_result(locations=[missing])[0]
    no_line = {"physicalLocation": {"artifactLocation": {"uri": "a.py"}}}
    assert "startLine" in with_result(locations=[no_line])[0]
    past = {"physicalLocation": {"artifactLocation": {"uri": "a.py"}, "region": {"startLine": 9}}}
    assert "past the end" in with_result(locations=[past])[0]


@pytest.mark.parametrize("make", [sample_verdict, passed_verdict, errored_verdict])
def test_sarif_validates_and_is_acceptable(make):
    v = make()
    doc = sarif_for(v, sample_rules(), files=[_fc("src/app.py", {12: "except:"})])
    assert doc["$schema"] == sarif.SCHEMA_URI and doc["version"] == "2.1.0"
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "sentinel" and driver["informationUri"].startswith("https://") and driver["version"]


def test_results_levels_regions_and_fingerprints():
    verdict = sample_verdict()
    doc = sarif_for(verdict, sample_rules(), files=[_fc("src/app.py", {12: "except:", 40: "x"}),
                                                    _fc("lib/util.js", {3: "// TODO"})])
    run = doc["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert {k: v["level"] for k, v in by_rule.items()} == {
        "SEN301": "error", "SEN202": "warning", "SEN401": "note", "SEN601": "error"}
    loc = by_rule["SEN301"]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "src/app.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 12, "startColumn": 5, "snippet": {"text": "except:"}}
    assert "startColumn" not in by_rule["SEN202"]["locations"][0]["physicalLocation"]["region"]
    assert by_rule["SEN401"]["locations"][0]["physicalLocation"]["region"]["endLine"] == 4
    # A claim about the whole change is anchored at the change's first added line and says so.
    claim = by_rule["SEN601"]
    assert claim["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/app.py"
    assert claim["locations"][0]["physicalLocation"]["region"] == {"startLine": 12}
    assert claim["message"]["text"].startswith("About the change as a whole: ")
    f301 = next(f for f in verdict.findings if f.rule == "SEN301")
    from sentinel.baseline import fingerprint
    assert by_rule["SEN301"]["partialFingerprints"] == {sarif.FINGERPRINT_ID: fingerprint(f301)}


def test_identical_lines_are_two_alerts_and_fingerprints_ignore_lines():
    a = _f("SEN301", "chaos", "error", "app.py", 3, "bare except", code="except:")
    b = _f("SEN301", "chaos", "error", "app.py", 9, "bare except", code="except:")
    doc = sarif_for(sample_verdict(findings=[a, b]), sample_rules())
    fps = [r["partialFingerprints"][sarif.FINGERPRINT_ID] for r in doc["runs"][0]["results"]]
    assert len(set(fps)) == 2 and fps[1] == f"{fps[0]}:2"
    moved = _f("SEN301", "chaos", "error", "app.py", 30, "bare except", code="  except:  ")
    doc2 = sarif_for(sample_verdict(findings=[moved]), sample_rules())
    assert doc2["runs"][0]["results"][0]["partialFingerprints"][sarif.FINGERPRINT_ID] == fps[0]


def test_drift_fingerprint_does_not_follow_the_score():
    one = _f("SEN501", "drift", "error", "", None, "change drifts from the task: similarity 0.11")
    two = _f("SEN501", "drift", "error", "", None, "change drifts from the task: similarity 0.19")
    assert sarif.fingerprints([one]) == sarif.fingerprints([two])


def test_file_level_finding_gets_the_first_added_line_and_deleted_files_the_anchor(tmp_path):
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "keys.pem").write_text("a\nb\nc\n")
    (tmp_path / "app.py").write_text("x\ny\n")
    touched = _f("SEN107", "jail", "error", "deploy/keys.pem", None, "protected path touched")
    gone = _f("SEN107", "jail", "error", "old/secret.pem", None, "protected path deleted")
    files = [_fc("deploy/keys.pem", {2: "b"}), _fc("app.py", {2: "y"}),
             _fc("old/secret.pem", status=FileStatus.DELETED)]
    doc = sarif_for(sample_verdict(findings=[gone, touched]), sample_rules(), files=files, root=tmp_path)
    res = doc["runs"][0]["results"]
    assert res[1]["locations"][0]["physicalLocation"]["region"] == {"startLine": 2}
    assert res[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "deploy/keys.pem"
    assert res[0]["message"]["text"].startswith("About old/secret.pem, which the change deletes: ")


def test_a_change_that_only_deletes_cannot_place_a_claim_and_says_so(tmp_path):
    claim = _f("SEN601", "claims", "error", "COMMIT_MSG", 3, "claims tests pass")
    files = [_fc("gone.py", status=FileStatus.DELETED)]
    doc = sarif_for(sample_verdict(findings=[claim]), sample_rules(), files=files, root=tmp_path)
    run = doc["runs"][0]
    assert run["results"] == []
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"]
             if n["descriptor"]["id"] == "sentinel/unplaced-finding"]
    assert len(notes) == 1 and "claims tests pass" in notes[0]["message"]["text"]


def test_rule_descriptors_document_the_rule_with_a_help_uri():
    doc = sarif_for(sample_verdict(), sample_rules(), files=[_fc("src/app.py", {12: "x"})])
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids[:4] == ["SEN101", "SEN202", "SEN301", "SEN401"]  # every known rule, sorted
    bare = rules[ids.index("SEN301")]
    assert bare["name"] == "bare-except" and bare["shortDescription"]["text"] == "bare-except summary"
    assert bare["helpUri"].endswith("/docs/rules.md#sen301")
    assert bare["defaultConfiguration"] == {"level": "error"} and bare["properties"]["tags"] == ["chaos"]
    md = bare["help"]["markdown"]
    assert "**Example** (fires):" in md and "```python\ntry:\n    f()\nexcept:\n    pass\n```" in md
    assert "**Use instead:**" in md and "except OSError:" in md
    assert "Use instead" in bare["help"]["text"] and "fix bare-except" in bare["help"]["text"]
    jail = rules[ids.index("SEN101")]
    assert jail["properties"]["tags"] == ["jail", "security"] and jail["properties"]["security-severity"] == "7.5"
    todo = rules[ids.index("SEN401")]["help"]["markdown"]
    assert "````javascript\n// TODO: ```later```\n````" in todo  # fence longer than the example's backticks
    unknown = rules[ids.index("SEN601")]  # not in the rule index: a minimal descriptor, still documented
    assert unknown["defaultConfiguration"] == {"level": "error"} and unknown["helpUri"].startswith("https://")


def test_invocation_reports_errors_skips_and_unread_files():
    run = sarif_for(errored_verdict(), sample_rules())["runs"][0]
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    notes = {n["descriptor"]["id"]: n for n in inv["toolExecutionNotifications"]}
    assert notes["sentinel/check-error"]["level"] == "error"
    assert "ValueError: boom" in notes["sentinel/check-error"]["message"]["text"]
    assert notes["sentinel/not-checked"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "assets/logo.png"
    inv = sarif_for(sample_verdict(), sample_rules(), files=[_fc("src/app.py", {12: "x"})])["runs"][0][
        "invocations"][0]
    assert inv["executionSuccessful"] is True
    skipped = [n for n in inv["toolExecutionNotifications"] if n["descriptor"]["id"] == "sentinel/check-skipped"]
    assert skipped[0]["message"]["text"] == "check 'drift' skipped: no task" and skipped[0]["level"] == "note"


def test_uris_are_relative_and_encoded(tmp_path):
    root = tmp_path / "my repo"
    (root / "dir with space").mkdir(parents=True)
    (root / "dir with space" / "50%#x:y.py").write_text("x\n")
    f = _f("SEN301", "chaos", "error", "dir with space/50%#x:y.py", 1, "m")
    run = sarif_for(sample_verdict(findings=[f]), sample_rules(), root=root)["runs"][0]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "dir%20with%20space/50%25%23x%3Ay.py"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.resolve().as_uri() + "/"


def test_results_are_capped_at_githubs_limit(monkeypatch):
    monkeypatch.setattr(sarif, "MAX_RESULTS", 5)
    findings = [_f("SEN202", "style", "warning", "a.py", n, "long", code=f"x{n}") for n in range(1, 8)]
    findings.append(_f("SEN301", "chaos", "error", "a.py", 9, "bare", code="except:"))
    run = sarif_for(sample_verdict(findings=findings), sample_rules())["runs"][0]
    assert len(run["results"]) == 5 and run["results"][-1]["ruleId"] == "SEN301"  # the error is kept
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"]
             if n["descriptor"]["id"] == "sentinel/results-capped"]
    assert "3 of 8 results left out" in notes[0]["message"]["text"]


def test_locator_without_a_checkout_trusts_the_change():
    loc = Locator([_fc("a.py", {4: "x"}), _fc("b.py", status=FileStatus.DELETED)], None)
    assert loc.place(Finding("SEN301", "chaos", Severity.ERROR, "a.py", None, "m")).line == 4
    assert loc.place(Finding("SEN601", "claims", Severity.ERROR, "COMMIT_MSG", 2, "m")).about == \
        "the commit message (line 2)"
    assert loc.place(Finding("SEN107", "jail", Severity.ERROR, "b.py", None, "m")).anchored


# -- end to end: the installed command on a real repository -----------------------------------------

def test_cli_sarif_for_a_real_change_with_drift_claims_and_a_deletion(tmp_path, installed_sentinel):
    repo = GitRepo(tmp_path / "repo", installed_sentinel)
    repo.write("billing/export.py", "def total(rows):\n    return sum(r.amount for r in rows)\n")
    repo.write("legacy.py", "x = 1\n")
    repo.add("billing/export.py", "legacy.py")
    repo.commit("base")
    repo.write("billing/export.py", "import csv\n\n\ndef export(rows, path):\n    try:\n"
                                    "        csv.writer(open(path, 'w')).writerows(rows)\n    except:\n"
                                    "        pass\n")
    repo.git("rm", "-q", "legacy.py")
    repo.add("billing/export.py")
    repo.commit("Export invoices as CSV\n\nAll tests pass and it is production ready.")
    proc = repo.sentinel("check", "--range", "HEAD~1..HEAD", "--format", "sarif", "--no-memory", "--task",
                         "Add retries with exponential backoff to the HTTP client on 503 answers")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert not schema_errors(doc), schema_errors(doc)[:3]
    assert not github_problems(doc, repo.path), github_problems(doc, repo.path)[:3]
    results = doc["runs"][0]["results"]
    rules = {r["ruleId"] for r in results}
    assert "SEN301" in rules and any(r.startswith("SEN6") for r in rules)
    for r in results:
        if r["ruleId"].startswith(("SEN5", "SEN6")):
            assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "billing/export.py"
            assert r["message"]["text"].startswith("About ")


def test_a_result_points_at_its_file_by_its_real_name_but_never_at_a_name_that_holds_a_secret():
    from sentinel.models import CheckResult, CheckStatus, Verdict

    odd, leaky = "tab\there.py", "keys/ghp_Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2.py"
    found = [_f("SEN303", "chaos", "error", path, 1, "eval of a string") for path in (odd, leaky)]
    v = Verdict(passed=False, fail_level=Severity.WARNING, source="staged", files_changed=3, lines_added=3,
                checks=[CheckResult("chaos", CheckStatus.FAILED, found)], findings=found)
    files = [_fc("a.py", {1: "x = 1"}), _fc(odd, {1: "eval(raw)"}), _fc(leaky, {1: "eval(raw)"})]
    doc = json.loads(sarif.render(v, sample_rules(), locator=Locator(files)))
    text = json.dumps(doc)
    assert "ghp_Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2" not in text
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]]
    assert uris == ["tab%09here.py", "a.py"]  # the secret's file is anchored, its name masked in the message
