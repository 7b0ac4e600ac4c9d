"""Database URLs: which backend, and how to show one without its credentials.

Every message that names the team database goes through :func:`redact_url`: a URL comes from a CI secret,
and a password in a log, a PR comment or a traceback is a leak. Masking is :mod:`sentinel.redact`'s, the one
redaction path of every output; this module only adds what a driver's message needs (the exact secrets of
the URL it was given, wherever the driver echoes them).
"""

from __future__ import annotations

from sentinel.redact import QUERY_SECRET, redact_url

__all__ = ["redact_text", "redact_url"]


def redact_text(text: str, url: str | None) -> str:
    """A driver's message with the URL's secrets masked wherever they appear (drivers echo the DSN)."""
    if not text:
        return text
    out = text
    if url:
        from urllib.parse import unquote, urlsplit

        try:
            parts = urlsplit(url)
            secrets = {p for p in (parts.password, unquote(parts.password or "")) if p}
        except ValueError:
            secrets = set()
        for m in QUERY_SECRET.finditer(url):
            secrets.add(m.group("value").strip("'"))
        for secret in sorted(secrets, key=len, reverse=True):
            out = out.replace(secret, "***")
        out = out.replace(url, redact_url(url))
    return redact_url(out)
