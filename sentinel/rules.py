"""A rule is data: stable code, name, default severity and its documentation."""

from __future__ import annotations

from sentinel.models import Severity
from sentinel.record import Record, factory


class Rule(Record, frozen=True):
    code: str  # stable, e.g. "SEN301"
    name: str  # kebab-case, e.g. "bare-except"
    check: str  # owning check, e.g. "chaos"
    severity: Severity
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
