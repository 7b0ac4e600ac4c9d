"""A rule is data: stable code, name, severity per file role, its documentation, fix safety and the codes of
other linters that mean the same thing (so a project's existing ``# noqa: E722`` is honoured)."""

from __future__ import annotations

from sentinel.models import Severity
from sentinel.record import Record, factory
from sentinel.roles import CI, DOCS, EXAMPLE, FIXTURE, GENERATED, STUB, TEST, VENDORED

# What a rule does in a file of a role: "off", "info", "warning", or "same" (its own severity, possibly
# overridden by the config). Anything but "same" is a *cap*: a finding is never more severe than it.
OFF, INFO, WARNING, SAME = "off", "info", "warning", "same"
ROLE_ACTIONS = (OFF, INFO, WARNING, SAME)
FIX_SAFETY = ("safe", "unsafe", "none")

# Ready-made role policies (a rule may start from one and change entries).
# Code quality: tests are code too but their idioms differ; data, docs and other people's code are not ours.
QUALITY_ROLES = {TEST: WARNING, FIXTURE: OFF, DOCS: INFO, EXAMPLE: INFO, STUB: OFF, GENERATED: OFF,
                 VENDORED: OFF, CI: WARNING}
# Layout: judged where a human writes the file; test inputs are often malformed on purpose.
LAYOUT_ROLES = {TEST: SAME, FIXTURE: OFF, DOCS: OFF, EXAMPLE: SAME, STUB: SAME, GENERATED: OFF, VENDORED: OFF,
                CI: SAME}
# Unfinished work: what is missing in product code is an idiom in tests (doubles that must not be called),
# a teaching device in docs and examples, the norm in stubs.
UNFINISHED_ROLES = {TEST: OFF, FIXTURE: OFF, DOCS: OFF, EXAMPLE: INFO, STUB: OFF, GENERATED: OFF, VENDORED: OFF,
                    CI: WARNING}
# Security: what runs with the product's privileges. Tests and examples run only on a developer's machine;
# CI runs with the repository's secrets, so it stays in view; vendored code ships, so it is shown, not blocked.
SECURITY_ROLES = {TEST: OFF, FIXTURE: OFF, DOCS: INFO, EXAMPLE: INFO, STUB: OFF, GENERATED: SAME,
                  VENDORED: WARNING, CI: WARNING}
# Secrets leak from any file that is committed: every role keeps the rule (the check itself is stricter about
# what counts as a real secret outside product code).
EVERYWHERE = {}


class Rule(Record, frozen=True):
    code: str  # stable, e.g. "SEN301"
    name: str  # kebab-case, e.g. "bare-except"
    check: str  # owning check, e.g. "chaos"
    severity: Severity  # in product code; the most severe a finding of this rule can be by default
    summary: str  # what it does (one line)
    rationale: str  # why it matters
    example: str  # code that triggers the rule
    counter_example: str  # what to write instead ("use instead"); must not trigger
    hint: str = ""  # one-line fix hint shown with each finding
    example_path: str = "example.py"  # file name the examples are checked as
    # Config overrides needed for the example to fire, e.g. {"jail": {"banned_imports": ["flask"]}}.
    example_config: dict = factory(dict)
    # Message-based rules (intent checks): the commit message / task the example is checked with.
    # "" means none; the counter-example uses its own when set, else the example's.
    example_message: str = ""
    example_task: str = ""
    counter_example_message: str | None = None
    counter_example_task: str | None = None
    counter_example_path: str | None = None  # file name of the counter-example when it differs
    # The file's content before the change: the examples are then modifications of it, not new files.
    example_before: str | None = None
    # role -> OFF / INFO / WARNING / SAME (a role not listed: SAME). See the policies above.
    roles: dict = factory(dict)
    # Can `sentinel check --fix` repair it? "safe" (behaviour-preserving or strictly safer), "unsafe", "none".
    fix: str = "none"
    # Codes of other linters that report the same thing (ruff/flake8/pycodestyle, bandit, pylint names): a
    # project's `# noqa: E722` or `# pylint: disable=bare-except` on the line suppresses this rule too.
    noqa: tuple = ()
    # A security rule: bandit's `# nosec` (with no codes, or with one of `noqa`'s B-codes) suppresses it.
    security: bool = False
    # How the bug it points at happens, in the memory's mechanism taxonomy (sentinel.memory.cards.taxonomy tags,
    # e.g. "exception-handling"): recall ranks a past fix of the same mechanism first. Empty: the rule is not
    # about one mechanism (layout, placeholders, claims).
    mechanisms: tuple = ()
    # What the rule does in a file checked as it is rather than as a change (`--all-files`, a file named on the
    # command line that the change does not touch): SAME, or a cap as for a role. A rule about what a change
    # leaves undone (a placeholder) says INFO: an existing marker is the project's tracked state, not work this
    # change left for later — shown, and recorded by `sentinel baseline`, never blocking adoption.
    existing: str = SAME

    def action(self, role: str | None) -> str:
        return self.roles.get(role, SAME) if role else SAME

    def severity_in(self, role: str | None, emitted: Severity, override: str | None = None,
                    existing: bool = False) -> Severity | None:
        """The severity of a finding of this rule in a file of `role` (None: not reported).

        `emitted` is what the check reported (it may grade a finding below the rule's maximum); an `override`
        from the config replaces it; the role's cap then applies, and for a file checked as it is (`existing`)
        the rule's cap for existing code.
        """
        if override == OFF:
            return None
        base = Severity(override) if override else emitted
        for cap in (self.action(role), self.existing if existing else SAME):
            if cap == OFF:
                return None
            if cap != SAME and Severity(cap).rank < base.rank:
                base = Severity(cap)
        return base
