"""sentinel.globs answers common patterns with string operations and the rest with pathspec's regexes: both must
give pathspec's own answers, pattern by pattern and for whole lists (the last matching pattern wins)."""

from __future__ import annotations

import random
import subprocess
import sys

import pathspec
import pytest
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from sentinel import globs, roles
from sentinel.globs import Matcher, fast_pattern, translate

SEGMENTS = ["a", "b", "ab", "ba", "x.py", "a.py", ".x", "x.y", "test", "tests", "data", "a-b", "...", ".", "..",
            "*", "**", "*.py", "a*", "*b", "a*b", "*a*", "*.x*", "a*b*a", "?", "a?", "[ab]", "\\*", "a**b", "",
            " ", "a ", "#a", "!a", "docs", "README.*"]
NAMES = ["a", "b", "ab", "ba", "aab", "abb", "x.py", "a.py", "b.a", ".x", "x.y", "test", "tests", "data", "a-b",
         "docs", "README.md", "README", "*", "**", "...", ".", "..", "a b", "#a", "!a", "é"]


def reference(patterns, path: str) -> bool:
    """pathspec itself, with the patterns' gitignore translation and the last matching pattern winning (what
    sentinel.globs documents; GitIgnoreSpec would also rank a pattern naming the file over one naming its
    directory)."""
    return pathspec.PathSpec.from_lines(GitIgnoreSpecPattern, patterns).match_file(path)


def regex_only(patterns, path: str) -> bool:
    return Matcher(translate(patterns)).match(path)


def random_pattern(rng: random.Random) -> str:
    segs = [rng.choice(SEGMENTS) for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4)))]
    pattern = "/".join(segs)
    if rng.random() < 0.15:
        pattern = "/" + pattern
    if rng.random() < 0.3:
        pattern += "/"
    if rng.random() < 0.2:
        pattern = "!" + pattern
    return pattern


def random_path(rng: random.Random) -> str:
    path = "/".join(rng.choice(NAMES) for _ in range(rng.randint(1, 5)))
    odd = rng.random()
    if odd < 0.03:
        path = "/" + path
    elif odd < 0.06:
        path += "/"
    elif odd < 0.08:
        path = path.replace("/", "//", 1)
    elif odd < 0.10:
        path += "\n"
    return path


def plain(path: str) -> bool:
    """A path as git names files (pathspec's match_file normalises the others its own way)."""
    return "\n" not in path and not {"", ".", ".."} & set(path.split("/"))


def valid(pattern: str) -> bool:
    try:
        translate([pattern])
    except ValueError:
        return False
    return True


def test_common_shapes_take_the_fast_path():
    for pattern in ("conftest.py", "docs/", "*.md", "README.*", "test_*.py", "*-examples/", ".github/workflows/",
                    "tests/**/data/", "tests/**/*.json", "!requirements/**", "!docs/requirements*.txt",
                    "*.generated.*", "**/a/b", "a/**/b/**/c", "tests/*", "*/docs/*.py", "/a/*"):
        assert fast_pattern(pattern) is not None, pattern
    for pattern in ("a?", "[ab].py", "\\*.py", "*", "*/", "/*", "**", "a**b", "a/**/", "/**/a", "**/**/a", "a//b",
                    "#a", "a b", "!!a"):
        assert fast_pattern(pattern) is None, pattern


def test_every_default_role_pattern_takes_the_fast_path():
    # the point of the fast path: a hook run compiles no role regex
    slow = [p for pats in roles.DEFAULT_PATTERNS.values() for p in pats if fast_pattern(p) is None]
    assert slow == []


def test_one_pattern_answers_as_pathspec_does():
    rng = random.Random(14)
    checked = fast = 0
    while checked < 6000:
        pattern = random_pattern(rng)
        if not valid(pattern):
            assert fast_pattern(pattern) is None, pattern  # what pathspec rejects never skips its check
            continue
        fast += fast_pattern(pattern) is not None
        matcher = Matcher(translate([pattern]), [pattern])
        for _ in range(12):
            path = random_path(rng)
            expected = regex_only([pattern], path)
            assert matcher.match(path) == expected, (pattern, path)
            if plain(path):  # the regexes too: '*/' and '**/' translate to an unanchored "/" (pathspec searches)
                assert expected == reference([pattern], path), (pattern, path)
        checked += 1
    assert fast > checked // 4  # the generator exercises the fast path, not only the fallback


def test_pattern_lists_answer_as_pathspec_does_last_match_wins():
    rng = random.Random(1400)
    for _ in range(2500):
        patterns = [p for p in (random_pattern(rng) for _ in range(rng.randint(1, 7))) if valid(p)]
        if not patterns:
            continue
        matcher = Matcher(translate(patterns), patterns)
        all_fast = all(fast_pattern(p) is not None for p in patterns)
        for _ in range(10):
            path = random_path(rng)
            expected = regex_only(patterns, path)
            assert matcher.match(path) == expected, (patterns, path)
            if plain(path):
                assert expected == reference(patterns, path), (patterns, path)


