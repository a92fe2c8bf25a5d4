"""VAPID keys on disk, and real Web Pushes to a loopback push service stub that checks them."""

from __future__ import annotations

import stat
from pathlib import Path

from roost.services.notify import push, vapid
from roost.services.notify.store import Store, Subscription
from tests.fakes.push_service import PushService


def test_vapid_keys_are_made_once_and_kept_private(tmp_path: Path) -> None:
    keys = vapid.load(tmp_path / "config")
    path = tmp_path / "config" / vapid.FILENAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert vapid.load(tmp_path / "config").public_key == keys.public_key
    assert len(keys.public_key) == 87  # 65 bytes, base64url without padding


def test_a_push_is_signed_for_the_service_and_decrypts_with_the_browser_key(tmp_path: Path) -> None:
    keys = vapid.load(tmp_path)
    store = Store(tmp_path / "push.sqlite3")
    service = PushService(keys.public_key)
    try:
        sub = service.subscription()
        subscription = Subscription(sub["endpoint"], sub["keys"]["p256dh"], sub["keys"]["auth"])
        store.add(subscription)
        assert push.send(store, keys, subscription, {"session": "k1", "what": "done"}) is True
        assert len(service.pushes) == 1
        got = service.pushes[0]
        assert got["payload"] == {"session": "k1", "what": "done"}
        assert got["claims"]["aud"] == service.origin
        assert got["claims"]["sub"] == push.SUBJECT
        assert store.all() == [subscription]
        service.status = 410
        assert push.send(store, keys, subscription, {"session": "k1", "what": "done"}) is False
        assert store.all() == []
    finally:
        service.close()
