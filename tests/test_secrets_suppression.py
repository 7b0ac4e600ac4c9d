"""A leaked credential (SEN304) is silenced only by a comment that names it — `# sentinel: ignore[SEN304]`, one of its
codes (`# noqa: S105`, `# nosec B105`) — or by an allow pragma as gitleaks (`gitleaks:allow`) and detect-secrets
(`pragma: allowlist secret`) spell them; never by a blanket `# noqa`, `# nosec` or `# sentinel: ignore`, the usual
silencers of a long line, which still silence every other rule."""

from __future__ import annotations

import pytest

from tests.conftest import codes, gate_new_file
from tests.harden_util import assert_clean_exit, run_sentinel

SECRET = "Zq7-s3cret-pw-81"
LINE = f'DB_PASSWORD = "{SECRET}"'


@pytest.mark.parametrize("comment", [
    "# noqa: S105", "# noqa:S105", "# noqa: E501, S105", "# NOQA: s105", "# noqa: B105",
    "# sentinel: ignore[SEN304]", "# sentinel: ignore[SEN202, SEN304]",
    "# nosec B105", "# nosec: B105",
    "# gitleaks:allow", "# pragma: allowlist secret", "# Pragma: Allowlist Secret",
    "# rotated yesterday  # gitleaks:allow",
])
def test_a_comment_that_names_the_rule_or_an_allow_pragma_silences_a_credential(comment):
    verdict = gate_new_file("app/settings.py", f"{LINE}  {comment}\n")
    assert "SEN304" not in codes(verdict) and verdict.suppressed >= 1


@pytest.mark.parametrize("comment", [
    "# noqa", "# NOQA", "# noqa: E501", "# noqa: S1O5",
    "# nosec", "# sentinel: ignore", "# sentinel: ignore[SEN202]",
    "# pylint: disable=all", "# type: ignore", "# gitleaks: allowed later",
])
def test_a_blanket_or_unrelated_comment_does_not_silence_a_credential(comment):
    verdict = gate_new_file("app/settings.py", f"{LINE}  {comment}\n")
    assert "SEN304" in codes(verdict), comment


def test_a_bare_noqa_still_silences_the_long_line_it_was_written_for():
    long_line = f"{LINE}  # {'x' * 120}  # noqa\n"
    verdict = gate_new_file("app/settings.py", "x = 1  # " + "y" * 120 + "  # noqa\n" + long_line,
                            config={"style": {"line_length": 79}})
    found = codes(verdict)
    assert "SEN304" in found and "SEN202" not in found


def test_allow_pragmas_in_other_comment_syntaxes():
    js = f'const apiKey = "{SECRET}"; // gitleaks:allow\nconst dbPassword = "{SECRET}"; // noqa\n'
    verdict = gate_new_file("web/config.js", js)
    assert [f.line for f in verdict.findings if f.rule == "SEN304"] == [2]
    yaml = f"password: {SECRET}  # pragma: allowlist secret\ntoken: {SECRET}  # noqa\n"
    verdict = gate_new_file("deploy/values.yaml", yaml)
    assert [f.line for f in verdict.findings if f.rule == "SEN304"] == [2]


def test_the_installed_gate_blocks_a_staged_credential_behind_a_bare_noqa(repo):
    repo.write("app.py", "import os\n")
    repo.add("app.py")
    repo.commit("init")
    repo.write("app.py", f"import os\n\n{LINE}  # noqa\nTOKEN = \"{SECRET}x\"  # noqa: S105\n")
    repo.add("app.py")
    proc = run_sentinel("check", "--format", "concise", "--no-memory", cwd=repo.path)
    assert_clean_exit(proc, 1)
    assert "app.py:3:" in proc.stdout and "SEN304" in proc.stdout
    assert "app.py:4:" not in proc.stdout  # named: silenced
    assert SECRET not in proc.stdout + proc.stderr
    proc = run_sentinel("explain", "SEN304", cwd=repo.path)
    said = " ".join(proc.stdout.replace("`", "").split())  # as the terminal shows it
    assert "# gitleaks:allow" in said and "a bare # noqa, # nosec or # sentinel: ignore" in said
