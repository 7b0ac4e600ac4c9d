"""One `--format` on every command that prints (issue 14, "Terminal and CLI").

The audit walks the real argparse tree — every subcommand, nested ones included — so a new command that prints
without `--format` fails here; then the commands that gained it run as users run them: the installed `sentinel`
console script, in a subprocess, in a real git repository."""

from __future__ import annotations

import argparse
import json
import os
import subprocess

import pytest

from sentinel.cli import build_parser
from sentinel.commands import formatopt
from tests.conftest import PROJECT
from tests.test_cli_formats import BAD, bad_repo, run  # noqa: F401 - the fixture; run: the installed script
from tests.test_ci import N_ERRORS, N_WARNINGS, _annotations, _pr, _run_ci, gh, pr_repo  # noqa: F401 - fixtures

# Commands that print nothing for a person to read, so `--format` would mean nothing. Each entry says why;
# the test below also requires its help to say it.
NO_FORMAT = {
    # stdout is the MCP JSON-RPC stream the client reads (a stray byte breaks the session); the tools answer in
    # structured content. What it serves is printable by check, memory brief/search/show and explain.
    ("mcp",): "stdout carries the MCP JSON-RPC",
}
# Where the default is not `text`, and why.
DEFAULT_FORMAT = {
    # action.yml runs `sentinel ci`: its log (notes, annotations capped at 10 per severity) stays the default
    ("ci",): "github",
}


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, (*path, name))


def _option(parser: argparse.ArgumentParser, flag: str):
    return next((a for a in parser._actions if flag in a.option_strings), None)


COMMANDS = dict(_leaves(build_parser()))


def test_the_walk_sees_every_command():
    # top-level commands and the nested `memory` family: a broken walk must not pass by seeing nothing
    assert {("check",), ("ci",), ("mcp",), ("recall",), ("commit-msg",), ("memory", "export"),
            ("memory", "import"), ("memory", "learn"), ("memory", "patterns"), ("memory", "brief")} <= set(COMMANDS)
    assert len(COMMANDS) >= 20
    assert set(NO_FORMAT) | set(DEFAULT_FORMAT) <= set(COMMANDS), "an exception names a command that is gone"


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
def test_every_command_that_prints_takes_format(path):
    parser = COMMANDS[path]
    fmt, alias = _option(parser, "--format"), _option(parser, "--json")
    if path in NO_FORMAT:
        assert fmt is None and alias is None
        assert NO_FORMAT[path] in " ".join((parser.epilog or "").split()), "its help must say why there is none"
        return
    assert fmt is not None, f"`sentinel {' '.join(path)}` prints but has no --format (or belongs in NO_FORMAT)"
    # --format names what is printed: text for people, json for programs (a file's own format has its own name)
    assert {"text", "json"} <= set(fmt.choices), fmt.choices
    assert fmt.default == DEFAULT_FORMAT.get(path, "text")
    if alias is not None:  # --json is only ever `--format json`
        assert isinstance(alias, formatopt._JsonAlias)


def test_installed_help_of_every_command_shows_format_or_why_not(installed_sentinel):
    env = {**os.environ, "COLUMNS": "200"}
    for path in COMMANDS:
        proc = subprocess.run([installed_sentinel, *path, "--help"], capture_output=True, text=True, env=env,
                              timeout=120)
        assert proc.returncode == 0, (path, proc.stderr)
        if path in NO_FORMAT:
            assert "--format" not in proc.stdout.split("No --format")[0], path
            assert NO_FORMAT[path] in " ".join(proc.stdout.split()), path
        else:
            assert "--format {" in proc.stdout, path


def test_mcp_refuses_format_as_a_usage_error(installed_sentinel):
    proc = subprocess.run([installed_sentinel, "mcp", "--format", "json"], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "unrecognized arguments: --format" in proc.stderr and proc.stdout == ""


# --- memory export / import ------------------------------------------------------------------------------------

@pytest.fixture
def remembering_repo(bad_repo):
    """Two failed attempts of one change recorded in the clone's store (2 bare excepts, then 3: 7 findings in all)."""
    assert run(bad_repo, "check").returncode == 1
    bad_repo.write("pkg/io.py", BAD + "\n\ndef close(f):\n    try:\n        f.close()\n    except:\n        pass\n")
    bad_repo.add("pkg/io.py")
    assert run(bad_repo, "check").returncode == 1
    return bad_repo


def test_memory_export_summary_as_json_matches_the_file(remembering_repo, tmp_path):
    out = tmp_path / "memory.jsonl"
    proc = run(remembering_repo, "memory", "export", "-o", str(out), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["type"] == "header" and records[0]["format"] == "sentinel-memory-export"
    runs = [r for r in records if r["type"] == "run"]
    assert summary["runs"] == len(runs) == 2
    assert summary["findings"] == sum(len(r["findings"]) for r in runs) == 7
    assert summary["resolutions"] == 0 and summary["cards"] == 0
    assert summary["path"] == str(out) and summary["format"] == "jsonl"
    assert summary["store"].endswith(os.path.join(".git", "sentinel", "hypotheses.sqlite3"))  # the clone's store
    assert summary["project"] and proc.stderr == ""
    alias = run(remembering_repo, "memory", "export", "-o", str(tmp_path / "again.jsonl"), "--json")
    assert {**json.loads(alias.stdout), "path": None} == {**summary, "path": None}
    text = run(remembering_repo, "memory", "export", "-o", str(out))
    assert text.returncode == 0
    assert text.stdout.startswith("sentinel: exported 2 run(s) (7 finding(s)), 0 resolution(s)")
    assert str(out) in text.stdout


def test_memory_export_to_stdout_keeps_stdout_for_the_export(remembering_repo):
    proc = run(remembering_repo, "memory", "export")
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in proc.stdout.splitlines()]  # every line of stdout is a record
    assert [r["type"] for r in records] == ["header", "run", "run"]
    assert "exported 2 run(s) (7 finding(s))" in proc.stderr
    # a JSON summary would share stdout with the export: refused before anything is written, naming the way out
    refused = run(remembering_repo, "memory", "export", "--format", "json")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "-o FILE" in refused.stderr and "Traceback" not in refused.stderr


def test_memory_import_format_is_what_it_prints_and_input_format_what_it_reads(remembering_repo, tmp_path):
    export = tmp_path / "memory.jsonl"
    assert run(remembering_repo, "memory", "export", "-o", str(export)).returncode == 0
    other = f"sqlite:///{tmp_path / 'other.db'}"
    proc = run(remembering_repo, "memory", "import", str(export), "--database-url", other, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["added"] == {"runs": 2, "findings": 7, "resolutions": 0, "cards": 0,
                                                 "learn_runs": 0, "learn_seen": 0}
    again = run(remembering_repo, "memory", "import", str(export), "--database-url", other, "--json")
    assert json.loads(again.stdout)["added"]["runs"] == 0  # the alias, and an import is idempotent

    # cards as JSON lines in a file named .json: by extension it would be read as a MemGovern release
    line = next(ln for ln in (PROJECT / "memory" / "cards" / "fixrecords-a.jsonl").read_text().splitlines() if ln)
    cards = tmp_path / "cards.json"
    cards.write_text(line + "\n")
    by_extension = run(remembering_repo, "memory", "import", str(cards), "--into", str(tmp_path / "x"),
                       "--format", "json")
    assert json.loads(by_extension.stdout)["written"] == 0
    read = run(remembering_repo, "memory", "import", str(cards), "--input-format", "jsonl",
               "--into", str(tmp_path / "in"), "--format", "json")
    assert read.returncode == 0, read.stderr
    data = json.loads(read.stdout)
    assert data["written"] == 1 and data["invalid"] == [] and data["path"].endswith("cards.jsonl")
    # the old spelling (`--format jsonl` meant the input) still works, with a warning naming the new one
    legacy = run(remembering_repo, "memory", "import", str(cards), "--format", "jsonl",
                 "--into", str(tmp_path / "old"))
    assert legacy.returncode == 0, legacy.stderr
    assert "wrote 1 governed cards" in legacy.stdout and "--input-format jsonl" in legacy.stderr


# --- ci -----------------------------------------------------------------------------------------------------------

def test_ci_format_json_puts_the_report_alone_on_stdout_and_keeps_every_side_output(pr_repo, gh, tmp_path):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo), args=("--format", "json"))
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)  # nothing else on stdout
    assert report["passed"] is False and len(report["findings"]) == N_ERRORS + N_WARNINGS
    assert {f["rule"] for f in report["findings"]} == {"SEN103", "SEN104"}
    # the log moved to stderr, where the runner reads workflow commands too: annotations still capped at 10
    notes = _annotations(proc.stderr)
    assert len(notes["error"]) == 10 and len(notes["warning"]) == 10
    assert "sentinel: diff:" in proc.stderr and "sentinel: failed" in proc.stderr
    # and the Action's other outputs are what the default run writes
    assert proc.outputs["verdict"] == "failed" and proc.outputs["findings"] == str(N_ERRORS + N_WARNINGS)
    assert proc.outputs["comment-url"] and "SEN104" in proc.summary
    assert "ghs_faketoken123" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("fmt", ["sarif", "concise"])
def test_ci_format_matches_what_check_prints(pr_repo, gh, tmp_path, fmt):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo), args=("--format", fmt),
                   inputs={"INPUT_ANNOTATIONS": "off", "INPUT_COMMENT": "off"})
    assert proc.returncode == 1, proc.stderr
    check = run(pr_repo, "check", "--range", f"{pr_repo.base}..{pr_repo.head}", "--no-memory", "--format", fmt)
    assert check.returncode == 1, check.stderr
    if fmt == "sarif":
        ours, theirs = json.loads(proc.stdout), json.loads(check.stdout)
        assert len(ours["runs"][0]["results"]) == N_ERRORS + N_WARNINGS
        assert ([r["ruleId"] for r in ours["runs"][0]["results"]]
                == [r["ruleId"] for r in theirs["runs"][0]["results"]])
    else:
        # one `path:line:col: CODE message` line per finding, as `sentinel check --format concise`
        lines = proc.stdout.splitlines()
        assert sum(ln.startswith("app.py:") for ln in lines) == N_ERRORS + N_WARNINGS
        assert [ln for ln in lines if ln.startswith("app.py:")] == \
            [ln for ln in check.stdout.splitlines() if ln.startswith("app.py:")]
    assert "::error" not in proc.stdout + proc.stderr  # annotations: off is still honoured


def test_ci_default_is_still_the_step_log(pr_repo, gh, tmp_path):
    proc = _run_ci(pr_repo, gh, tmp_path, _pr(gh, pr_repo))
    assert proc.returncode == 1, proc.stderr
    assert len(_annotations(proc.stdout)["error"]) == 10
    assert proc.stdout.rstrip().splitlines()[-1].startswith("sentinel: failed")
    with pytest.raises(ValueError):
        json.loads(proc.stdout)
