"""`sentinel ci`: the gate inside a GitHub Actions job.

Reads the event payload, builds the change (from git, fetching what a shallow checkout lacks,
or from the pull request's files through the API), runs the gate, and reports through every
channel GitHub offers: capped annotations, the step summary, one sticky pull-request comment,
an optional SARIF file and step outputs. Nothing from the pull request is ever executed.
"""
