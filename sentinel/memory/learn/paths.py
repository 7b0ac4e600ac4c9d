"""What a changed file is, from its path alone: source, test, news fragment, changelog, docs, deps, ci, other."""

from __future__ import annotations

import re

_TEST = re.compile(r"(?:^|/)(?:tests?|testing|test_?suite|spec)/|(?:^|/)test_[^/]+$|_tests?\.[a-z]+$|"
                   r"(?:^|/)conftest\.py$|\.(?:test|spec)\.[jt]sx?$", re.IGNORECASE)
# towncrier and friends: news/1234.bugfix.rst, changelog.d/1234.fix.md, CHANGES/123.bugfix, newsfragments/...
_FRAGMENT_DIR = re.compile(r"(?:^|/)(?:news|newsfragments|changes|changelog\.d|changelog|\.changes|\.changelog|"
                           r"changelog/unreleased[^/]*|unreleased[^/]*)/", re.IGNORECASE)
_CHANGELOG_FILE = re.compile(r"(?:^|/)(?:changes|changelog|history|news|release[-_]?notes|whatsnew)[^/]*"
                             r"\.(?:rst|md|txt|markdown)$|(?:^|/)(?:CHANGES|CHANGELOG|HISTORY|NEWS)$", re.IGNORECASE)
_DOCS = re.compile(r"(?:^|/)(?:docs?|documentation|examples?)/|\.(?:rst|md|txt|markdown|adoc)$|"
                   r"(?:^|/)(?:README|LICENSE|AUTHORS|CONTRIBUTORS|CODE_OF_CONDUCT)[^/]*$", re.IGNORECASE)
_DEPS = re.compile(r"(?:^|/)(?:requirements[^/]*\.(?:txt|in)|constraints[^/]*\.txt|[^/]*\.lock|Pipfile|"
                   r"package(?:-lock)?\.json|yarn\.lock|pnpm-lock\.yaml|go\.(?:mod|sum)|Cargo\.(?:toml|lock)|"
                   r"pyproject\.toml|setup\.cfg|setup\.py|tox\.ini|noxfile\.py|\.pre-commit-config\.yaml|"
                   r"environment\.ya?ml)$", re.IGNORECASE)
_CI = re.compile(r"(?:^|/)(?:\.github|\.circleci|\.gitlab-ci\.yml|\.travis\.yml|azure-pipelines\.yml|"
                 r"appveyor\.yml|\.ci)(?:/|$)", re.IGNORECASE)
SOURCE_EXT = re.compile(r"\.(?:py|pyx|pxd|pyi|c|h|cc|cpp|hpp|rs|go|java|kt|scala|rb|php|js|mjs|cjs|ts|tsx|jsx|"
                        r"cs|swift|m|mm|lua|pl|sh|sql)$", re.IGNORECASE)
# towncrier fragment types that mean "a bug was fixed"
BUGFIX_TYPES = re.compile(r"\.(?:bugfix|bugfixes|bug|bugs|fix|fixes|fixed|regression)(?:\.\d+)?(?:\.[a-z]+)?$",
                          re.IGNORECASE)


def role(path: str) -> str:
    if _CI.search(path):
        return "ci"
    if _FRAGMENT_DIR.search(path) and not SOURCE_EXT.search(path):
        return "fragment"
    if _CHANGELOG_FILE.search(path):
        return "changelog"
    if _TEST.search(path):
        return "test"
    if _DEPS.search(path):
        return "deps"
    if _DOCS.search(path):
        return "docs"
    if SOURCE_EXT.search(path):
        return "source"
    return "other"


def is_bugfix_fragment(path: str) -> bool:
    return bool(BUGFIX_TYPES.search(path.rsplit("/", 1)[-1]))


_NOISE_PARTS = frozenset({"src", "lib", "_internal", "internal", "__init__", "pkg", "source", "python", "core",
                          "_src", "impl", "main", "app"})


def component_of(path: str, project_words: frozenset[str] = frozenset()) -> str:
    """A readable component name for a source file: its package and module, without the project's own name,
    'src', '__init__' and extensions: 'src/werkzeug/routing/rules.py' -> 'routing rules'."""
    parts = [p for p in path.split("/") if p]
    if parts:
        parts[-1] = re.sub(r"\.[A-Za-z0-9]+$", "", parts[-1])
    words: list[str] = []
    for p in parts[-3:]:
        p = p.strip("_").replace("_", " ").replace("-", " ").strip()
        if not p or p.lower() in _NOISE_PARTS or p.lower() in project_words or re.fullmatch(r"v?\d+", p):
            continue
        if p.lower() not in [w.lower() for w in words]:
            words.append(p.lower())
    return " ".join(words[-2:]) if words else ""
