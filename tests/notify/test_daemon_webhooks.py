"""Webhooks end to end: a real rosterd, real claims, and receivers on loopback that count what
arrives against ``GET /swarm/changes``, the stream a webhook must match change for change."""

from __future__ import annotations

import json
import queue
import signal
import stat
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.agentpane import start_agent
from tests.api.helpers import about, sleeper
from tests.api.sse import Event, Events
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon, free_port, running
from tests.fakes.webhook_receiver import Receiver

__all__ = ["daemon", "running"]

TOKEN = "receiver-secret-0123456789abcdef"
OTHER_TOKEN = "another-receiver-secret-0123456789"
DRIVEN = ("session_started", "attention", "attention_cleared", "activity", "renamed", "session_ended")
"""What :func:`drive` makes one session go through, in order."""
DELIVERY = 0.1
"""Seconds from POST /claim to the frame reaching an SSE subscriber (as tests/api/test_streams.py)."""
SETTLED = 2.0
"""Seconds after a dialog opens for every later word about it to have arrived: the pane's badge
read back by the daemon, a notification hook after the dialog's own."""


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for receiver in made:
        receiver.close()


def receiver(made: list[Receiver], **options: Any) -> Receiver:
    found = Receiver(**options)
    made.append(found)
    return found


def register(client: httpx.Client, url: str, events: list[str] | None = None, token: str = TOKEN) -> Any:
    body: dict[str, Any] = {"url": url, "token": token}
    if events is not None:
        body["events"] = events
    response = client.post("/hooks", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def hooks(daemon: Daemon) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = daemon.get("/hooks")["hooks"]
    return found


def drive(daemon: Daemon, proc: Any) -> str:
    """One session through every kind of change a claim can make; its key."""
    with daemon.unix() as client:

        def claim(**fields: Any) -> dict[str, Any]:
            answer = client.post("/claim", json=about(proc, **fields))
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

        key = str(claim(activity="working")["session_key"])
        claim(activity="blocked")
        claim(activity="working")
        claim(activity="idle")
        assert client.post(f"/sessions/{key}/name", json={"name": "hooked"}).status_code == 200
        claim(ended="exit")
    return key


def changes_until(stream: Events, key: str, last: str) -> tuple[int, list[Event]]:
    """The seq the stream opened at (its snapshot's), and every change after it up to ``last``
    of session ``key``."""
    first = stream.next()
    assert first.name == "snapshot"
    seen = [stream.next()]
    while (seen[-1].name, seen[-1].data.get("session_key")) != (last, key):
        seen.append(stream.next())
    return int(first.data["seq"]), seen


def within(receiver: Receiver, opened: int, last: int) -> list[Any]:
    """What ``receiver`` got about the changes the stream sent: seq ``opened`` + 1 to ``last``
    (the scan may change something before the stream opens, or after the last change)."""
    return [body for body in receiver.bodies() if opened < body["data"]["seq"] <= last]


def test_every_matching_change_arrives_once_in_order_as_the_stream_gives_it(
    running: Daemon, receivers: list[Receiver]
) -> None:
    everything, some = receiver(receivers), receiver(receivers)
    chosen = ["attention", "session_ended", "session_started"]
    with running.unix() as client:
        made = register(client, everything.url)
        register(client, some.url, chosen, OTHER_TOKEN)
    assert made["events"] == [] and "token" not in made
    with Events(running.unix(), "/swarm/changes") as stream, sleeper() as proc:
        key = drive(running, proc)
        opened, frames = changes_until(stream, key, "session_ended")
    assert [f.name for f in frames if f.data.get("session_key") == key] == list(DRIVEN)
    last = frames[-1].data["seq"]
    expected_all = [{"event": f.name, "data": f.data} for f in frames]
    expected_some = [body for body in expected_all if body["event"] in chosen]
    running.wait_for(lambda: last in [body["data"]["seq"] for body in everything.bodies()], what="all")
    running.wait_for(lambda: last in [body["data"]["seq"] for body in some.bodies()], what="some")
    time.sleep(0.5)  # anything more would be a change delivered twice, or one not asked for
    assert within(everything, opened, last) == expected_all
    assert within(some, opened, last) == expected_some
    assert all(body["event"] in chosen for body in some.bodies())
    for got in (everything.bodies(), some.bodies()):
        seqs = [body["data"]["seq"] for body in got]
        assert seqs == sorted(set(seqs))  # each change once, in order
    assert [body["data"]["seq"] for body in expected_all] == list(range(opened + 1, last + 1))
    for got, token in ((everything.received[0], TOKEN), (some.received[0], OTHER_TOKEN)):
        assert got.path == "/hook"
        assert got.headers["authorization"] == f"Bearer {token}"
        assert got.headers["content-type"] == "application/json"
        assert got.headers["x-rosterd-event"] == got.body["event"]
        assert got.headers["host"] == f"127.0.0.1:{everything.port if token == TOKEN else some.port}"
    assert all(r.headers["x-rosterd-event"] == r.body["event"] for r in everything.received)
    counts = {hook["url"]: hook["deliveries"] for hook in hooks(running)}
    assert counts[everything.url] == {
        "sent": len(everything.received),
        "failed": 0,
        "dropped": 0,
        "queued": 0,
    }


def frames_for(stream: Events, key: str, quiet: float, most: float = 10.0) -> list[Event]:
    """Every frame about session ``key`` until the stream has said nothing for ``quiet`` seconds
    (or ``most`` seconds have passed: other sessions on the machine may keep it talking)."""
    seen = []
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        try:
            event = stream.next(quiet)
        except queue.Empty:
            break
        if event.data.get("session_key") == key:
            seen.append(event)
    return seen


# A dialog as Claude Code opens one (PermissionRequest, then Notification permission_prompt),
# as it opens one with no tool of its own (Notification permission_prompt alone), and as an agent
# whose hooks fire PermissionRequest only.
DIALOGS = [
    pytest.param("please deploy", ("--dialog-notice",), id="permission-request-then-notification"),
    pytest.param("/exit", ("--exit-dialog",), id="notification-alone"),
    pytest.param("please deploy", (), id="permission-request-alone"),
]


@pytest.mark.parametrize(("prompt", "flags"), DIALOGS)
def test_one_dialog_is_one_attention_on_the_stream_and_to_a_webhook(
    roost: Roost, running: Daemon, receivers: list[Receiver], prompt: str, flags: tuple[str, ...]
) -> None:
    """Every word about one open dialog (the hook's claim, the badge it wrote read back by the
    daemon, a notification about the same dialog) is one wait: one ``attention`` to notify on."""
    target = receiver(receivers)
    with running.unix() as client:
        register(client, target.url, ["attention"])
    # The agent's hooks reach the daemon through XDG_RUNTIME_DIR, as in a real session: the shell
    # that starts the agent has the daemon's, and a pane gets its starter's environment.
    roost.env["XDG_RUNTIME_DIR"] = str(running.runtime)
    roost.start("sleep 600", session="keep")
    agent = start_agent(roost, running, "--dialog-on", "deploy", *flags)
    row = agent.row() or {}
    key = agent.record()["session_key"]
    with Events(running.unix(), "/swarm/changes") as stream:
        stream.until("snapshot")
        pins = {name: row[name] for name in ("status_epoch", "occupant_id", "revision")}
        assert agent.post("/prompt", {"text": prompt, **pins}).status_code == 200
        first = stream.until("attention", key=key, timeout=20)
        after = frames_for(stream, key, SETTLED)
    wait = first.data["record"]["pending"]
    assert wait is not None and wait["id"], first.data
    assert [frame.name for frame in after if frame.name.startswith("attention")] == [], [
        (frame.name, frame.data["record"]["activity_event"]) for frame in after
    ]
    assert all(frame.data["record"]["pending"] == wait for frame in after)
    assert agent.record()["pending"]["id"] == wait["id"]
    running.wait_for(lambda: target.bodies(), what="the attention webhook")
    time.sleep(0.5)  # a second delivery, were there one, has had its chance
    delivered = [body for body in target.bodies() if body["data"]["session_key"] == key]
    assert [body["data"]["seq"] for body in delivered] == [first.data["seq"]]


def test_a_name_is_delivered_to_the_address_it_was_checked_at(
    running: Daemon, receivers: list[Receiver]
) -> None:
    target = receiver(receivers)
    with running.unix() as client:
        register(client, f"http://localhost:{target.port}/by-name?x=1", ["session_started"])
    with sleeper() as proc, running.unix() as client:
        client.post("/claim", json=about(proc, activity="working"))
        got = target.wait_for(1)[0]
    assert got.path == "/by-name?x=1"
    assert got.headers["host"] == f"localhost:{target.port}"


def test_both_listeners_serve_the_routes_and_tcp_needs_the_bearer(
    running: Daemon, receivers: list[Receiver]
) -> None:
    target = receiver(receivers)
    body = {"url": target.url, "events": ["attention"], "token": TOKEN}
    with running.tcp() as anonymous:
        assert anonymous.post("/hooks", json=body).status_code == 401
        assert anonymous.get("/hooks").status_code == 401
    assert hooks(running) == []
    with running.tcp(running.token) as client:
        made = register(client, target.url, ["attention"])
        listed = client.get("/hooks").json()["hooks"]
        assert [hook["id"] for hook in listed] == [made["id"]]
        with running.tcp() as anonymous:
            assert anonymous.delete(f"/hooks/{made['id']}").status_code == 401
        assert client.delete(f"/hooks/{made['id']}").status_code == 204
        assert client.get("/hooks").json() == {"hooks": []}
        assert client.delete(f"/hooks/{made['id']}").status_code == 404


def test_registrations_survive_a_restart_in_a_private_file(
    running: Daemon, receivers: list[Receiver]
) -> None:
    target = receiver(receivers)
    with running.unix() as client:
        made = register(client, target.url, ["session_started", "session_ended"])
    kept = running.config_dir / "webhooks.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert [entry["token"] for entry in json.loads(kept.read_text())["webhooks"]] == [TOKEN]
    before = hooks(running)
    assert running.stop() == 0
    running.start()
    after = hooks(running)
    assert [{k: v for k, v in hook.items() if k != "deliveries"} for hook in after] == [
        {k: v for k, v in hook.items() if k != "deliveries"} for hook in before
    ]
    assert after[0]["id"] == made["id"]
    with sleeper() as proc, running.unix() as client:
        client.post("/claim", json=about(proc, activity="working"))
        got = target.wait_for(1)[0]
    assert got.body["event"] == "session_started"
    assert got.headers["authorization"] == f"Bearer {TOKEN}"


@pytest.mark.parametrize("kind", ["hung", "down"])
def test_a_hung_or_down_receiver_delays_neither_the_stream_nor_the_roster(
    running: Daemon, receivers: list[Receiver], kind: str
) -> None:
    def latencies(client: httpx.Client, stream: Events, rounds: int) -> list[float]:
        times = []
        with sleeper() as proc:
            for index in range(rounds):
                sent = time.monotonic()
                answer = client.post("/claim", json=about(proc, activity=("working", "idle")[index % 2]))
                assert answer.status_code == 200, answer.text
                wanted = "session_started" if index == 0 else "activity"
                times.append(stream.until(wanted, key=answer.json()["session_key"]).at - sent)
        return times

    with Events(running.unix(), "/swarm/changes") as stream, running.unix() as client:
        stream.until("snapshot")
        alone = latencies(client, stream, 10)
        hung = receiver(receivers, hang=True)
        register(client, hung.url if kind == "hung" else f"http://127.0.0.1:{free_port()}/down")
        loaded = latencies(client, stream, 10)
    if kind == "hung":
        hung.wait_for(1)  # the first of them is stuck in the receiver, the rest wait behind it
    else:
        assert hooks(running)[0]["deliveries"]["failed"] > 0
    assert max(loaded) < DELIVERY, (alone, loaded)
    assert sorted(loaded)[5] < sorted(alone)[5] + 0.02, (alone, loaded)


def test_a_slow_receiver_gets_a_bounded_queue_and_the_rest_is_dropped(
    running: Daemon, receivers: list[Receiver]
) -> None:
    hung = receiver(receivers, hang=True)
    with running.unix() as client:
        made = register(client, hung.url, ["activity", "session_started"])
        with sleeper() as proc:
            began = time.monotonic()
            for index in range(200):
                answer = client.post("/claim", json=about(proc, activity=("working", "idle")[index % 2]))
                assert answer.status_code == 200
            took = time.monotonic() - began
    (hook,) = hooks(running)
    counts = hook["deliveries"]
    assert counts["queued"] <= 128 and counts["dropped"] > 0 and counts["sent"] == 0
    # every change is queued, dropped, failed, or the one stuck in the receiver
    assert counts["queued"] + counts["dropped"] + counts["failed"] in (199, 200), counts
    assert took < 10
    log = running.log.read_text()
    assert f"webhook {made['id']}: its queue of 128 deliveries is full" in log
    assert log.count("is full") == 1  # one line a minute, however many are dropped
    assert TOKEN not in log


def test_a_failed_delivery_is_dropped_and_logged_without_token_or_body(
    running: Daemon, receivers: list[Receiver]
) -> None:
    failing = receiver(receivers, status=500)
    fine = receiver(receivers)
    moved = receiver(receivers, status=307, location=fine.url)
    closed = f"http://127.0.0.1:{free_port()}/nobody"
    with running.unix() as client:
        for url in (closed, failing.url, moved.url, fine.url):
            register(client, url, ["session_started", "renamed"])
        with sleeper() as proc:
            key = client.post("/claim", json=about(proc, activity="working")).json()["session_key"]
            client.post(f"/sessions/{key}/name", json={"name": "secret-looking-name"})
            fine.wait_for(2)
    failing.wait_for(2)
    moved.wait_for(2)
    time.sleep(0.3)
    assert len(fine.received) == 2  # the redirect was not followed to it

    def failed_six() -> list[dict[str, Any]] | None:
        found = hooks(running)
        return found if sum(hook["deliveries"]["failed"] for hook in found) == 6 else None

    counts = {hook["url"]: hook["deliveries"] for hook in running.wait_for(failed_six, what="six failures")}
    for url in (closed, failing.url, moved.url):
        assert counts[url] == {"sent": 0, "failed": 2, "dropped": 0, "queued": 0}
    assert counts[fine.url]["sent"] == 2
    log = running.log.read_text()
    ids = {hook["url"]: hook["id"] for hook in hooks(running)}
    assert f"webhook {ids[closed]}: session_started (seq " in log and "ConnectError" in log
    assert f"webhook {ids[failing.url]}: session_started (seq " in log and "answered 500" in log
    assert f"webhook {ids[moved.url]}: session_started (seq " in log and "answered 307" in log
    assert TOKEN not in log and "secret-looking-name" not in log and '"record"' not in log


REFUSED = [
    ({"url": "http://192.168.1.10/hook", "token": TOKEN}, "url points to 192.168.1.10, which is not on"),
    ({"url": "http://example.com/hook", "token": TOKEN}, "url names the host example.com, which is not on"),
    ({"url": "http://user:pw@127.0.0.1/hook", "token": TOKEN}, "url may not hold a user or password"),
    ({"url": "ftp://127.0.0.1/hook", "token": TOKEN}, "url must be http or https, not ftp"),
    (
        {"url": "http://nowhere.tail0.ts.net/", "token": TOKEN},
        "url names the host nowhere.tail0.ts.net, which does not resolve",
    ),
    (
        {"url": "http://127.0.0.1/", "token": TOKEN, "events": ["attention", "bogus"]},
        "events holds 'bogus', which is not a change kind",
    ),
    (
        {"url": "http://127.0.0.1/", "token": TOKEN, "events": ["attention", "attention"]},
        "events names 'attention' twice",
    ),
    (
        {"url": "http://127.0.0.1/", "token": TOKEN, "events": "attention"},
        "events must be distinct change kinds",
    ),
    ({"url": "http://127.0.0.1/", "token": "short"}, "token must be a bearer token of 16 to 512"),
    ({"url": "http://127.0.0.1/", "token": "has spaces in it, not a bearer"}, "token must be a bearer token"),
    ({"url": "http://127.0.0.1/"}, "token is required"),
    ({"token": TOKEN}, "url is required"),
    (
        {"url": "http://127.0.0.1/", "token": TOKEN, "event": ["attention"]},
        "event is not a field this body may hold",
    ),
    (
        {"url": "http://127.0.0.1/" + "a" * 2032, "token": TOKEN},
        "url is too long: 2049 characters, at most 2048",
    ),
]


@pytest.mark.parametrize(("body", "message"), REFUSED, ids=[m.split(",")[0][:40] for _, m in REFUSED])
def test_a_refused_registration_is_400_and_changes_nothing(
    running: Daemon, body: dict[str, Any], message: str
) -> None:
    with running.unix() as client:
        register(client, "http://127.0.0.1:9/kept")
        kept = (running.config_dir / "webhooks.json").read_bytes()
        response = client.post("/hooks", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["error"].startswith(message), response.json()
        assert response.json()["field"] in ("url", "events", "token", "event")
        assert [hook["url"] for hook in client.get("/hooks").json()["hooks"]] == ["http://127.0.0.1:9/kept"]
    assert (running.config_dir / "webhooks.json").read_bytes() == kept


def test_bodies_that_are_not_a_registration_are_refused(running: Daemon) -> None:
    with running.unix() as client:
        assert client.post("/hooks", content=b"not json").status_code == 400
        assert client.post("/hooks", json=["a list"]).json() == {"error": "the body must be a JSON object"}
        assert (
            client.post("/hooks", json={"url": "http://127.0.0.1/", "token": "a" * 5000}).status_code == 413
        )
        missing = client.delete("/hooks/0123456789abcdef")
        assert (missing.status_code, missing.json()) == (404, {"error": "no such webhook"})
        assert client.get("/hooks").json() == {"hooks": []}
    assert not (running.config_dir / "webhooks.json").exists()


def test_at_most_64_webhooks(running: Daemon) -> None:
    with running.unix() as client:
        for index in range(64):
            register(client, f"http://127.0.0.1:9/{index}")
        kept = (running.config_dir / "webhooks.json").read_bytes()
        response = client.post("/hooks", json={"url": "http://127.0.0.1:9/65", "token": TOKEN})
        assert response.status_code == 429
        assert response.json() == {
            "error": "64 webhooks are registered already; delete one first",
            "limit": 64,
        }
        assert len(client.get("/hooks").json()["hooks"]) == 64
        assert (running.config_dir / "webhooks.json").read_bytes() == kept
        first = client.get("/hooks").json()["hooks"][0]["id"]
        assert client.delete(f"/hooks/{first}").status_code == 204
        register(client, "http://127.0.0.1:9/65")


def test_a_daemon_refuses_to_start_on_a_webhooks_file_others_can_read(daemon: Daemon) -> None:
    daemon.start()
    with daemon.unix() as client:
        register(client, "http://127.0.0.1:9/kept")
    assert daemon.stop(signal.SIGTERM) == 0
    kept = daemon.config_dir / "webhooks.json"
    kept.chmod(0o644)
    proc = daemon.spawn()
    assert proc.wait(20) != 0
    assert f"{kept} is readable by others (mode 644); chmod 600 it" in daemon.log.read_text()
