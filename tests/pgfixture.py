"""A real PostgreSQL with pgvector for the tests: `pgserver` (from the package registry, in the test extra)
starts one in a temp dir, once per test session, on a Unix socket; every test gets a database of its own.

The backends of the store's test suite are `BACKENDS`; the suite runs on both (parity).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
import warnings
from contextlib import contextmanager

import pytest

BACKENDS = ["sqlite", "postgres"]
_counter = itertools.count()
_SERVER: dict = {}


def _start():
    """Start the server (once); its base URL."""
    if "url" in _SERVER:
        return _SERVER["url"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        base = tempfile.mkdtemp(prefix="sentinel-pg-")
        os.chmod(base, 0o755)  # pgserver runs postgres as its own user when we are root
        server = pgserver.get_server(os.path.join(base, "data"), cleanup_mode="delete")
    _SERVER.update(server=server, base=base, url=server.get_uri())
    return _SERVER["url"]


def pause_server() -> None:
    """Stop the session's server (its data kept): connections are refused until :func:`resume_server`."""
    from pgserver._commands import pg_ctl

    server = _SERVER["server"]
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user, timeout=60)


def resume_server() -> None:
    """Start the session's server again on the same data and socket; its URLs work as before."""
    server = _SERVER["server"]
    with server._lock:
        server.ensure_postgres_running()
    assert server.get_uri() == _SERVER["url"], "the restarted server listens elsewhere"


def stop_server() -> None:
    server = _SERVER.pop("server", None)
    if server is not None:
        server.cleanup()
        shutil.rmtree(_SERVER.pop("base"), ignore_errors=True)
        _SERVER.pop("url", None)


@pytest.fixture(scope="session")
def pg_server():
    """The base URL of a running PostgreSQL with pgvector; stopped at the end of the session."""
    url = _start()
    yield url
    stop_server()


def new_database(base_url: str | None = None) -> str:
    """A fresh database on the test server; its URL."""
    import psycopg

    url = base_url or _start()
    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return with_database(url, name)


def with_database(url: str, name: str) -> str:
    # pgserver's URLs look like postgresql://postgres:@/postgres?host=/tmp/...
    head, _, query = url.partition("?")
    prefix = head.rsplit("/", 1)[0]
    return f"{prefix}/{name}" + (f"?{query}" if query else "")


@contextmanager
def open_backend(kind: str, tmp_path):
    """A fresh store of `kind` ("sqlite" in tmp_path, or "postgres" on the test server)."""
    if kind == "sqlite":
        from sentinel.memory.store.sqlite import SQLiteStore

        os.makedirs(tmp_path, exist_ok=True)
        store = SQLiteStore(str(os.path.join(tmp_path, "h.sqlite3")))
    else:
        from sentinel.memory.store.postgres import PostgresStore

        store = PostgresStore.connect(new_database())
    try:
        yield store
    finally:
        store.close()


def backend_arg(store) -> str:
    """What another process needs to open the same store."""
    return store.url if store.dialect == "postgres" else "sqlite:///" + store.path


@contextmanager
def connect_backend(arg: str):
    if arg.startswith("sqlite:///"):
        from sentinel.memory.store.sqlite import SQLiteStore

        store = SQLiteStore(arg[len("sqlite:///"):], timeout=60)
    else:
        from sentinel.memory.store.postgres import PostgresStore

        store = PostgresStore.connect(arg, wait=30)
    try:
        yield store
    finally:
        store.close()


def psql(url: str, sql: str) -> str:
    import pgserver

    exe = os.path.join(os.path.dirname(pgserver.__file__), "pginstall", "bin", "psql")
    return subprocess.run([exe, url, "-Atc", sql], capture_output=True, text=True, check=True).stdout
