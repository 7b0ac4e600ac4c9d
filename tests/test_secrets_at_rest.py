"""Nothing the gate stores or caches holds a secret: caches keep derived values and digests only."""

from __future__ import annotations

from pathlib import Path

from tests.harden_util import assert_clean_exit, run_sentinel

PASSWORD = "Zq7-s3cret-pw-81"


def _files_under(path: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def test_config_caches_do_not_copy_config_files(repo):
    # A tox.ini with a database URL, a pyproject.toml with a token: the caches under .git/sentinel
    # are keyed by the files' contents but must not contain them.
    repo.write("tox.ini", f"[testenv]\nsetenv =\n    DATABASE_URL=postgres://app:{PASSWORD}@db/app\n"
                          "[flake8]\nmax-line-length = 100\n")
    repo.write("pyproject.toml", f'[tool.ruff]\nline-length = 100\n# token: {PASSWORD}\n\n[tool.sentinel]\n'
                                 'fail-level = "error"\n')
    repo.write("a.py", "x = 1  # " + "long " * 25 + "\n")
    repo.add("tox.ini", "pyproject.toml", "a.py")
    for _ in range(2):  # the second run is served from the caches
        proc = run_sentinel("check", cwd=repo.path)
        assert_clean_exit(proc, 0, 1)
    cached = _files_under(repo.path / ".git" / "sentinel")
    assert cached, "no cache was written: this test would prove nothing"
    leaks = [p for p, data in cached.items() if PASSWORD.encode() in data]
    assert not leaks, leaks
