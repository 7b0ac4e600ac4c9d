"""`recall --log` signals: pytest long/short/line/native, unittest, plain tracebacks, HTTP failures."""

from __future__ import annotations

import json
import subprocess

import pytest

from sentinel.commands.recall import log_query
from sentinel.memory.retrieval.logsignals import extract

PYTEST_LONG = """\
============================= test session starts ==============================
collected 3 items

tests/test_headers.py .F.                                                [100%]

=================================== FAILURES ===================================
__________________________ test_parse_content_type ___________________________

    def test_parse_content_type():
>       params = parse_options_header("text/html; charset")

tests/test_headers.py:14:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

value = 'text/html; charset'

    def parse_options_header(value):
        key, _, rest = value.partition(";")
>       name, val = rest.split("=")
E       ValueError: not enough values to unpack (expected 2, got 1)

src/app/http.py:88: ValueError
=========================== short test summary info ============================
FAILED tests/test_headers.py::test_parse_content_type - ValueError: not enough values to unpack (expected 2, got 1)
========================= 1 failed, 2 passed in 0.12s ==========================
"""

PYTEST_SHORT = """\
=================================== FAILURES ===================================
_____________________________ test_cache_expiry ______________________________
tests/test_cache.py:40: in test_cache_expiry
    assert cache.get("user:42") is None
src/app/cache.py:71: in get
    entry = self._entries[key]
E   KeyError: 'user:42'
=========================== short test summary info ============================
FAILED tests/test_cache.py::test_cache_expiry - KeyError: 'user:42'
"""

PYTEST_LINE = """\
=================================== FAILURES ===================================
/home/dev/proj/src/app/dates.py:33: TypeError: can't compare offset-naive and offset-aware datetimes
=========================== short test summary info ============================
FAILED tests/test_dates.py::test_expiry_compare - TypeError: can't compare offset-naive and offset-aware datetimes
"""

PYTEST_NATIVE = """\
=================================== FAILURES ===================================
_______________________________ test_read_body _______________________________
Traceback (most recent call last):
  File "/home/dev/proj/tests/test_body.py", line 12, in test_read_body
    assert read_body(stream) == b"abc"
  File "/home/dev/proj/src/app/body.py", line 30, in read_body
    return data.decode("ascii")
UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3 in position 1: ordinal not in range(128)
=========================== short test summary info ============================
FAILED tests/test_body.py::test_read_body - UnicodeDecodeError: 'ascii' codec can't decode byte 0xc3
"""

UNITTEST = """\
.E.
======================================================================
ERROR: test_close_twice (app.tests.test_pool.PoolTest.test_close_twice)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/srv/app/tests/test_pool.py", line 22, in test_close_twice
    pool.release(conn)
  File "/srv/app/pool.py", line 57, in release
    self._idle.remove(conn)
ValueError: list.remove(x): x not in list

----------------------------------------------------------------------
Ran 3 tests in 0.004s

FAILED (errors=1)
"""

CHAINED = """\
Traceback (most recent call last):
  File "/srv/app/client.py", line 40, in fetch
    resp.raise_for_status()
requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://api.example.com/v1/items

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/sync.py", line 12, in run
    items = fetch(url)
  File "/srv/app/client.py", line 44, in fetch
    raise SyncFailed(f"fetch failed after {attempts} attempts") from exc
app.errors.SyncFailed: fetch failed after 3 attempts
"""

HTTP_ONLY = """\
2026-01-02 10:00:01 INFO calling upstream
2026-01-02 10:00:02 WARNING upstream returned 429 Too Many Requests (retry-after: 30)
2026-01-02 10:00:32 ERROR giving up: status code 429
"""


def test_pytest_long_traceback():
    sig = extract(PYTEST_LONG)
    assert sig.format == "pytest-long"
    assert sig.exception_types == ["ValueError"]
    assert sig.tests == ["test_parse_content_type"]
    assert any("not enough values to unpack" in m for m in sig.messages)
    assert "http" in sig.modules
    assert "parse_options_header" in sig.identifiers()  # the test's subject: test_parse_... -> parse_...


def test_pytest_short_traceback_keeps_frames_and_quoted_key():
    sig = extract(PYTEST_SHORT)
    assert sig.format == "pytest-short"
    assert sig.exception_types == ["KeyError"]
    assert sig.functions == ["test_cache_expiry", "get"]
    assert "cache" in sig.modules and "user:42" in sig.quoted
    assert sig.tests == ["test_cache_expiry"]


