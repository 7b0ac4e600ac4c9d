"""Errors that end a run with exit code 2 and a clear, traceback-free message."""

from __future__ import annotations


class SentinelError(Exception):
    """Base class: the message is shown to the user as is."""

    exit_code = 2


class InputError(SentinelError):
    """The change could not be read: malformed diff, unreadable file, bad range."""


class GitError(SentinelError):
    """git is missing, the directory is not a repository, or a git command failed."""


class ConfigError(SentinelError):
    """The configuration file is invalid; the message names the key and the file."""


class CheckCrashed(SentinelError):
    """A check raised: the run is an error, never a pass."""
