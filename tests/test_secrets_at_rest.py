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


# A real-looking GitHub token (not a placeholder) and a JWT; both must never leave the gate.
TOKEN = "ghp_" + "Zq7Xw2Lm9Rt4Yp8Kd3Vb6Nc1Hs5Jf0Ga7Qe2"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
FORMATS = ("text", "concise", "json", "sarif", "github", "markdown")


# Written as prose, with nothing between the word and the value (issue 24's N4).
PROSE = ("Zq7-s3cret-pw-82", "hunter2!y")


def _leaks(text: str) -> list[str]:
    return [s for s in (TOKEN, JWT, PASSWORD, *PROSE) if s in text]


def test_secrets_on_offending_lines_reach_no_store_no_pattern_and_no_report(repo):
    # The token sits on a line another rule reports (a TODO marker): that finding's code line is what
    # the hypothesis store's signature, `memory patterns` and recall would otherwise carry in clear.
    for attempt in range(3):  # three attempts at the change: the last one recalls the others as a pattern
        repo.write("app.py", f'API = call(token="{TOKEN}")  # TODO: rotate, password is {PASSWORD}\n'
                             + "".join(f"X{i} = {i}\n" for i in range(attempt)))
        repo.add("app.py")
        proc = run_sentinel("check", "--format", "json", cwd=repo.path)
        assert_clean_exit(proc, 1)
        assert not _leaks(proc.stdout + proc.stderr)
    proc = run_sentinel("memory", "patterns", "--json", cwd=repo.path)
    assert_clean_exit(proc, 0)
    patterns = __import__("json").loads(proc.stdout)["patterns"]
    assert patterns, "no recorded pattern: this test would prove nothing"
    assert not _leaks(proc.stdout)
    proc = run_sentinel("memory", "patterns", cwd=repo.path)
    assert_clean_exit(proc, 0)
    assert "SEN" in proc.stdout and not _leaks(proc.stdout)
    for fmt in FORMATS:
        proc = run_sentinel("check", "--format", fmt, cwd=repo.path)
        assert not _leaks(proc.stdout + proc.stderr), fmt
    stored = _files_under(repo.path / ".git" / "sentinel")
    assert any(p.endswith("hypotheses.sqlite3") for p in stored)
    assert not [p for p, data in stored.items() if any(s.encode() in data for s in (TOKEN, JWT, PASSWORD))]


def test_claims_do_not_echo_tokens_or_passwords_from_the_message(repo):
    repo.write("a.py", "x = 1\n")
    repo.add("a.py")
    repo.commit("base")
    repo.write("a.py", "x = 2\n")
    repo.add("a.py")
    # The claim's own line carries the secrets: a claim finding quotes that line.
    repo.commit(f"Fix login\n\nAll tests pass on staging (token {JWT}, the admin password is {PASSWORD}).\n")
    for fmt in FORMATS:
        proc = run_sentinel("check", "--range", "HEAD~1..HEAD", "--format", fmt, cwd=repo.path)
        assert_clean_exit(proc, 0, 1)
        assert "SEN6" in proc.stdout or fmt in ("sarif",), (fmt, proc.stdout[-500:])
        assert not _leaks(proc.stdout + proc.stderr), fmt
    stored = _files_under(repo.path / ".git" / "sentinel")
    assert not [p for p, data in stored.items() if any(s.encode() in data for s in (JWT, PASSWORD))]


def test_memory_learn_sends_and_stores_no_secret(repo, monkeypatch):
    # A fix commit whose message and diff carry credentials, standardised by an LLM (a loopback
    # OpenAI-compatible server) that echoes one back: neither the prompt nor the stored card may hold them.
    import json

    from tests.test_learn import run_cli
    from tests.test_learn_remote import DRAFT
    from tests.test_llm_review import FakeLLM

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    repo.write("src/shop/cart.py", "class Cart:\n    def remove_item(self, sku):\n        return self.items[sku]\n")
    repo.add("src/shop/cart.py")
    repo.commit("init")
    repo.write("src/shop/cart.py", "class Cart:\n    def remove_item(self, sku):\n"
                                   f"        entry = self.items.get(sku)  # staging token {TOKEN}\n"
                                   "        if entry is None:\n            raise LookupError(sku)\n        return entry\n")
    repo.add("src/shop/cart.py")
    sha = repo.commit(f"Fix KeyError in remove_item for an unknown sku\n\nStaging token {TOKEN}, "
                      f"the admin password is {PASSWORD}, db password {PROSE[0]}, passwd {PROSE[1]}.\n")
    echoed = dict(DRAFT, root_cause=DRAFT["root_cause"] + f" The log showed the staging token {TOKEN}.")
    with FakeLLM() as llm:
        llm.by_model["test-model"] = {"content": json.dumps(echoed)}
        proc = run_cli(repo, "memory", "learn", "--llm", "openai/test-model", "--api-base", llm.api_base, "--json",
                       env={"OPENAI_API_KEY": "dummy", "SENTINEL_LEARNED_STORE": ""})
        sent = json.dumps(llm.requests)
    assert proc.returncode == 0, proc.stderr
    assert llm.requests and "remove_item" in sent, "nothing was sent: this test would prove nothing"
    assert not _leaks(sent)
    assert not _leaks(proc.stdout + proc.stderr)
    card = run_cli(repo, "memory", "show", f"lx-{repo.path.name}-{sha[:10]}", "--json")
    assert card.returncode == 0 and "remove_item" in card.stdout, (json.loads(proc.stdout)["runs"][0]["counts"], card.stderr)
    assert not _leaks(card.stdout)
    stored = _files_under(repo.path / ".git")
    assert not [p for p, data in stored.items() if any(s.encode() in data for s in (TOKEN, PASSWORD, *PROSE))
                and "sentinel" in p]
