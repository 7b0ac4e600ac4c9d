"""`sentinel ci`: the gate inside GitHub Actions (see docs/github-action.md)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("ci", help="run the gate in GitHub Actions: annotations, summary, PR comment, outputs",
                       description="Reads $GITHUB_EVENT_PATH and the action's INPUT_* variables "
                                   "(see docs/github-action.md).")
    p.add_argument("--event", metavar="PATH", help="event payload (default: $GITHUB_EVENT_PATH)")
    p.set_defaults(func=cmd_ci)


def cmd_ci(args) -> int:
    from sentinel.ci.run import run
    return run(event_path=args.event)
