"""Sentinel: an audit gate for code changes that remembers.

The package import is kept cheap (it runs on every commit hook): the API is loaded on first use.
"""

from __future__ import annotations

from sentinel.version import __version__

__all__ = ["check", "__version__"]


def check(**kwargs):
    """Run the gate in-process; see :func:`sentinel.api.check`."""
    from sentinel.api import check as _check

    return _check(**kwargs)