@pytest.mark.parametrize("path", ["tests/data/x.py", "pkg/tests/unit/fixtures/a.json", "tests/models/w.json",
                                  "docs/requirements-dev.txt", "requirements/dev.txt", "docs/index.md",
                                  "a/node_modules/b.js", "x_pb2.py", "lib/yarn.lock", "ui/app.min.js",
                                  "a/b.generated.ts", "typing-examples/x.py", ".github/workflows/ci.yml",
                                  "src/.github/workflows/ci.yml", "tests", "src/tests.py", "README",
                                  "doc/README.rst", "docs", "a//docs/x", "/docs/x", "docs/x/", "docs/x\n"])
def test_default_role_lists_answer_as_pathspec_does(path):
    for patterns in roles.DEFAULT_PATTERNS.values():
        expected = regex_only(patterns, path)
        assert Matcher(translate(patterns), patterns).match(path) == expected
        if plain(path):
            assert expected == reference(patterns, path)


def test_no_regex_is_compiled_when_the_fast_path_answers():
    globs._compile.cache_clear()
    patterns = roles.DEFAULT_PATTERNS[roles.FIXTURE]
    matcher = Matcher(translate(patterns), patterns)
    assert matcher.match("tests/unit/data/x.py") and not matcher.match("src/app.py")
    assert globs._compile.cache_info().currsize == 0
    assert not matcher.match("src//app.py")  # a path only the regex answers exactly: compiled then
    assert globs._compile.cache_info().currsize == 1


def test_patterns_not_translated_ahead_need_no_pathspec_until_a_path_needs_the_regex():
    code = ("import sys\nfrom sentinel.globs import matches\n"
            "print(matches('tests/a.py', ['tests/*.py', '!docs/']), matches('a.py', ['tests/*.py']),"
            " 'pathspec' in sys.modules, matches('tests/a.py/', ['tests/*.py']), 'pathspec' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False", "False", "True", "True"]
    with pytest.raises(ValueError, match="empty pattern"):
        globs.matcher_for(("a", " "))


def test_a_lazily_translated_matcher_answers_as_a_translated_one():
    rng = random.Random(7)
    for _ in range(1500):
        patterns = tuple(p for p in (random_pattern(rng) for _ in range(rng.randint(1, 5))) if valid(p))
        if not patterns or any(fast_pattern(p) is None for p in patterns):
            continue
        lazy, eager = Matcher(None, patterns), Matcher(translate(patterns), patterns)
        for _ in range(8):
            path = random_path(rng)
            assert lazy.match(path) == eager.match(path) == regex_only(patterns, path), (patterns, path)


def test_a_config_translates_only_the_lists_string_operations_cannot_answer():
    from sentinel.config import ConfigError, validate

    cfg = validate({"exclude": ["build/", "*.min.js"], "roles": {"fixture": ["data?/", "golden/"]}}, "test")
    assert list(cfg.compiled_globs) == ["data?/\0golden/"]  # the defaults and `exclude` need no regex
    assert cfg.matcher(cfg.exclude).match("a/build/x.py") and not cfg.matcher(cfg.exclude).match("builds/x.py")
    resolve = roles.RoleResolver(cfg).by_path
    assert resolve("pkg/data1/x.py") == "fixture" and resolve("pkg/golden/x.py") == "fixture"
    assert resolve("tests/test_a.py") == "test" and resolve("docs/requirements-dev.txt") is None
    with pytest.raises(ConfigError, match="exclude"):
        validate({"exclude": ["a/**/", "["]}, "test")


@pytest.mark.parametrize("pattern", ["*/", "**/", "!*/", "*/**", "**/*/"])
def test_patterns_pathspec_leaves_unanchored_match_anywhere_as_it_does(pattern):
    # pathspec translates '*/' and '**/' to a bare "/" and looks for it anywhere in the path: every file in a
    # directory matches (these matched nothing here before)
    for path in ("a/b.py", "x.py", "a/b/c.py", "docs/x.md"):
        patterns = ["*", pattern] if pattern.startswith("!") else [pattern]
        assert Matcher(translate(patterns), patterns).match(path) == reference(patterns, path), (pattern, path)
    assert globs.matches("pkg/mod.py", ["*/"]) and not globs.matches("setup.py", ["*/"])


def test_a_matcher_without_its_patterns_uses_the_regexes():
    patterns = ("docs/", "!docs/requirements*.txt")
    matcher = Matcher(translate(patterns))
    assert matcher.match("docs/a.md") and not matcher.match("docs/requirements-dev.txt")
