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


# kind -> how the code was before the fix, from the change's code: {w} the function, {old} / {new} its code before
# and after (quoted), {test} a guard's condition, {lhs} / {new_lhs} the names an assignment sets, {caught} the
# exceptions a new handler catches, {around} where it catches them, {raised} what a new raise raises
_BEFORE = {
    **{k: "{w} did not check {test}" for k in _GUARDS},
    "lookup-default": "{w} indexed {old} directly",
    "default-fallback": "{w} had no fallback for a missing or empty value",
    "exception-narrowed": "{w} caught {old_except}",
    "exception-changed": "{w} caught {old_except}",
    "exception-widened": "{w} caught only {old_except}",
    "handler-removed": "{w} caught {old_except}",
    "handler-added": "{w} let {caught} escape{around}",
    "handler-moved": "{w} had its {old} elsewhere",
    "bases-changed": "{w} derived from ({old_raw})",
    "bound-changed": "{w} tested {old}",
    "condition-changed": "{w} tested {old}",
    "condition-removed": "{w} checked {old}",
    "early-return": "{w} carried on when {test}",
    "lock-added": "{w} ran without holding {lock}",
    "context-added": "{w} did not use {context}",
    "cleanup-added": "{w} did not always run {cleanup}",
    "raise-added": "{w} did not raise {raised}",
    "raise-changed": "{w} raised {old_raise}",
    "raise-removed": "{w} raised {old_short}",
    "call-replaced": "{w} called {old_call}",
    "argument-changed": "{w} called {old_call}",
    "call-removed": "{w} called {old_call}",
    "call-added": "{w} did not call {new}",
    "default-changed": "{w} defaulted {old}",
    "signature-changed": "{w} took ({old_raw})",
    "return-changed": "{w} returned {old_return}",
    "value-changed": "{w} used {old}",
    "return-added": "{w} computed {old} without returning it",
    "import-changed": "{w} imported {old}",
    "assignment-added": "{w} did not set {new_lhs}",
    "target-changed": "{w} assigned to {lhs}",
    "assignment-changed": "{w} set {old}",
    "await-added": "{w} did not await {new_await}",
    "await-removed": "{w} awaited {old_await}",
    "loop-changed": "{w} looped over {old_loop}",
    "decorator-changed": "{w} was decorated differently",
    "function-added": "there was no {where}",
    "function-removed": "{where} existed",
}
# when the code the template needs is missing (an addition has no "before")
_BEFORE_EMPTY = {"bases-changed": "{w} had no base class", "signature-changed": "{w} had another signature",
                 "import-changed": "{w} lacked an import", "raise-added": "{w} raised nothing",
                 "decorator-changed": "{w} had no decorator", "function-added": "a helper was missing",
                 "function-removed": "the code had an extra function"}


def before(change: Change, where: str) -> str:
    """What the code did before the fix, one clause with its subject: "`f` caught `Exception`"."""
    old, new = change.old, change.new
    around = re.search(r"around (`[^`]+`)", change.detail)
    values = {
        "w": f"`{where}`" if where else "the code", "where": f"`{where}`" if where else "",
        "old": _code(old), "old_call": _code(old, 70), "old_short": _code(old, 60), "old_raw": old, "new": _code(new, 60), "test": _code(_test_of(change)),
        "old_except": _code(old.removeprefix("except ")), "old_raise": _code(old.removeprefix("raise ")),
        "old_return": _code(old.removeprefix("return ")), "old_await": _code(old.removeprefix("await ")),
        "old_loop": _code(old.removeprefix("for ")), "new_await": _code(new.removeprefix("await ")),
        "caught": _code(new.removeprefix("except ").strip()) or "the error",
        "around": f" from {around.group(1)}" if around else "", "raised": _code(_raised(change)),
        "lock": _code(new.removeprefix("with ").rstrip(":")), "context": _code(new.rstrip(":")),
        "cleanup": _code(new.removeprefix("finally: ")),
        "lhs": _code(old.split(" = ")[0]), "new_lhs": _code(new.split(" = ")[0]),
    }
    template = _BEFORE.get(change.kind, "{w} ran {old}")
    needs = {"old_raw": old, "raised": values["raised"], "where": where}
    if any(f"{{{k}}}" in template and not v for k, v in needs.items()) or (
            change.kind == "decorator-changed" and not old) or (change.kind == "import-changed" and not old):
        template = _BEFORE_EMPTY.get(change.kind, "{w} did otherwise")
    if change.kind not in _BEFORE and not old:
        template = "{w} did otherwise"
    return template.format(**values)


def _raised(change: Change) -> str:
    m = re.search(r"raises `([^`]+)`|raising `([^`]+)`", change.detail)
    return (m.group(1) or m.group(2)) if m else ""


# kind -> what the fix does, for a change whose detail is "`before` -> `after`" ({0} before, {1} after)
_AFTER_PAIR = {
    "exception-narrowed": "narrows {0} to {1}", "exception-widened": "widens {0} to {1}",
    "bound-changed": "moves the bound from {0} to {1}", "call-replaced": "calls {1} instead of {0}",
    "lookup-default": "looks up with {1} instead of {0}", "default-changed": "changes the default {0} to {1}",
}


def after(change: Change) -> str:
    """What the fix does, a clause without subject ("narrows `except Exception` to `except KeyError`")."""
    k, d = change.kind, change.detail
    pair = _pair(d)
    if pair:
        return _AFTER_PAIR.get(k, "changes {0} to {1}").format(*pair)
    if k == "early-return":
        m = re.match(r"^(`[^`]*`) when (`[^`]*`)$", d)
        return f"returns early ({m.group(1)}) when {m.group(2)}" if m else "returns early"
    if k == "argument-changed":
        m = re.match(r"^`([^`]+)\(\)`: (.*)$", d)
        return f"changes the call to `{m.group(1)}()`: {m.group(2)}" if m else f"changes a call: {d}"
    if k == "function-added":
        return d.replace("adds function", "adds")
    return d
