"""`sentinel mcp`: serve the gate and the experience memory to coding agents over stdio (MCP)."""

from __future__ import annotations

import os

from sentinel.errors import InputError


def register(sub) -> None:
    p = sub.add_parser("mcp", help="serve the gate and the memory to coding agents (MCP over stdio)",
                       description="An MCP server over stdio: tools to run the gate on a change, brief on a "
                                   "change's earlier attempts and the project's recurring failures, search and "
                                   "read past fixes, and explain rules. Read-only. Needs the [mcp] extra.",
                       epilog="No --format, unlike every other command: stdout carries the MCP JSON-RPC "
                              "messages and nothing else (the client reads them; any other byte there breaks the "
                              "session), and each tool's answer is structured content the client reads. Errors "
                              "go to stderr. The same answers for a person: sentinel check, sentinel memory "
                              "brief / search / show, sentinel explain, each with --format.")
    p.add_argument("--repo", metavar="PATH",
                   help="the repository to answer for (default: the current directory)")
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args) -> int:
    import gc
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise InputError("the MCP server needs the mcp SDK: pip install 'diff-sentinel[mcp]'")
    if args.repo and not os.path.isdir(args.repo):
        raise InputError(f"--repo {args.repo!r} is not a directory")
    gc.enable()  # the CLI turns the cyclic GC off for short runs; a server lives long
    from sentinel.mcp.server import serve

    serve(args.repo)
    return 0
