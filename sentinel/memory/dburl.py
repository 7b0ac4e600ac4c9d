"""Database URLs: which backend, and how to show one without its credentials.

Every message that names the team database goes through :func:`redact_url`: a URL comes from a CI secret,
and a password in a log, a PR comment or a traceback is a leak.
"""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^@/?#]*)@")
_QUERY_SECRET = re.compile(r"(?i)(?P<key>\b(?:password|passwd|pwd|sslpassword|sslkey|token|secret)\s*=\s*)"
                           r"(?P<value>'(?:\\.|[^'])*'|[^\s&;]+)")


def redact_url(url: str) -> str:
    """The URL with the password of its user part and any password/token parameter replaced by `***`
    (`postgresql://user:***@host/db?sslpassword=***`)."""
    if not url:
        return url

    def userinfo(m: re.Match) -> str:
        user, sep, _ = m.group("userinfo").partition(":")
        return f"{m.group('scheme')}{user}{':***' if sep else ''}@"

    out = _USERINFO.sub(userinfo, url)
    return _QUERY_SECRET.sub(lambda m: m.group("key") + "***", out)


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
        for m in _QUERY_SECRET.finditer(url):
            secrets.add(m.group("value").strip("'"))
        for secret in sorted(secrets, key=len, reverse=True):
            out = out.replace(secret, "***")
        out = out.replace(url, redact_url(url))
    return redact_url(out)
