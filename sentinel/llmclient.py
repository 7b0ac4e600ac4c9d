"""litellm, imported the one way every caller needs it: offline at import, no telemetry.

Both the opt-in LLM review (sentinel.checks.llm) and `memory learn --llm` reach models through litellm; it is
imported only when one of them runs (it takes about a second and is an extra, `diff-sentinel[llm]`).
"""

from __future__ import annotations

import os


def import_litellm():
    # Never fetch the model cost map from the network at import, and never send telemetry.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm
