"""Push subscriptions in SQLite under the state dir: the only part of notifications kept.

One row per browser push endpoint (the endpoint is the subscription's identity; subscribing
again replaces its keys). Everything else — pending notifications, who is viewing what —
lives in memory and is rebuilt from the roster. The file holds each browser's push keys, so it
is private (0600) like every other secret; SQLite gives its journal the database's mode.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from roost.base import files, paths

FILENAME = "push.sqlite3"
_SCHEMA = """CREATE TABLE IF NOT EXISTS subscriptions (
    endpoint TEXT PRIMARY KEY,
    p256dh TEXT NOT NULL,
    auth TEXT NOT NULL,
    created REAL NOT NULL
)"""


@dataclass(frozen=True)
class Subscription:
    """What a browser's ``PushSubscription.toJSON()`` gives: where to post, and its keys."""

    endpoint: str
    p256dh: str
    auth: str

    def info(self) -> dict[str, object]:
        """The shape pywebpush takes."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        paths.private_mkdir(path.parent)
        _make_private(path)
        with self._db() as db:
            db.execute(_SCHEMA)

    @classmethod
    def default(cls) -> Store:
        return cls(paths.state_home() / FILENAME)

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            yield db
        finally:
            db.close()

    def add(self, subscription: Subscription) -> None:
        with self._db() as db:
            db.execute(
                "INSERT INTO subscriptions VALUES (?, ?, ?, ?) ON CONFLICT(endpoint) DO UPDATE "
                "SET p256dh = excluded.p256dh, auth = excluded.auth",
                (subscription.endpoint, subscription.p256dh, subscription.auth, time.time()),
            )

    def remove(self, endpoint: str) -> bool:
        """Forget ``endpoint``; whether it was there."""
        with self._db() as db:
            return db.execute("DELETE FROM subscriptions WHERE endpoint = ?", (endpoint,)).rowcount > 0

    def all(self) -> list[Subscription]:
        with self._db() as db:
            rows = db.execute("SELECT endpoint, p256dh, auth FROM subscriptions ORDER BY created").fetchall()
        return [Subscription(*row) for row in rows]


def _make_private(path: Path) -> None:
    """Create the database file 0600 before SQLite does (it would follow the umask, and give
    the same mode to every journal it opens beside it), and take a file an older roost left
    readable back to 0600. An empty file is an empty database to SQLite."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, files.PRIVATE)
    try:
        os.fchmod(fd, files.PRIVATE)
    finally:
        os.close(fd)
