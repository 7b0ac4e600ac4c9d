"""A rule's documentation as text or Markdown: `sentinel explain`, `sentinel rules --format
markdown` (docs/rules.md) and the SARIF rule help all say the same thing from the rule's data."""

from __future__ import annotations

import os

from sentinel.lazyre import lazy_compile
from sentinel.report.links import rule_url

_BACKTICKS = lazy_compile(r"`+")
_FENCE_LANG = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".ts": "typescript", ".tsx": "tsx",
               ".go": "go", ".rs": "rust", ".java": "java", ".rb": "ruby", ".sh": "sh", ".bash": "bash",
               ".sql": "sql", ".toml": "toml", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".c": "c",
               ".h": "c", ".cpp": "cpp", ".cs": "csharp", ".php": "php", ".kt": "kotlin", ".swift": "swift",
               ".cfg": "ini", ".ini": "ini", ".txt": "text", ".md": "markdown"}


def fence(code: str, path: str = "") -> str:
    longest = max((len(m) for m in _BACKTICKS.findall(code)), default=0)
    ticks = "`" * max(3, longest + 1)
    lang = _FENCE_LANG.get(os.path.splitext(path)[1].lower(), "")
    return f"{ticks}{lang}\n{code.strip(chr(10))}\n{ticks}"


def _indent(code: str) -> str:
    return "\n".join("    " + ln for ln in code.strip("\n").split("\n"))


def example_text(rule, counter: bool = False) -> str:
    """The example (or counter-example) with the message, task and file name it is judged with."""
    code = rule.counter_example if counter else rule.example
    path = (rule.counter_example_path or rule.example_path) if counter else rule.example_path
    message = rule.example_message
    if counter and rule.counter_example_message is not None:
        message = rule.counter_example_message
    task = rule.example_task
    if counter and rule.counter_example_task is not None:
        task = rule.counter_example_task
    if not message and not task:
        return code
    parts = []
    if task:
        parts.append(f"task: {task}")
    if message:
        parts.append(f"commit message:\n{_indent(message)}")
    parts.append(f"change ({path}):\n{_indent(code)}")
    return "\n".join(parts)


def _about_the_change(rule) -> bool:
    """Rules judged on the message or the task: no line of code to put a suppression comment on."""
    return bool(rule.example_message or rule.example_task)


def silencing(rule) -> str:
    off = f"`{rule.code} = \"off\"` under `[tool.sentinel.severity]`"
    if _about_the_change(rule):
        return f"Turn the rule off with {off}."
    others = ""
    if rule.noqa:
        others = " The same line's " + ", ".join(_suppression_comment(c) for c in rule.noqa[:4])
        others += (" and the rule's other equivalents" if len(rule.noqa) > 4 else "") + " also silence it"
        others += ", as does a bare `# noqa`" + (" or `# nosec`" if rule.security else "") + "."
    elif rule.security:
        others = " A bare `# noqa` or bandit's `# nosec` on the line also silence it."
    return (f"Silence one line with `# sentinel: ignore[{rule.code}]` on that line, or turn the rule off with "
            f"{off}.{others}")


_PYLINT_ID = lazy_compile(r"^[CRWEFI]\d{4}$")


def _suppression_comment(code: str) -> str:
    from sentinel.suppress import TYPE_CHECKER_CODES

    if code.lower() in TYPE_CHECKER_CODES:
        return f"`# pyright: ignore[{code}]`" if code.startswith("report") else f"`# type: ignore[{code}]`"
    if _PYLINT_ID.match(code) or not any(ch.isdigit() for ch in code):
        return f"`# pylint: disable={code}`"
    return f"`# noqa: {code}`"


_ROLE_WORDS = {"off": "not reported", "info": "information", "warning": "at most a warning"}


def role_policy(rule) -> str:
    """What the rule does outside product code, in words: "tests: at most a warning; fixture: not reported"; and
    in files checked as they are (--all-files), when that differs."""
    text = "every file role: as in product code" if not rule.roles else \
        "; ".join(f"{role}: {_ROLE_WORDS.get(action, 'as in product code')}" for role, action in rule.roles.items())
    existing = getattr(rule, "existing", "same")
    if existing != "same":
        text += f"; existing code (`--all-files`, a named file the change does not touch): " \
                f"{_ROLE_WORDS.get(existing, existing)}"
    return text


