"""The config built without pydantic (`exact_config`) is the config pydantic builds, for every table it accepts;
every table it does not accept goes to pydantic, whose verdict and messages stand."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel import config as cfgmod
from sentinel.config import Config, ConfigError, exact_config, to_plain, validate
from sentinel.models import FilterMode, Severity
from sentinel.record import Record
from sentinel.record_schema import adapter

SECTIONS = {name: cfgmod._annotation(Config, name) for name in Config._fields}


def _pydantic(normalized: dict) -> Config:
    return adapter(Config).validate_python(normalized)


def _value(kind: str):
    if kind.endswith(" | None"):
        return _value(kind.removesuffix(" | None"))
    text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
    return {
        "bool": st.booleans(),
        "int": st.integers(-10 ** 6, 10 ** 6),
        "float": st.one_of(st.floats(allow_nan=False, width=64), st.integers(-2 ** 53, 2 ** 53)),
        "str": text,
        "list[str]": st.lists(text, max_size=4),
        "dict[str, str]": st.dictionaries(text, text, max_size=3),
        "dict[str, list[str]]": st.dictionaries(text, st.lists(text, max_size=3), max_size=3),
        "Severity": st.sampled_from([s.value for s in Severity]),
        "FilterMode": st.sampled_from([m.value for m in FilterMode]),
    }[kind]


def _record_tables(cls: type[Record]):
    fields = {}
    for name in cls._fields:
        kind = cfgmod._annotation(cls, name)
        if name in cfgmod._INTERNAL_KEYS:
            continue
        nested = getattr(cfgmod, kind, None)
        fields[name] = _record_tables(nested) if isinstance(nested, type) and issubclass(nested, Record) \
            else _value(kind)
    return st.fixed_dictionaries({}, optional=fields)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_record_tables(Config))
def test_every_table_of_exact_types_builds_what_pydantic_builds(table):
    mine = exact_config(table)
    assert mine is not None, table
    assert to_plain(mine) == to_plain(_pydantic(table))
    for name in Config._fields:  # the same types too (1 where a float is declared is 1.0)
        if isinstance(getattr(mine, name), Record):
            for sub in type(getattr(mine, name))._fields:
                a, b = getattr(getattr(mine, name), sub), getattr(getattr(_pydantic(table), name), sub)
                assert type(a) is type(b), (name, sub, a, b)


def test_every_annotation_of_the_config_is_one_the_exact_path_knows():
    """A new field type would silently send every config to pydantic (slow, not wrong): say so here."""
    for cls in [Config] + [getattr(cfgmod, k) for k in SECTIONS.values() if k and k.endswith("Config")]:
        for name in cls._fields:
            if name in cfgmod._INTERNAL_KEYS:
                continue
            kind = cfgmod._annotation(cls, name)
            nested = getattr(cfgmod, kind, None)
            assert (isinstance(nested, type) and issubclass(nested, Record)) or \
                kind.removesuffix(" | None") in cfgmod._EXACT, (cls.__name__, name, kind)


@pytest.mark.parametrize("table", [
    {"memory": {"recall_k": 3.0}},  # pydantic turns a whole float into an int; the exact path does not convert
    {"memory": {"recall_k": True}},
    {"memory": {"recall_k": "3"}},
    {"chaos": {"entropy_threshold": "4.5"}},
    {"chaos": {"entropy_threshold": True}},
    {"style": {"line_length": 2 ** 70}},
    {"fail_level": "ERROR"},
    {"fail_level": 3},
    {"exclude": "docs/**"},
    {"exclude": ["a", 1]},
    {"severity": {"SEN301": 2}},
    {"per_path_ignores": {"tests/**": "SEN301"}},
    {"jail": ["not", "a", "table"]},
    {"jail": {"surprise": 1}},
    {"surprise": 1},
    {"source": "elsewhere"},
    {"compiled_globs": {}},
])
def test_a_table_that_needs_converting_or_is_wrong_goes_to_pydantic(table, monkeypatch):
    assert exact_config(table) is None
    assert _outcome(table) == _outcome(table, monkeypatch), table


def _outcome(table: dict, pydantic_only=None):
    """validate's result (plain data) or error message; with `pydantic_only` (a monkeypatch) as before the exact
    path existed."""
    if pydantic_only is not None:
        pydantic_only.setattr(cfgmod, "exact_config", lambda normalized: None)
    try:
        return "ok", to_plain(validate(dict(table), "pyproject.toml"))
    except ConfigError as exc:
        return "error", str(exc)
    finally:
        if pydantic_only is not None:
            pydantic_only.undo()


@settings(max_examples=100, deadline=None)
@given(_record_tables(Config))
def test_validate_gives_what_it_gave_through_pydantic_alone(table):
    with pytest.MonkeyPatch.context() as mp:
        assert _outcome(table) == _outcome(table, mp)


def test_validate_reports_through_pydantic_as_before():
    with pytest.raises(ConfigError, match=r"jail\.surprise: unknown key"):
        validate({"jail": {"surprise": 1}}, "pyproject.toml")
    with pytest.raises(ConfigError, match=r"memory\.recall-k: Input should be a valid integer"):
        validate({"memory": {"recall-k": "many"}}, "pyproject.toml")
    with pytest.raises(ConfigError, match=r"memory\.recall-k: expected 0 or more"):  # the ranges still apply
        validate({"memory": {"recall-k": -1}}, "pyproject.toml")
