"""Helpers of the hardening tests: the installed console script, output checks, and Python spelled the way Python
reads it but the eye does not."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def sentinel_script() -> str:
    """The `sentinel` console script of a plain, non-editable install of this checkout (conftest's
    installed_sentinel, built once per session); the environment's own script when run without it."""
    from tests.conftest import _INSTALLED

    if _INSTALLED.get("path"):
        return _INSTALLED["path"]
    beside = Path(sys.executable).with_name("sentinel")
    if beside.exists():
        return str(beside)
    found = shutil.which("sentinel")
    assert found, "the sentinel console script is not installed (pip install -e '.[test]')"
    return found


def run_sentinel(*args: str, cwd, input: bytes | str | None = None, env: dict | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the installed `sentinel` in a subprocess; stdout/stderr as text (undecodable bytes escaped)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("PRE_COMMIT_TO_REF", None)
    data = input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input
    proc = subprocess.run([sentinel_script(), *args], cwd=cwd, capture_output=True, input=data, env=full_env,
                          timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode("utf-8", "backslashreplace"),
                                       proc.stderr.decode("utf-8", "backslashreplace"))


def assert_clean_exit(proc: subprocess.CompletedProcess, *codes: int) -> None:
    """No traceback, no internal error, and one of the expected exit codes."""
    for stream in (proc.stdout, proc.stderr):
        assert "Traceback" not in stream, stream
        assert "internal error" not in stream, stream
    assert proc.returncode in codes, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])


def widen_identifiers(text: str) -> str:
    """Python source with every identifier that is not a keyword in fullwidth letters: the same program to Python,
    which reads identifiers in their NFKC form (PEP 3131), so `ｅｖａｌ(x)` calls eval. Keywords stay ASCII: Python
    matches them before normalising (a fullwidth `ｒｅｔｕｒｎ` is a syntax error)."""
    import io
    import keyword
    import tokenize

    lines = text.splitlines(keepends=True)
    names = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.NAME
             and not keyword.iskeyword(t.string) and not keyword.issoftkeyword(t.string)
             and t.string not in ("True", "False", "None")]
    for t in reversed(names):  # right to left, so earlier columns stay valid
        (row, col), (_, end) = t.start, t.end
        wide = "".join(chr(ord(c) + 0xFEE0) if c.isascii() and c.isalpha() else c for c in t.string)
        lines[row - 1] = lines[row - 1][:col] + wide + lines[row - 1][end:]
    return "".join(lines)
