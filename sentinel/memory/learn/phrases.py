"""What a change did, in words: the state before the fix and what the fix does, written from the change's own
code (astchange.Change: its kind, detail and before/after code). Short clauses the standardiser joins into the
root cause ("Before the fix, `Cart.remove_item` indexed `self.items[sku]` directly") and the fix strategy ("the
fix looks it up with `self.items.get(sku)`"); nothing here is a template that could be said of any fix."""

from __future__ import annotations

import re

from sentinel.memory.learn.astchange import Change

_GUARDS = frozenset({"none-guard", "type-guard", "membership-guard", "length-guard", "falsy-guard", "version-guard",
                     "guard"})


def _code(text: str, limit: int = 80) -> str:
    text = " ".join((text or "").split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return f"`{text}`" if text else ""


def _test_of(change: Change) -> str:
    """The condition of a guard, from its code (`if x is None:` -> `x is None`)."""
    m = re.match(r"^(?:if|while)\s+(.*?):?$", change.new.strip())
    return m.group(1) if m else change.new.strip()


def _pair(detail: str) -> tuple[str, str] | None:
    m = re.match(r"^(`[^`]*`) -> (`[^`]*`)$", detail.strip())
    return (m.group(1), m.group(2)) if m else None


def before(change: Change, where: str) -> str:
    """What the code did before the fix, one clause with its subject: "`f` caught `Exception`"."""
    k, old = change.kind, change.old
    w = f"`{where}`" if where else "the code"
    if k in _GUARDS:
        return f"{w} did not check {_code(_test_of(change))}"
    if k == "lookup-default":
        return f"{w} indexed {_code(old)} directly"
    if k == "default-fallback":
        return f"{w} had no fallback for a missing or empty value"
    if k in ("exception-narrowed", "exception-widened", "exception-changed"):
        return f"{w} {'caught only' if k == 'exception-widened' else 'caught'} {_code(old.removeprefix('except '))}"
    if k == "handler-added":
        around = re.search(r"around (`[^`]+`)", change.detail)
        caught = change.new.removeprefix("except ").strip() or "the error"
        return f"{w} let {_code(caught)} escape" + (f" from {around.group(1)}" if around else "")
    if k == "handler-moved":
        return f"{w} had its {_code(old)} elsewhere"
    if k == "bases-changed":
        return f"{w} derived from ({old})" if old else f"{w} had no base class"
    if k == "handler-removed":
        return f"{w} caught {_code(old.removeprefix('except '))}"
    if k in ("bound-changed", "condition-changed"):
        return f"{w} tested {_code(old)}"
    if k == "condition-removed":
        return f"{w} checked {_code(old)}"
    if k == "early-return":
        return f"{w} carried on when {_code(_test_of(change))}"
    if k == "lock-added":
        return f"{w} ran without holding {_code(change.new.removeprefix('with ').rstrip(':'))}"
    if k == "context-added":
        return f"{w} did not use {_code(change.new.rstrip(':'))}"
    if k == "cleanup-added":
        return f"{w} did not always run {_code(change.new.removeprefix('finally: '))}"
    if k == "raise-added":
        return f"{w} did not raise {_code(_raised(change))}" if _raised(change) else f"{w} raised nothing"
    if k == "raise-changed":
        return f"{w} raised {_code(old.removeprefix('raise '))}"
    if k == "raise-removed":
        return f"{w} raised {_code(old, 60)}"
    if k in ("call-replaced", "argument-changed", "call-removed"):
        return f"{w} called {_code(old, 70)}"
    if k == "call-added":
        return f"{w} did not call {_code(change.new, 60)}"
    if k == "default-changed":
        return f"{w} defaulted {_code(old)}"
    if k == "signature-changed":
        return f"{w} took ({old})" if old else f"{w} had another signature"
    if k == "return-changed":
        return f"{w} returned {_code(old.removeprefix('return '))}"
    if k == "value-changed":
        return f"{w} used {_code(old)}"
    if k == "return-added":
        return f"{w} computed {_code(old)} without returning it"
    if k == "import-changed":
        return f"{w} imported {_code(old)}" if old else f"{w} lacked an import"
    if k == "assignment-added":
        return f"{w} did not set {_code(change.new.split(' = ')[0] if ' = ' in change.new else change.new)}"
    if k == "target-changed":
        return f"{w} assigned to {_code(old.split(' = ')[0] if ' = ' in old else old)}"
    if k == "assignment-changed":
        return f"{w} set {_code(old)}"
    if k == "await-added":
        return f"{w} did not await {_code(change.new.removeprefix('await '))}"
    if k == "await-removed":
        return f"{w} awaited {_code(old.removeprefix('await '))}"
    if k == "loop-changed":
        return f"{w} looped over {_code(old.removeprefix('for '))}"
    if k == "decorator-changed":
        return f"{w} was decorated differently" if old else f"{w} had no decorator `@{change.new}`"
    if k == "function-added":
        return f"there was no `{where}`" if where else "a helper was missing"
    if k == "function-removed":
        return f"`{where}` existed" if where else "the code had an extra function"
    return f"{w} ran {_code(old)}" if old else f"{w} did otherwise"


def _raised(change: Change) -> str:
    m = re.search(r"raises `([^`]+)`|raising `([^`]+)`", change.detail)
    return (m.group(1) or m.group(2)) if m else ""


def after(change: Change) -> str:
    """What the fix does, a clause without subject ("narrows `except Exception` to `except KeyError`")."""
    k, d = change.kind, change.detail
    pair = _pair(d)
    if k == "exception-narrowed" and pair:
        return f"narrows {pair[0]} to {pair[1]}"
    if k == "exception-widened" and pair:
        return f"widens {pair[0]} to {pair[1]}"
    if k == "bound-changed" and pair:
        return f"moves the bound from {pair[0]} to {pair[1]}"
    if k == "call-replaced" and pair:
        return f"calls {pair[1]} instead of {pair[0]}"
    if k == "lookup-default" and pair:
        return f"looks up with {pair[1]} instead of {pair[0]}"
    if k == "default-changed" and pair:
        return f"changes the default {pair[0]} to {pair[1]}"
    if k == "early-return":
        m = re.match(r"^(`[^`]*`) when (`[^`]*`)$", d)
        return f"returns early ({m.group(1)}) when {m.group(2)}" if m else "returns early"
    if k == "argument-changed":
        m = re.match(r"^`([^`]+)\(\)`: (.*)$", d)
        return f"changes the call to `{m.group(1)}()`: {m.group(2)}" if m else f"changes a call: {d}"
    if k == "function-added":
        return d.replace("adds function", "adds").replace("adds class", "adds class")
    if pair:
        return f"changes {pair[0]} to {pair[1]}"
    return d