def equivalents(rule) -> str:
    return ", ".join(rule.noqa) if rule.noqa else "none"


def fix_text(rule) -> str:
    """What `--fix` does for the rule (its declared fix safety, and what the fixer does)."""
    from sentinel.fix.notes import DETAILS

    fix = getattr(rule, "fix", "none")
    detail = f": {DETAILS[rule.code]}" if rule.code in DETAILS and fix != "none" else ""
    if fix == "safe":
        return f"safe: `sentinel check --fix` applies it (preview with `--diff-fixes`){detail}"
    if fix == "unsafe":
        return f"unsafe (may change behaviour): applied only with `sentinel check --fix --unsafe-fixes`{detail}"
    return "none: no automatic fix"


def text(rule) -> str:
    out = [f"{rule.code} {rule.name} ({rule.check}, default severity: {rule.severity.value})", "",
           f"What it does\n  {rule.summary}", "", f"Why it matters\n  {rule.rationale}", "",
           "Example (fires)\n" + _indent(example_text(rule)), "",
           "Use instead\n" + _indent(example_text(rule, counter=True))]
    if rule.hint:
        out += ["", f"Hint: {rule.hint}"]
    if not _about_the_change(rule):
        out += ["", f"By file role\n  {role_policy(rule)}", "",
                f"Other linters' codes for it\n  {equivalents(rule)}", "", f"Fix\n  {fix_text(rule).replace('`', '')}"]
    out += ["", silencing(rule).replace("`", ""), f"Docs: {rule_url(rule.code)}"]
    return "\n".join(out) + "\n"


def markdown_body(rule) -> str:
    """What, why, example, use instead, hint: the help of a SARIF rule and a section of docs/rules.md."""
    parts = [rule.summary, "", f"**Why it matters.** {rule.rationale}"]
    example_path = rule.example_path
    counter_path = rule.counter_example_path or rule.example_path
    if rule.example:
        parts += ["", "**Example** (fires):", ""]
        if rule.example_message or rule.example_task:
            parts += [fence(example_text(rule), "")]
        else:
            parts += [fence(rule.example, example_path)]
    if rule.counter_example:
        parts += ["", "**Use instead:**", ""]
        if rule.counter_example_message or rule.example_message or rule.example_task:
            parts += [fence(example_text(rule, counter=True), "")]
        else:
            parts += [fence(rule.counter_example, counter_path)]
    if rule.hint:
        parts += ["", f"**Hint:** {rule.hint}"]
    if not _about_the_change(rule):
        parts += ["", f"**By file role:** {role_policy(rule)}.", "",
                  f"**Other linters' codes:** {equivalents(rule)}. **Fix:** {fix_text(rule)}."]
    parts += ["", silencing(rule)]
    return "\n".join(parts)


def markdown(rule) -> str:
    return (f"### {rule.code}\n\n**{rule.name}** \u2014 check `{rule.check}`, default severity "
            f"`{rule.severity.value}`\n\n{markdown_body(rule)}\n")


def markdown_page(rules) -> str:
    head = ["# Sentinel rules", "",
            "Generated by `sentinel rules --format markdown`; do not edit by hand.", "",
            "A rule's severity is for product code; tests, test data, docs, examples, stubs, generated and vendored "
            "files and CI workflows get the policy shown under each rule (file roles: `[tool.sentinel.roles]`). "
            "*Equivalents* are other linters' codes for the same problem: a project's `# noqa: CODE`, "
            "`# pylint: disable=NAME`, `# type: ignore[CODE]` / `# pyright: ignore[RULE]` (type-checker codes) or "
            "(security rules) `# nosec` on the line is honoured.", "",
            "| code | name | check | default | fix | equivalents |", "| --- | --- | --- | --- | --- | --- |"]
    head += [f"| [{r.code}](#{r.code.lower()}) | {r.name} | {r.check} | {r.severity.value} | {r.fix} | "
             f"{', '.join(r.noqa) if r.noqa else ''} |" for r in rules]
    return "\n".join(head) + "\n\n" + "\n".join(markdown(r) for r in rules)
