"""The push store holds every browser's endpoint and keys: it is 0600 like every other secret,
and so is the journal SQLite writes beside it."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from roost.services.notify.store import Store, Subscription
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon, running
from tests.fakes.push_service import PushService

__all__ = ["daemon", "running"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_subscription_is_kept_in_a_private_file(roost: Roost, running: Daemon) -> None:
    service = PushService(running.get("/push/vapid-key")["key"])
    try:
        with running.unix() as client:
            response = client.post("/push/subscribe", json=service.subscription("phone"))
        assert response.status_code == 201, response.text
    finally:
        service.close()
    kept = roost.root / "state" / "roost" / "push.sqlite3"
    assert mode(kept) == 0o600  # before Store() below opens it, which would make it so
    assert [s.endpoint for s in Store(kept).all()] == [service.subscription("phone")["endpoint"]]


def test_a_store_an_older_roost_left_readable_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "push.sqlite3"
    Store(path).add(Subscription("https://push.example/a", "p256dh", "auth"))
    path.chmod(0o644)
    assert [s.endpoint for s in Store(path).all()] == ["https://push.example/a"]
    assert mode(path) == 0o600


def test_the_journal_beside_it_is_private_too(tmp_path: Path) -> None:
    path = tmp_path / "push.sqlite3"
    old = os.umask(0o022)
    try:
        Store(path)
        db = sqlite3.connect(path, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO subscriptions VALUES ('https://push.example/b', 'k', 'a', 0)")
            journal = Path(f"{path}-journal")
            assert mode(journal) == 0o600
            db.execute("COMMIT")
        finally:
            db.close()
    finally:
        os.umask(old)
    assert mode(path) == 0o600
