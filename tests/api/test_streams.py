"""The change streams: ``/changes`` (one frame per change, replay with ``?since``) and
``/events`` (the whole roster per change), delivered fast, resumable, and bounded."""

from __future__ import annotations

import time

import pytest

from tests.api.helpers import about, sleeper
from tests.api.sse import Events
from tests.daemon.fixture import Daemon

DELIVERY = 0.1  # seconds from POST /claim to the frame reaching a subscriber


def post(running: Daemon, body: dict) -> dict:
    with running.unix() as client:
        response = client.post("/claim", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_changes_opens_with_a_snapshot_at_the_head(running: Daemon) -> None:
    head = running.get("/status")["seq"]
    with Events(running.unix(), "/changes") as stream:
        first = stream.next()
    assert first.name == "snapshot"
    assert first.data["snapshot"]["schema"] == "rosterd.snapshot.v1"
    epoch = running.get("/status")["status_epoch"]
    assert first.id.startswith(f"{epoch}:") and int(first.id.split(":")[1]) >= head


@pytest.mark.alone  # a bound on time
def test_a_claim_reaches_a_subscriber_within_100_ms(running: Daemon) -> None:
    # One client for the claims, made before the clock starts: making an httpx client loads a
    # CA bundle (30 to 90 ms here), which is the test's cost, not the daemon's.
    with Events(running.unix(), "/changes") as stream, sleeper() as proc, running.unix() as client:
        stream.until("snapshot")
        times = []
        for activity, event in (
            ("working", "session_started"),
            ("blocked", "attention"),
            ("idle", "attention_cleared"),
        ):
            body = about(proc, activity=activity)
            sent = time.monotonic()
            answer = client.post("/claim", json=body)
            assert answer.status_code == 200, answer.text
            key = answer.json()["session_key"]
            change = stream.until(event, key=key)
            times.append(change.at - sent)
            assert change.data["record"]["session_key"] == key
        assert max(times) < DELIVERY, times


def test_every_change_name_the_stream_carries(running: Daemon) -> None:
    with Events(running.unix(), "/changes") as stream, sleeper() as proc:
        stream.until("snapshot")
        key = post(running, about(proc, activity="working"))["session_key"]
        post(running, about(proc, activity="blocked"))
        post(running, about(proc, activity="working"))
        post(running, about(proc, activity="idle"))
        with running.unix() as client:
            assert client.post(f"/sessions/{key}/name", json={"name": "renamed"}).status_code == 200
        post(running, about(proc, ended="exit"))
        names = [
            stream.until(name, key=key).name
            for name in (
                "session_started",
                "attention",
                "attention_cleared",
                "activity",
                "renamed",
                "session_ended",
            )
        ]
    assert names == [
        "session_started",
        "attention",
        "attention_cleared",
        "activity",
        "renamed",
        "session_ended",
    ]


def test_since_replays_exactly_what_was_missed(running: Daemon) -> None:
    with sleeper() as proc:
        key = post(running, about(proc, activity="working"))["session_key"]
        since = running.get("/status")["seq"]
        post(running, about(proc, activity="blocked"))
        post(running, about(proc, activity="working"))
        epoch = running.get("/status")["status_epoch"]
        for query, headers in (
            (f"?since={since}", {}),
            (f"?since={epoch}:{since}", {}),
            ("", {"Last-Event-ID": f"{epoch}:{since}"}),
            (f"?since={since}&status_epoch={epoch}", {}),
        ):
            with Events(running.unix(), f"/changes{query}", headers) as stream:
                replayed = [stream.next()]
                while (replayed[-1].name, replayed[-1].data.get("session_key")) != ("attention_cleared", key):
                    replayed.append(stream.next())
            # every change after since, in order, none skipped (other sessions' changes may interleave)
            assert [frame.data["seq"] for frame in replayed] == list(
                range(since + 1, since + 1 + len(replayed))
            )
            assert [f.name for f in replayed if f.data.get("session_key") == key] == [
                "attention",
                "attention_cleared",
            ]


def test_a_reconnect_resumes_from_last_event_id_not_from_its_address(running: Daemon) -> None:
    """An EventSource reconnects to the address it was opened with (``?since=`` of page load)
    and adds ``Last-Event-ID``: the replay starts where it got to, not where it began."""
    with sleeper() as proc:
        opened = running.get("/status")["seq"]
        key = post(running, about(proc, activity="working"))["session_key"]
        reached = running.get("/status")["seq"]
        post(running, about(proc, activity="blocked"))
        epoch = running.get("/status")["status_epoch"]
        headers = {"Last-Event-ID": f"{epoch}:{reached}"}
        with Events(running.unix(), f"/changes?since={epoch}:{opened}", headers) as stream:
            replayed = [stream.next()]
            while (replayed[-1].name, replayed[-1].data.get("session_key")) != ("attention", key):
                replayed.append(stream.next())
    assert replayed[0].data["seq"] == reached + 1
    assert "session_started" not in [f.name for f in replayed if f.data.get("session_key") == key]


def test_since_from_another_epoch_gets_a_snapshot(running: Daemon) -> None:
    with Events(running.unix(), "/changes?since=0:0") as stream:
        assert stream.next().name == "snapshot"
    with Events(running.unix(), "/changes?since=999999999") as stream:  # ahead of the head
        assert stream.next().name == "snapshot"


SINCE_WANTED = (
    "since must be SEQ or STATUS_EPOCH:SEQ, each a non-negative integer of at most 18 digits, "
    "as a change frame's id gives them (and so must Last-Event-ID)"
)


@pytest.mark.parametrize(
    ("query", "headers", "wanted"),
    [
        ("since=abc", {}, SINCE_WANTED),
        ("since=-1", {}, SINCE_WANTED),
        ("since=1:x", {}, SINCE_WANTED),
        ("since=x:1", {}, SINCE_WANTED),
        ("since=²", {}, SINCE_WANTED),
        ("since=<script>alert(1)</script>", {}, SINCE_WANTED),
        ("", {"Last-Event-ID": "<b>bold</b>"}, SINCE_WANTED),
        ("status_epoch=soon", {}, "status_epoch must be a non-negative integer of at most 18 digits"),
        ("terminals=<i>yes</i>", {}, "terminals must be 0 or 1"),
    ],
)
def test_a_bad_cursor_is_400_saying_what_is_wanted_without_echoing_it(
    running: Daemon, query: str, headers: dict[str, str], wanted: str
) -> None:
    with running.unix() as client:
        response = client.get(f"/changes?{query}", headers=headers)
    assert response.status_code == 400
    assert response.json() == {"error": wanted}


def test_events_sends_the_whole_roster_per_change(running: Daemon) -> None:
    with Events(running.unix(), "/events") as stream, sleeper() as proc:
        first = stream.next()
        assert first.name == "snapshot" and first.data["schema"] == "rosterd.snapshot.v1"
        key = post(running, about(proc, activity="working"))["session_key"]
        deadline = time.monotonic() + 10
        while True:
            frame = stream.next(max(0.01, deadline - time.monotonic()))
            if any(r["session_key"] == key for r in frame.data["records"]):
                break
    assert frame.name == "snapshot"
    assert frame.data["seq"] >= 1


def test_too_many_streams_is_429(daemon: Daemon) -> None:
    daemon.settings = {"api": {"max_streams": 1}}
    daemon.start()
    with Events(daemon.unix(), "/changes") as first:
        first.next()
        with daemon.unix() as client:
            response = client.get("/events")
        assert response.status_code == 429
        assert response.json() == {"error": "1 streams are open already; close one first"}

    def reopens() -> bool:
        with daemon.unix() as client, client.stream("GET", "/changes") as response:
            return response.status_code == 200

    assert daemon.wait_for(reopens, what="a closed stream to free its place")


def test_a_slow_reader_does_not_stall_claims(running: Daemon) -> None:
    with running.unix() as client, client.stream("GET", "/changes"), sleeper() as proc:
        began = time.monotonic()
        for _ in range(50):
            post(running, about(proc, activity="working"))
        assert time.monotonic() - began < 10
