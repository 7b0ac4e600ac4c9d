"""How to silence a finding, in the words every output uses: the comment to put on its line (in the file's own
comment syntax, naming the rule's real code), or — where a line cannot carry one (the commit message, a JSON
file, a finding about the change) — the configuration that turns the rule off."""

from __future__ import annotations

from sentinel.languages import HASH_COMMENT, SLASH_COMMENT, detect_language
from sentinel.models import Finding

# Comment syntaxes whose comments sentinel.lexer reads (so sentinel.suppress sees the pragma there).
_LEADERS = {**dict.fromkeys(HASH_COMMENT, "# "), **dict.fromkeys(SLASH_COMMENT, "// "), "python": "# ",
            "rust": "// ", "sql": "-- "}


def inline_pragma(f: Finding) -> str | None:
    """``# sentinel: ignore[SEN301]`` in the comment syntax of the finding's file, or None when its line
    cannot carry one."""
    if not f.line or not f.path:
        return None
    leader = _LEADERS.get(detect_language(f.path))  # COMMIT_MSG and other pseudo-paths have no language
    return f"{leader}sentinel: ignore[{f.rule}]" if leader else None


def config_line(f: Finding) -> str:
    """The configuration line that turns the rule off (under ``[tool.sentinel.severity]``)."""
    return f'{f.rule} = "off"'


def phrase(f: Finding) -> str:
    """One plain sentence: how to silence this finding, and where to read why it matters."""
    pragma = inline_pragma(f)
    how = (f'add "{pragma}" to the line to silence it' if pragma
           else f'turn the rule off with {config_line(f)} under [tool.sentinel.severity]')
    return f'note: {how}; "sentinel explain {f.rule}" says why it matters'
