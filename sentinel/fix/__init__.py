"""`sentinel check --fix`: repair what the gate found, when the repair is known to be safe.

Each rule declares its fix safety (``Rule.fix``: "safe", "unsafe" or "none"); a fixer per fixable rule
rewrites only the lines of its finding, with libcst where the code's structure matters (formatting and
comments kept) and as plain text for layout. A safe fix preserves behaviour or makes it strictly safer,
and refuses when it cannot tell (an ambiguous tab width, a wildcard whose names cannot be resolved
statically); unsafe fixes run only with ``--unsafe-fixes``. Python results are verified: layout fixes
must leave the AST unchanged, every fix must leave the file parsing.

Nothing here is imported on the hook path: the planner runs only when fixes are asked for (``--fix``,
``--diff-fixes``, SARIF fixes, review suggestions, the MCP preview).
"""
