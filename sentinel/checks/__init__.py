"""The registry of checks. Each check is one module that declares its rules as data
(``RULES``) and implements ``check_file(ctx)`` and/or ``check_change(cctx)``; modules are
imported only when their check is enabled, so disabled or heavy checks cost nothing."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

# Order is the order of the gate: the four code checks, then the intent checks.
CHECK_MODULES: dict[str, str] = {
    "jail": "sentinel.checks.jail",
    "style": "sentinel.checks.style",
    "chaos": "sentinel.checks.chaos",
    "placeholder": "sentinel.checks.placeholder",
    # edits of Sentinel's own configuration (change-level; in CI the base branch's config applies)
    "gateconfig": "sentinel.checks.gateconfig",
}
# The order each file's analysis runs the per-file checks in (reports keep the gate's order above): chaos first,
# whose AST rules apply to the most files (`except`, `eval`, `.get(`), so that the others find the tree made and
# skip the keyword gates that exist only to spare a parse (FileContext.tree_in_hand).
ANALYSIS_ORDER = ("chaos", "jail", "placeholder", "style")
# Checks whose modules may be absent in this build (added by later features).
OPTIONAL_CHECKS: dict[str, str] = {
    "drift": "sentinel.checks.drift",
    "claims": "sentinel.checks.claims",
    # Opt-in (llm.enabled); the engine runs it only after every check above passed.
    "llm": "sentinel.checks.llm",
}


def load_check(name: str) -> ModuleType:
    return importlib.import_module(CHECK_MODULES.get(name) or OPTIONAL_CHECKS[name])


def available_checks() -> list[str]:
    names = list(CHECK_MODULES)
    for name, module in OPTIONAL_CHECKS.items():
        if importlib.util.find_spec(module) is not None:
            names.append(name)
    return names


def all_rules() -> list:
    rules = []
    for name in available_checks():
        rules.extend(load_check(name).RULES)
    return rules


def rule_index() -> dict:
    return {r.code: r for r in all_rules()}
