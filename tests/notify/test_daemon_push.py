"""Web Push end to end: a real rosterd, a pane badged with ``roost state``, and a loopback push
service stub that checks the VAPID signature and decrypts every push (RFC 8291)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from roost.services.notify.store import Store
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon, running
from tests.fakes.push_service import PushService

__all__ = ["daemon", "running"]

GRACE = 1.0
QUIET = 2.5
"""Seconds to watch for a push that must not come: the grace plus a generous margin."""


@pytest.fixture
def services(running: Daemon) -> Iterator[list[PushService]]:
    """Push service stubs made with ``stub(running)``; closed after the test."""
    made: list[PushService] = []
    yield made
    for service in made:
        service.close()


def stub(daemon: Daemon, made: list[PushService]) -> PushService:
    key = daemon.get("/push/vapid-key")["key"]
    service = PushService(key)
    made.append(service)
    return service


def post(daemon: Daemon, path: str, doc: dict[str, Any]) -> Any:
    with daemon.unix() as client:
        return client.post(path, json=doc)


def subscribe(daemon: Daemon, service: PushService, name: str, viewing: str | None = None) -> str:
    sub = service.subscription(name)
    response = post(daemon, "/push/subscribe", {**sub, "viewing": viewing})
    assert response.status_code == 201, response.text
    return str(sub["endpoint"])


def set_state(roost: Roost, pane: str, word: str, *reason: str) -> None:
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    proc = roost.run("state", word, *reason, env=inside)
    assert proc.returncode == 0, proc.stderr


def activity(daemon: Daemon, pane: str, want: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return daemon.record_where(
            lambda r: (
                (r.get("tmux") or {}).get("pane") == pane
                and r["liveness"] != "ended"
                and r["activity"] == want
            )
        )

    record: dict[str, Any] = daemon.wait_for(found, what=f"{pane} {want}")
    return record


def working(roost: Roost, daemon: Daemon, pane: str) -> str:
    set_state(roost, pane, "working")
    return str(activity(daemon, pane, "active")["session_key"])


def wait_pushes(service: PushService, count: int, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while len(service.pushes) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(service.pushes) >= count, service.pushes


def store(roost: Roost) -> Store:
    return Store(roost.root / "state" / "roost" / "push.sqlite3")


def test_blocked_in_the_background_pushes_once_after_the_grace(
    roost: Roost, running: Daemon, services: list[PushService]
) -> None:
    pane = roost.start()
    service = stub(running, services)
    subscribe(running, service, "phone")
    key = working(roost, running, pane)
    assert service.pushes == []  # starting to work is not news
    set_state(roost, pane, "blocked", "Bash: npm test")
    told = time.monotonic()
    wait_pushes(service, 1)
    assert time.monotonic() - told >= GRACE * 0.9
    time.sleep(QUIET)
    assert len(service.pushes) == 1
    record = activity(running, pane, "needs_attention")
    payload = service.pushes[0]["payload"]
    assert payload == {
        "session_key": key,
        "name": record["name"],
        "state": "needs input",
        "revision": payload["revision"],
        # What it asks, one line; its terminal alone answers it (a badge set by hand has no gate).
        "request": {"id": record["pending"]["id"], "asks": "Bash: npm test", "answers": []},
    }
    assert isinstance(payload["revision"], int) and payload["revision"] <= record["revision"]
    assert service.pushes[0]["claims"]["aud"] == service.origin

    set_state(roost, pane, "done")
    wait_pushes(service, 2)
    assert service.pushes[1]["payload"]["state"] == "done"

    working(roost, running, pane)
    set_state(roost, pane, "error", "API Error: 400")  # a failed turn reads as the page says it
    wait_pushes(service, 3)
    assert service.pushes[2]["payload"]["state"] == "error"


def test_opening_the_session_within_the_second_cancels_the_push(
    roost: Roost, running: Daemon, services: list[PushService]
) -> None:
    pane = roost.start()
    service = stub(running, services)
    subscribe(running, service, "phone")
    key = working(roost, running, pane)
    set_state(roost, pane, "blocked")
    record = activity(running, pane, "needs_attention")
    response = post(running, f"/sessions/{key}/seen", {})
    assert response.status_code == 200, response.text
    assert response.json() == {"session_key": key, "revision": record["revision"], "cancelled": True}
    time.sleep(QUIET)
    assert service.pushes == []
    again = post(running, f"/sessions/{key}/seen", {})
    assert again.json()["cancelled"] is False


def test_a_device_viewing_the_session_is_not_told(
    roost: Roost, running: Daemon, services: list[PushService]
) -> None:
    pane = roost.start()
    key = working(roost, running, pane)
    looking, away = stub(running, services), stub(running, services)
    endpoint = subscribe(running, looking, "looking", viewing=key)
    subscribe(running, away, "away")
    set_state(roost, pane, "blocked")
    wait_pushes(away, 1)
    time.sleep(QUIET)
    assert looking.pushes == []
    assert len(away.pushes) == 1

    assert post(running, "/push/viewing", {"endpoint": endpoint, "session": None}).status_code == 204
    working(roost, running, pane)
    set_state(roost, pane, "blocked")
    wait_pushes(looking, 1)
    wait_pushes(away, 2)
    assert looking.pushes[0]["payload"]["session_key"] == key


def test_a_gone_subscription_is_removed(roost: Roost, running: Daemon, services: list[PushService]) -> None:
    pane = roost.start()
    service = stub(running, services)
    endpoint = subscribe(running, service, "dropped")
    assert [s.endpoint for s in store(roost).all()] == [endpoint]
    service.status = 410
    working(roost, running, pane)
    set_state(roost, pane, "blocked")
    wait_pushes(service, 1)
    running.wait_for(lambda: store(roost).all() == [], what="the subscription removed")
    with running.unix() as client:
        response = client.request("DELETE", "/push/subscribe", json={"endpoint": endpoint})
    assert response.status_code == 404


def test_the_routes_check_their_input(roost: Roost, running: Daemon, services: list[PushService]) -> None:
    pane = roost.start()
    key = working(roost, running, pane)
    service = stub(running, services)
    sub = service.subscription("checked")
    bad: list[dict[str, Any]] = [
        {"keys": sub["keys"]},
        {**sub, "endpoint": "ftp://127.0.0.1/x"},
        {"endpoint": sub["endpoint"]},
        {**sub, "keys": {**sub["keys"], "p256dh": "AAAA"}},
        {**sub, "keys": {**sub["keys"], "auth": "not base64!"}},
        {**sub, "viewing": 7},
    ]
    for doc in bad:
        response = post(running, "/push/subscribe", doc)
        assert response.status_code == 400, doc
        assert "error" in response.json()
    assert post(running, "/push/subscribe", {**sub, "viewing": "no-such-key"}).status_code == 404
    assert post(running, "/push/viewing", {"endpoint": sub["endpoint"], "session": None}).status_code == 404
    assert post(running, "/sessions/no-such-key/seen", {}).status_code == 404

    with running.tcp() as client:
        assert client.get("/push/vapid-key").status_code == 401
        assert client.post("/push/subscribe", json=sub).status_code == 401
    with running.tcp(running.token) as client:
        assert client.post("/push/subscribe", json=sub).status_code == 201
        assert client.post("/push/viewing", json={"endpoint": sub["endpoint"]}).status_code == 400
        viewing = {"endpoint": sub["endpoint"], "session": "no-such-key"}
        assert client.post("/push/viewing", json=viewing).status_code == 404
        viewing["session"] = key
        assert client.post("/push/viewing", json=viewing).status_code == 204
        assert (
            client.request("DELETE", "/push/subscribe", json={"endpoint": sub["endpoint"]}).status_code == 204
        )
    assert store(roost).all() == []
