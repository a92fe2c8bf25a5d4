"""The webhook service without a daemon: which changes each webhook queues, how far its queue
may grow, and what a failure leaves in the log (never the token, never the body)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from roost.base.errors import UsageError
from roost.remote.swarm.feed import Feed
from roost.services.notify.registrations import Registrations
from roost.services.notify.webhooks import Webhooks
from roost.truth.roster import Change, Roster
from roost.truth.roster.live import Live
from tests.roster.helpers import Clock

TOKEN = "unit-secret-0123456789abcdef"


def change(seq: int, event: str = "activity") -> Change:
    return Change(seq, event, 1_700_000_000.0 + seq, 42)


def resolving(first: list[str]) -> tuple[Callable[[str, int], Awaitable[list[str]]], list[str]]:
    """A lookup that answers ``first`` once (the registration), then never answers (every
    delivery hangs in it); and the hosts it was asked for."""
    asked: list[str] = []

    async def lookup(host: str, port: int) -> list[str]:
        asked.append(host)
        if len(asked) == 1:
            return first
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    return lookup, asked


def run(tmp_path: Path, body: Callable[[Webhooks], Awaitable[Any]], **options: Any) -> Any:
    async def main() -> Any:
        live = Live(Roster("node", "n1", time.time), time.time)
        follow = lambda: live.subscribe(replay=False, own=True)  # noqa: E731
        async with Webhooks(follow, Registrations(tmp_path / "webhooks.json"), **options) as webhooks:
            return await body(webhooks)

    return asyncio.run(main())


def test_a_full_queue_drops_instead_of_growing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lookup, _ = resolving(["127.0.0.1"])

    async def body(webhooks: Webhooks) -> dict[str, Any]:
        await webhooks.add("http://localhost:9/hook", (), TOKEN)
        for seq in range(1, 11):
            webhooks.fan_out(change(seq))
        at_once = webhooks.listing()[0]["deliveries"]
        await asyncio.sleep(0.05)  # the first is taken, and hangs in the lookup
        return {"at_once": at_once, "later": webhooks.listing()[0]["deliveries"]}

    with caplog.at_level(logging.WARNING, logger="rosterd.webhooks"):
        counts = run(tmp_path, body, queue=3, resolver=lookup)
    assert counts["at_once"] == {"sent": 0, "failed": 0, "dropped": 7, "queued": 3}
    assert counts["later"] == {"sent": 0, "failed": 0, "dropped": 7, "queued": 2}
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 7
    assert all("its queue of 3 deliveries is full (the receiver is slow)" in line for line in lines)
    assert lines[0].endswith("activity (seq 4) dropped")
    assert not any(TOKEN in line or "status_epoch" in line for line in lines)


def test_a_delivery_that_takes_too_long_is_dropped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lookup, asked = resolving(["127.0.0.1"])

    async def body(webhooks: Webhooks) -> dict[str, Any]:
        made = await webhooks.add("http://localhost:9/hook", ["attention"], TOKEN)
        webhooks.fan_out(change(1, "attention"))
        webhooks.fan_out(change(2, "attention"))
        async with asyncio.timeout(5):
            while webhooks.listing()[0]["deliveries"]["failed"] < 2:
                await asyncio.sleep(0.01)
        return {"id": made["id"], **webhooks.listing()[0]["deliveries"]}

    with caplog.at_level(logging.WARNING, logger="rosterd.webhooks"):
        found = run(tmp_path, body, timeout=0.05, resolver=lookup)
    assert {k: v for k, v in found.items() if k != "id"} == {
        "sent": 0,
        "failed": 2,
        "dropped": 0,
        "queued": 0,
    }
    assert asked == ["localhost"] * 3  # once at registration, again before each delivery
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        f"webhook {found['id']}: attention (seq {seq}) was not delivered: no answer within 0.05 s; dropped "
        "(the receiver catches up with GET /swarm/changes?since=)"
        for seq in (1, 2)
    ]


def test_each_webhook_queues_only_the_kinds_it_named(tmp_path: Path) -> None:
    lookup, _ = resolving(["127.0.0.1"])

    async def body(webhooks: Webhooks) -> list[int]:
        await webhooks.add("http://localhost:9/some", ["attention", "node", "snapshot"], TOKEN)
        await webhooks.add("http://127.0.0.1:9/all", (), TOKEN)
        for seq, event in enumerate(("activity", "attention", "renamed", "snapshot", "node", "updated"), 1):
            webhooks.fan_out(change(seq, event))
        return [hook["deliveries"]["queued"] for hook in webhooks.listing()]

    # a snapshot is never delivered, even to a webhook that named it
    assert run(tmp_path, body, queue=10, resolver=lookup) == [2, 5]


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (["127.0.0.1", "192.168.0.2"], "url names the host localhost, which resolves to 192.168.0.2: not on"),
        ([], "url names the host localhost, which does not resolve"),
        (None, "url names the host localhost, which did not resolve in time"),
    ],
)
def test_a_name_that_resolves_elsewhere_is_not_registered(
    tmp_path: Path, answers: list[str] | None, message: str
) -> None:
    async def lookup(host: str, port: int) -> list[str]:
        if answers is None:
            await asyncio.sleep(10)
        return answers or []

    async def body(webhooks: Webhooks) -> list[dict[str, Any]]:
        with pytest.raises(UsageError) as refused:
            await webhooks.add("http://localhost:9/hook", (), TOKEN)
        assert refused.value.message.startswith(message) and refused.value.extra == {"field": "url"}
        return webhooks.listing()

    assert run(tmp_path, body, timeout=0.1, resolver=lookup) == []
    assert not (tmp_path / "webhooks.json").exists()


def test_deleting_a_webhook_drops_what_it_had_queued(tmp_path: Path) -> None:
    lookup, _ = resolving(["127.0.0.1"])

    async def body(webhooks: Webhooks) -> list[dict[str, Any]]:
        made = await webhooks.add("http://localhost:9/hook", (), TOKEN)
        for seq in range(1, 4):
            webhooks.fan_out(change(seq))
        await webhooks.remove(made["id"])
        webhooks.fan_out(change(4))
        return webhooks.listing()

    assert run(tmp_path, body, resolver=lookup) == []
    assert Registrations(tmp_path / "webhooks.json").all() == []


class Union:
    """A view of the union whose document says only where the feed stood: enough for a snapshot."""

    def document(self, epoch: int, seq: int) -> dict[str, int]:
        return {"status_epoch": epoch, "seq": seq}


def test_the_service_follows_the_swarms_feed_and_delivers_no_snapshot_to_a_follower_left_behind(
    tmp_path: Path,
) -> None:
    """Every node's changes come through the swarm's feed, numbered as ``/swarm/changes`` numbers
    them; a follower that fell behind is handed a snapshot, which is no change: nothing is
    delivered for it, and the receiver catches up from the stream with the last seq it saw."""
    lookup, _ = resolving(["127.0.0.1"])
    clock = Clock()

    async def main() -> list[list[tuple[str, int, str]]]:
        feed = Feed("n1", "desk", Union, clock, backlog=3)
        follow = lambda: feed.subscribe(feed.head, feed.epoch)  # noqa: E731
        async with Webhooks(follow, Registrations(tmp_path / "webhooks.json"), resolver=lookup) as webhooks:
            await webhooks.add("http://localhost:9/hook", (), TOKEN)
            seen = []
            for burst in ((("n1", "activity"), ("n2", "attention")), (("n3", "activity"),) * 5):
                for node, event in burst:  # in one go, so the follower reads them after the last
                    feed.append(event, node, node, record={"session_key": f"{node}:1:2"})
                await asyncio.sleep(0.05)
                lane = next(iter(webhooks._lanes.values()))
                items = [lane.queue.get_nowait() for _ in range(lane.queue.qsize())]
                seen.append([(i.event, i.seq, json.loads(i.body)["data"]["node_id"]) for i in items])
            return seen

    first, behind = asyncio.run(main())
    assert first == [("attention", 2, "n2")]  # the first is in the hung delivery; the peer's follows
    assert behind == []  # five past a backlog of three: a snapshot, which is not delivered
