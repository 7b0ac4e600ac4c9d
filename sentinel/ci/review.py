"""Inline review comments on the pull request's changed lines, kept in step with every push.

Each finding on a line of the PR's diff gets one inline comment, marked with the finding's
fingerprint (rule, path and normalised code: stable across pushes that move lines). On every push:

- a finding that already has our comment keeps it (edited if its text changed; re-posted if the
  code moved to another line, since a review comment cannot move);
- new findings are posted together as **one** review, most severe first, up to the cap (the
  summary comment lists the rest);
- a comment whose finding is gone is edited to say it was resolved, and at which commit;
- a green pull request gets no new inline comments.

Only comments this token wrote are ever edited or deleted (see GitHubApi.is_ours).
"""

from __future__ import annotations

from sentinel.models import Finding, Severity, Verdict
from sentinel.redact import display_path, safe_to_post
from sentinel.report.locate import is_pseudo_path

_ICON = {Severity.ERROR: "\U0001F534", Severity.WARNING: "\U0001F7E1", Severity.INFO: "\U0001F535"}
RESOLVED = "<!-- sentinel:resolved -->"


def on_changed_lines(verdict: Verdict, changeset) -> list[tuple[Finding, str]]:
    """(finding, fingerprint) for findings GitHub can attach to a line of the PR's diff, most severe first."""
    from sentinel.report.sarif import fingerprints

    files = {f.path: f for f in changeset.files if f.status.value not in ("deleted", "binary")}
    order = {f.path: i for i, f in enumerate(changeset.files)}
    out = []
    for f, fp in zip(verdict.findings, fingerprints(verdict.findings)):
        fc = files.get(f.path)
        if fc is None or is_pseudo_path(f.path) or not f.line or display_path(f.path) != f.path:
            continue  # (a name that is not plain UTF-8 cannot be addressed by the API: the summary has it)
        if f.line in fc.added or fc.in_hunks(f.line):
            out.append((f, fp))
    out.sort(key=lambda pair: (-pair[0].severity.rank, order.get(pair[0].path, 0), pair[0].line))
    return out


def comment_body(f: Finding, fp: str, suggestion=None) -> str:
    from sentinel.ci.github_api import FINDING_PREFIX
    from sentinel.report.markdown import rule_link
    from sentinel.report.mdsafe import code_span, inline
    from sentinel.report.silence import config_line, inline_pragma

    lines = [f"{FINDING_PREFIX}{fp} -->",
             f"{_ICON[f.severity]} **{rule_link(f.rule)}** \u00B7 {f.severity.value} \u00B7 {inline(f.message)}"]
    snippet = code_span(f.code)
    if snippet:
        lines.append(f"\n{snippet}")
    if f.hint:
        lines.append(f"\n<sub>hint: {inline(f.hint)}</sub>")
    if suggestion is not None:  # a safe fix GitHub can commit (sentinel.fix.export.suggestion)
        lines.append(f"\nSentinel can fix this: {inline(suggestion.description)}\n\n{suggestion.block}")
    pragma = inline_pragma(f)
    how = (f"{code_span(pragma)} on this line" if pragma
           else f"{code_span(config_line(f))} under {code_span('[tool.sentinel.severity]')}")
    lines.append(f"\n<sub>To silence it: {how}.</sub>")
    return "\n".join(lines)


def _suggestion_for(f: Finding, suggestions: dict | None, changeset):
    """The fix suggestion of a finding when every line it replaces is part of the PR's diff."""
    s = (suggestions or {}).get(id(f))
    fc = changeset.file(f.path) if s is not None else None
    if fc is None or not all(n in fc.added or fc.in_hunks(n) for n in range(s.start_line, s.line + 1)):
        return None
    if not safe_to_post(s.block):
        return None  # the suggested code holds a secret: posting it would leak it, masking it would break it
    return s


def _resolved_body(old: str, sha: str) -> str:
    marker, _, rest = old.partition("\n")
    first = rest.split("\n", 1)[0]
    return f"{marker}\n{RESOLVED}\n\u2705 Resolved at <code>{sha[:7]}</code>: ~~{first}~~"


def sync(api, number: int, sha: str, verdict: Verdict, changeset, cap: int, suggestions: dict | None = None) -> str:
    """Bring our inline comments in line with this run; returns what was done, for the run notes.
    ``suggestions``: id(finding) -> a fix suggestion, attached to the finding's comment (which then spans the
    lines the fix replaces)."""
    eligible = on_changed_lines(verdict, changeset)
    existing = api.our_review_comments(number)
    current = {fp: f for f, fp in eligible}
    green = verdict.passed and not verdict.errored
    kept = [fp for fp in existing if fp in current]
    room = max(cap - len(kept), 0)
    new: list[dict] = []
    updated = resolved = reposted = 0
    for f, fp in eligible:
        s = _suggestion_for(f, suggestions, changeset)
        body = comment_body(f, fp, s)
        anchor = {"path": f.path, "line": s.line if s else f.line, "side": "RIGHT", "body": body}
        if s is not None and s.start_line < s.line:
            anchor.update(start_line=s.start_line, start_side="RIGHT")
        c = existing.get(fp)
        if c is None:
            if not green and len(new) < room:
                new.append(anchor)
            continue
        if c.line != anchor["line"] or c.path != f.path:  # the code moved, or GitHub marked the comment outdated
            api.delete_review_comment(c)
            new.append(anchor)
            reposted += 1
        elif (c.body or "") != body:
            api.edit_review_comment(c, body)
            updated += 1
    for fp, c in existing.items():
        if fp not in current and RESOLVED not in (c.body or ""):
            api.edit_review_comment(c, _resolved_body(c.body or "", sha))
            resolved += 1
    if new:
        left = len(eligible) - len(kept) - (len(new) - reposted)
        more = f" {left} more are in the summary comment." if left > 0 else ""
        api.post_review(number, sha, f"Sentinel: {len(new)} finding(s) on lines this push changed "
                                     f"(<code>{sha[:7]}</code>).{more}", new)
    parts = []
    if new:
        parts.append(f"{len(new)} inline comment(s) posted in one review")
    if updated:
        parts.append(f"{updated} updated")
    if resolved:
        parts.append(f"{resolved} marked resolved")
    return ", ".join(parts)
