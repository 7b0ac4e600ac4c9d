"""`sentinel ci`: the gate inside GitHub Actions (see docs/github-action.md)."""

from __future__ import annotations

# What `--format` puts on stdout: `sentinel check`'s formats. `github` (the default, what action.yml runs)
# is the step's log as before: run notes, annotations capped at GitHub's 10 per severity, the summary line.
CI_FORMATS = ("github", "text", "concise", "json", "sarif", "markdown")


def register(sub) -> None:
    from sentinel.commands.formatopt import add_format_option

    p = sub.add_parser("ci", help="run the gate in GitHub Actions: annotations, summary, PR comment, outputs",
                       description="Reads $GITHUB_EVENT_PATH and the action's INPUT_* variables "
                                   "(see docs/github-action.md). The job summary, the PR comment and review "
                                   "comments, the SARIF file and the step outputs are written whatever --format "
                                   "says; --format chooses what goes to stdout.")
    p.add_argument("--event", metavar="PATH", help="event payload (default: $GITHUB_EVENT_PATH)")
    add_format_option(p, CI_FORMATS, default="github",
                      help="what stdout holds: github (default: run notes, workflow annotations capped at 10 "
                           "per severity, the summary line), or the report as `sentinel check --format` writes "
                           "it: text, concise, json, sarif, markdown; with those, notes and annotations go to "
                           "stderr (GitHub reads workflow commands there too)")
    p.set_defaults(func=cmd_ci)


def cmd_ci(args) -> int:
    from sentinel.ci.run import run
    return run(event_path=args.event, fmt=args.format)