def test_pytest_line_mode():
    sig = extract(PYTEST_LINE)
    assert sig.exception_types == ["TypeError"]
    assert "dates" in sig.modules and sig.tests == ["test_expiry_compare"]
    query, qsig = log_query(sig)
    assert "time-zone" in qsig.mechanisms  # "offset-naive and offset-aware datetimes"


def test_pytest_native_mode():
    sig = extract(PYTEST_NATIVE)
    assert sig.exception_types == ["UnicodeDecodeError"]
    assert sig.functions == ["test_read_body", "read_body"]
    _, qsig = log_query(sig)
    assert "bytes-str-encoding" in qsig.mechanisms and "UnicodeDecodeError" in qsig.exceptions


def test_unittest_output():
    sig = extract(UNITTEST)
    assert sig.format == "unittest"
    assert sig.tests == ["test_close_twice"]
    assert sig.exception_types == ["ValueError"]
    assert "release" in sig.functions and "pool" in sig.modules


def test_chained_traceback_and_http_status():
    sig = extract(CHAINED)
    assert sig.exception_types == ["HTTPError", "SyncFailed"]
    assert sig.http_statuses == ["503"]
    assert sig.functions == ["fetch"] and "sync" in sig.modules  # "run" is a generic frame name
    assert "3" not in sig.numbers  # only numbers of 3+ digits are exact signals
    _, qsig = log_query(sig)
    assert qsig.mechanisms[0] == "http-status-retry"


def test_http_status_without_traceback():
    sig = extract(HTTP_ONLY)
    assert not sig.empty and sig.format == "http" and sig.http_statuses == ["429"]
    assert "too many requests" in sig.query()


def test_exception_names_case_insensitive():
    sig = extract("E   keyerror: 'missing'\nFAILED tests/test_x.py::test_lookup - keyerror: 'missing'\n")
    assert sig.exception_types == ["KeyError"]
    assert "missing" in sig.quoted


def test_noise_only_log_is_empty():
    assert extract("all 12 tests passed in 0.3s\nok\n").empty


# How the three common clients print one rate limit (each exactly as the library words it).
CLIENT_HTTP_ERRORS = {
    "urllib": "urllib.error.HTTPError: HTTP Error 429: Too Many Requests",
    "urllib-str": "HTTP Error 429: Too Many Requests",  # str(exc), as a script prints it
    "requests": "requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: "
                "https://api.example.com/v1/items?page=2&token=abc",
    "httpx": "httpx.HTTPStatusError: Client error '429 Too Many Requests' for url 'https://api.example.com/v1/items'\n"
             "For more information check: https://developer.mozilla.org/en-US/docs/Web/HTTP/Status/429",
    "aiohttp": "aiohttp.client_exceptions.ClientResponseError: 429, message='Too Many Requests', "
               "url=URL('https://api.example.com/v1/items')",
}


@pytest.mark.parametrize("client", sorted(CLIENT_HTTP_ERRORS))
def test_http_errors_as_the_clients_print_them(client):
    sig = extract(CLIENT_HTTP_ERRORS[client] + "\n")
    assert not sig.empty and sig.http_statuses == ["429"], sig
    assert "too many requests" in sig.query().lower()
    assert "api.example.com" not in sig.query() and "page=" not in sig.query()  # the URL is the call's, not the bug's
    _, qsig = log_query(sig)
    assert qsig.mechanisms[0] == "http-status-retry"


def test_http_errors_in_a_traceback_keep_the_exception_and_the_status():
    log = ('Traceback (most recent call last):\n  File "/app/fetch.py", line 12, in fetch_page\n'
           "    return urlopen(url).read()\n"
           '  File "/usr/lib/python3.12/urllib/request.py", line 639, in http_error_default\n'
           "    raise HTTPError(req.full_url, code, msg, hdrs, fp)\n"
           "urllib.error.HTTPError: HTTP Error 503: Service Unavailable\n")
    sig = extract(log)
    assert sig.exception_types == ["HTTPError"] and sig.http_statuses == ["503"]
    assert "fetch_page" in sig.functions


def test_numbers_that_are_not_statuses_are_not_http_errors():
    for text in ("processed 429 items in 503 ms", "see line 404 of the report", "Error 500 lines were skipped"):
        assert extract(text + "\n").http_statuses == [], text


@pytest.mark.parametrize("client", ["urllib-str", "requests", "httpx"])
def test_recall_log_cli_reads_them(client, tmp_path, installed_sentinel):
    log = tmp_path / "fail.log"
    log.write_text(CLIENT_HTTP_ERRORS[client] + "\n", encoding="utf-8")
    proc = subprocess.run([installed_sentinel, "recall", "--log", str(log), "--json"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["signals"]["http_statuses"] == ["429"] and "http-status-retry" in out["exact"]["mechanisms"]
