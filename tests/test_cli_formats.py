"""The terminal conventions of ruff and flake8, through the installed `sentinel` console script:
`--format concise`, `--statistics`, `--exit-zero`, a suppression note the first time a rule fires,
and one `--format` option (with `--json` kept as an alias) on every command that prints."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.conftest import PROJECT, GitRepo

BAD = ("import os\n\n\ndef load(path):\n    try:\n        return open(path).read()\n    except:\n        pass\n\n\n"
       "def save(path):\n    try:\n        os.remove(path)\n    except:\n        pass\n")


def run(repo: GitRepo, *args: str, input: str | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "SENTINEL_", "GITHUB_"))}
    env["NO_COLOR"] = "1"
    return subprocess.run([repo.sentinel_script, *args], cwd=repo.path, capture_output=True, text=True, input=input, env=env,
                          timeout=120)


@pytest.fixture
def bad_repo(tmp_path, installed_sentinel):
    repo = GitRepo(tmp_path / "repo", installed_sentinel)
    repo.write("README.md", "demo\n")
    repo.add("README.md")
    repo.commit("init")
    repo.write("pkg/io.py", BAD)
    repo.add("pkg/io.py")
    return repo


def test_concise_is_one_clickable_line_per_finding(bad_repo):
    proc = run(bad_repo, "check", "--format", "concise", "--no-memory")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    findings = [ln for ln in lines if re.match(r"^pkg/io\.py:\d+:\d+: SEN\d{3} ", ln)]
    assert findings == [ln for ln in lines[:-1]], lines  # nothing else but the summary line
    assert "pkg/io.py:7:5: SEN301 " in proc.stdout and "pkg/io.py:14:5: SEN301 " in proc.stdout
    assert lines[-1].startswith("sentinel: failed")


def test_suppression_note_once_per_rule(bad_repo):
    proc = run(bad_repo, "check", "--no-memory")
    assert proc.stdout.count("SEN301  bare") == 2
    lines = proc.stdout.splitlines()
    rules = {m.group(1) for ln in lines if (m := re.search(r"\s(SEN\d{3})\s", ln))}
    notes = [i for i, ln in enumerate(lines) if "sentinel: ignore[<code>]" in ln]
    assert len(notes) == len(rules) >= 2  # one per rule, not one per finding
    first, second = (i for i, ln in enumerate(lines) if " SEN301 " in ln)
    assert any(first < i < second for i in notes)  # under the first SEN301, not the second
    # and the note is true: the comment it names silences the line
    bad_repo.write("pkg/io.py", BAD.replace("    except:\n        pass\n\n\ndef save",
                                            "    except:  # sentinel: ignore[SEN301]\n        pass\n\n\ndef save"))
    bad_repo.add("pkg/io.py")
    again = run(bad_repo, "check", "--no-memory", "--format", "concise")
    assert again.stdout.count("SEN301") == 1 and "pkg/io.py:14:5: SEN301" in again.stdout


def test_statistics_counts_per_rule_in_text_and_json(bad_repo):
    proc = run(bad_repo, "check", "--statistics", "--no-memory")
    assert proc.returncode == 1
    rows = proc.stdout.splitlines()
    assert re.match(r"^2\s+SEN301\s+error\s+bare-except$", rows[0]), rows
    assert rows[-1].startswith("sentinel: failed")
    data = json.loads(run(bad_repo, "check", "--statistics", "--format", "json", "--no-memory").stdout)
    assert {"code": "SEN301", "name": "bare-except", "count": 2, "severity": "error"} in data
    refused = run(bad_repo, "check", "--statistics", "--format", "sarif", "--no-memory")
    assert refused.returncode == 2 and "--statistics" in refused.stderr


def test_exit_zero_reports_but_passes_and_still_fails_on_errors(bad_repo, tmp_path):
    proc = run(bad_repo, "check", "--exit-zero", "--no-memory")
    assert proc.returncode == 0 and "SEN301" in proc.stdout and "sentinel: failed" in proc.stdout
    broken = run(bad_repo, "check", "--exit-zero", "--no-memory", "--diff", str(tmp_path / "missing.diff"))
    assert broken.returncode == 2


@pytest.mark.parametrize("args", [
    ["memory", "search", "connection pool leak"], ["memory", "stats"], ["rules"], ["explain", "SEN301"],
    ["config"], ["baseline", "--output", "base.json"], ["memory", "forget", "--all"],
    ["memory", "build-index", "--check"],
])
def test_every_printing_command_takes_format_json_and_the_json_alias(bad_repo, args):
    text = run(bad_repo, *args)
    assert text.returncode == 0, text.stderr
    with pytest.raises(ValueError):
        json.loads(text.stdout)
    as_format = run(bad_repo, *args, "--format", "json")
    alias = run(bad_repo, *args, "--json")
    assert as_format.returncode == 0 and alias.returncode == 0, as_format.stderr + alias.stderr
    assert json.loads(as_format.stdout) == json.loads(alias.stdout)


def test_recall_takes_format_json(bad_repo):
    log = "Traceback (most recent call last):\n  File \"a.py\", line 1\nConnectionResetError: peer reset\n"
    proc = run(bad_repo, "recall", "--log", "-", "--format", "json", input=log)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["signals"]["exception_types"] == ["ConnectionResetError"]
    alias = run(bad_repo, "recall", "--log", "-", "--json", input=log)
    assert json.loads(alias.stdout)["results"] == json.loads(proc.stdout)["results"]


def test_docs_rules_page_is_current(installed_sentinel):
    """docs/rules.md is what SARIF help URIs and PR comments link to: it must say what the code does."""
    proc = subprocess.run([installed_sentinel, "rules", "--format", "markdown"], capture_output=True, text=True, timeout=120)
    on_disk = (PROJECT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert proc.stdout == on_disk, "docs/rules.md is stale: run `sentinel rules --format markdown > docs/rules.md`"
    codes = re.findall(r"^### (SEN\d{3})$", on_disk, flags=re.M)
    assert codes and len(codes) == len(set(codes))
