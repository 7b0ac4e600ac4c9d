"""Every shape a config file can take: what the README shows works pasted into either file, and anything else is a
clear message naming the key and saying what to change (exit 2), never a traceback and never silently accepted."""

from __future__ import annotations

import json
import re

import pytest

from sentinel import config as cfgmod
from sentinel.config import Config, ConfigError, find_config, validate
from sentinel.record import Record
from tests.conftest import PROJECT, GitRepo

README_TOML = re.search(r"```toml\n(\[tool\.sentinel\]\n.*?)```", (PROJECT / "README.md").read_text(encoding="utf-8"),
                        flags=re.S).group(1)


@pytest.fixture
def repo(tmp_path, installed_sentinel):
    r = GitRepo(tmp_path / "r", installed_sentinel)
    r.write("app.py", "x = 1\n")
    r.add("app.py")
    r.commit("init")
    return r


@pytest.mark.parametrize("name", [".sentinel.toml", "pyproject.toml"])
def test_the_readme_block_works_pasted_into_either_file(repo, name):
    repo.write(name, README_TOML)
    out = repo.sentinel("config", "--format", "json")
    assert out.returncode == 0, out.stderr
    cfg = json.loads(out.stdout)["config"]
    assert cfg["severity"] == {"SEN205": "off"} and cfg["jail"]["banned_imports"] == ["pickle"]
    assert cfg["style"]["line_length"] == 100 and cfg["roles"]["test"] == ["qa/"]
    repo.write("app.py", "x = 2\n")
    repo.add("app.py")
    assert repo.sentinel("check", "--no-memory").returncode == 0


@pytest.mark.parametrize("name, text, says", [
    ("pyproject.toml", 'tool = "x"\n', "`tool` is a string, but [tool.sentinel] needs it to be a table"),
    ("pyproject.toml", "[tool]\nsentinel = 3\n", "`tool.sentinel` is an integer"),
    ("pyproject.toml", '[tool.sentinel]\njail = "strict"\n', "jail"),
    ("pyproject.toml", '[tool.sentinel.severity]\nsen303 = "off"\n', "severity.sen303: unknown rule code; write SEN303"),
    (".sentinel.toml", '[tool.sentinel]\nfail-level = "error"\n\n[severity]\nSEN205 = "off"\n',
     "both [tool.sentinel] and top-level keys (severity)"),
    (".sentinel.toml", "[tool.ruff]\nline-length = 100\n", "tool: unknown key"),
    (".sentinel.toml", '[tool.sentinel]\nfail-level = "error"\n[tool.ruff]\nline-length = 100\n',
     "tool.ruff: not Sentinel's configuration"),
    (".sentinel.toml", 'severity = ["SEN205"]\n', "severity"),
])
def test_a_wrong_shape_is_exit_2_saying_what_to_change(repo, name, text, says):
    repo.write(name, text)
    for args in (("config",), ("check", "--no-memory")):
        out = repo.sentinel(*args)
        assert out.returncode == 2, (args, out.stdout, out.stderr)
        assert says in out.stderr and "Traceback" not in out.stderr, out.stderr


def _leaves(cls: type[Record], prefix: tuple[str, ...] = ()):
    for name in cls._fields:
        if name in cfgmod._INTERNAL_FIELDS:
            continue
        kind = cfgmod._annotation(cls, name)
        nested = getattr(cfgmod, kind, None) if kind and kind.isidentifier() else None
        yield prefix + (name.replace("_", "-"),)
        if isinstance(nested, type) and issubclass(nested, Record):
            yield from _leaves(nested, prefix + (name.replace("_", "-"),))


WRONG = ["x", 3, -1, 1.5, True, [], ["a", 1], {"a": 1}, {"a": ["b"]}, {"a": {"b": 1}}, [{"a": 1}]]


@pytest.mark.parametrize("key", [".".join(k) for k in _leaves(Config)])
def test_every_key_with_every_wrong_value_is_a_config_error(key):
    """Each value either validates or is a ConfigError naming the key: no other exception reaches the user."""
    for value in WRONG:
        raw: dict = {}
        node = raw
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        try:
            validate(raw, "pyproject.toml")
        except ConfigError as exc:
            assert parts[0] in str(exc), (key, value, str(exc))


@pytest.mark.parametrize("text", ['tool = "x"\n', "tool = []\n", "[tool]\nsentinel = []\n", "[tool]\nsentinel = 1\n"])
def test_pyproject_shapes_are_config_errors(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    with pytest.raises(ConfigError, match="tool"):
        find_config(str(tmp_path))
