"""$GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY files."""

from __future__ import annotations

import uuid

# GitHub rejects a step summary above 1 MiB; stay a little under it.
SUMMARY_LIMIT = 1024 * 1024 - 4096


def write_outputs(path: str | None, values: dict[str, str]) -> None:
    """name<<DELIM syntax, so a value with a newline cannot forge another output."""
    if not path:
        return
    with open(path, "a", encoding="utf-8") as fh:
        for name, value in values.items():
            delim = f"ghadelimiter_{uuid.uuid4().hex}"
            fh.write(f"{name}<<{delim}\n{value}\n{delim}\n")


def append_summary(path: str | None, text: str) -> bool:
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")
    return True
