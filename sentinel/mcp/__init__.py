"""`sentinel mcp`: the gate and the experience memory as MCP tools for coding agents.

``tools`` holds what each tool does, as plain functions returning JSON-ready data (no MCP import);
``brief`` reads the hypothesis store and the card index for the project brief; ``server`` declares
the tools to the official ``mcp`` SDK (extra ``diff-sentinel[mcp]``) and serves them over stdio.
Everything here is read-only: nothing is committed, staged or written, not even a cache.
"""
