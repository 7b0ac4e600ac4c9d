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


# flake8's default format (and ruff's concise one): what editors, problem matchers and reviewdog read.
FLAKE8_LINE = re.compile(r"^(?P<path>[^:]+):(?P<row>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) (?P<text>.*)$")


def test_concise_is_one_clickable_line_per_finding_with_its_severity(bad_repo):
    bad_repo.write("pkg/io.py", BAD.replace("import os\n", "import os  \n"))  # trailing whitespace: info
    bad_repo.add("pkg/io.py")
    proc = run(bad_repo, "check", "--format", "concise", "--no-memory")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    findings = [ln for ln in lines if re.match(r"^pkg/io\.py:\d+:\d+: SEN\d{3} \[(error|warning|info)\] ", ln)]
    assert findings == [ln for ln in lines[:-1]], lines  # nothing else but the summary line
    assert "pkg/io.py:7:5: SEN301 [error] bare" in proc.stdout
    assert "pkg/io.py:14:5: SEN301 [warning] " in proc.stdout  # best-effort cleanup: the same code, less severe
    assert "pkg/io.py:1:10: SEN205 [info] trailing whitespace" in proc.stdout  # not read as an error
    assert lines[-1].startswith("sentinel: failed")
    # a flake8/ruff-style parser still reads every line: file, line, column, code, and the text
    parsed = [FLAKE8_LINE.match(ln) for ln in findings]
    assert all(parsed) and {m["code"] for m in parsed} == {"SEN205", "SEN301", "SEN103"}, findings
    assert {m["text"].split("] ", 1)[0] + "]" for m in parsed} == {"[info]", "[error]", "[warning]"}


def test_suppression_note_once_per_rule_naming_its_code(bad_repo):
    proc = run(bad_repo, "check", "--no-memory")
    assert proc.stdout.count("SEN301  bare") == 2
    lines = proc.stdout.splitlines()
    rules = {m.group(1) for ln in lines if (m := re.search(r"\s(SEN\d{3})\s", ln))}
    notes = [i for i, ln in enumerate(lines) if "note: add" in ln]
    assert len(notes) == len(rules) >= 2  # one per rule, not one per finding
    assert "<code>" not in proc.stdout
    first, second = (i for i, ln in enumerate(lines) if " SEN301 " in ln)
    note = next(lines[i] for i in notes if first < i < second)  # under the first SEN301, not the second
    assert '"# sentinel: ignore[SEN301]"' in note and '"sentinel explain SEN301"' in note
    # and the note is true: the comment it names silences the line, and the command it names explains the rule
    assert run(bad_repo, "explain", "SEN301").returncode == 0
    bad_repo.write("pkg/io.py", BAD.replace("    except:\n        pass\n\n\ndef save",
                                            "    except:  # sentinel: ignore[SEN301]\n        pass\n\n\ndef save"))
    bad_repo.add("pkg/io.py")
    again = run(bad_repo, "check", "--no-memory", "--format", "concise")
    assert again.stdout.count("SEN301") == 1 and "pkg/io.py:14:5: SEN301" in again.stdout


def test_suppression_note_speaks_the_files_comment_syntax(bad_repo):
    bad_repo.write("web/app.js", "function run(s) {\n  return eval(s);\n}\n")
    bad_repo.write("pkg/calc.py", "def calc(s):\n    return eval(s)\n")
    bad_repo.add("web/app.js", "pkg/calc.py")
    proc = run(bad_repo, "check", "--no-memory")
    assert '"# sentinel: ignore[SEN303]"' in proc.stdout and '"// sentinel: ignore[SEN303]"' in proc.stdout
    bad_repo.write("web/app.js", "function run(s) {\n  return eval(s);  // sentinel: ignore[SEN303]\n}\n")
    bad_repo.add("web/app.js")
    again = run(bad_repo, "check", "--no-memory", "--format", "concise")
    assert "web/app.js" not in again.stdout and "pkg/calc.py:2:12: SEN303" in again.stdout


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


def test_exit_zero_reports_but_passes_and_says_so(bad_repo, tmp_path):
    proc = run(bad_repo, "check", "--exit-zero", "--no-memory")
    assert proc.returncode == 0 and "SEN301" in proc.stdout
    last = proc.stdout.splitlines()[-1]
    assert last.startswith("sentinel: failed (exit 0: --exit-zero) - 1 error"), last
    for fmt in ("concise", "github"):
        out = run(bad_repo, "check", "--exit-zero", "--no-memory", "--format", fmt)
        assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("sentinel: failed (exit 0: --exit-zero)")
    to_file = run(bad_repo, "check", "--exit-zero", "--no-memory", "--format", "json", "-o", str(tmp_path / "r.json"))
    assert to_file.returncode == 0 and to_file.stdout.startswith("sentinel: failed (exit 0: --exit-zero)")
    assert json.loads((tmp_path / "r.json").read_text())["passed"] is False  # the report itself is unchanged
    without = run(bad_repo, "check", "--no-memory")
    assert without.returncode == 1 and "--exit-zero" not in without.stdout
    broken = run(bad_repo, "check", "--exit-zero", "--no-memory", "--diff", str(tmp_path / "missing.diff"))
    assert broken.returncode == 2


def _on_a_terminal(repo: GitRepo, *args: str, delay: str = "0") -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (as in an interactive shell) and stdout on a pipe."""
    import pty
    import select

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "SENTINEL_", "GITHUB_"))}
    env.update(NO_COLOR="1", SENTINEL_PROGRESS_DELAY=delay, TERM="xterm")
    env.pop("NO_PROGRESS", None)
    main, side = pty.openpty()
    proc = subprocess.Popen([repo.sentinel_script, *args], cwd=repo.path, stdout=subprocess.PIPE, stderr=side,
                            env=env)
    os.close(side)
    seen = b""
    while True:
        ready, _, _ = select.select([main], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(main)
    out = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(timeout=60), out, seen.decode()


def test_a_long_run_shows_progress_on_a_terminal_and_nothing_on_a_pipe(bad_repo):
    for i in range(40):
        bad_repo.write(f"pkg/mod{i}.py", f"def f{i}(x):\n    return x + {i}\n")
    bad_repo.add("pkg")
    bad_repo.commit("a tree")
    code, out, err = _on_a_terminal(bad_repo, "check", "--all-files", "--no-memory", "--format", "concise")
    assert code == 1
    steps = re.findall(r"\r\x1b\[Ksentinel: checking files (\d+)/(\d+)", err)
    assert steps and {int(t) for _, t in steps} == {42}, err  # the 42 text files of the tree
    assert int(steps[-1][0]) == 42 and [int(d) for d, _ in steps] == sorted(int(d) for d, _ in steps)
    assert err.endswith("\r\x1b[K") or "\r\x1b[K" in err.rsplit("checking files", 1)[1], err  # erased at the end
    assert "\r" not in out and "checking files" not in out  # the report on stdout is clean
    assert out.splitlines()[-1].startswith("sentinel: failed")
    # a run shorter than the delay draws nothing, and a pipe never gets it
    _, _, quick = _on_a_terminal(bad_repo, "check", "--all-files", "--no-memory", delay="60")
    assert "checking files" not in quick
    piped = run(bad_repo, "check", "--all-files", "--no-memory")
    assert "checking files" not in piped.stderr and "\r" not in piped.stderr + piped.stdout


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
