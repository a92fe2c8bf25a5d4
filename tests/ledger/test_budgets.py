"""Budgets on a real live roster: a session's, a folder's and the day's, each crossing told once
as ``attention`` on the session whose turn crossed it, a limit that refuses prompts and cancels
a headless turn under way, a lift, a peer's spend counted, and a new UTC day."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from roost.base.errors import OverBudget, SetupError, TargetGone, UsageError
from roost.services.ledger import follow
from roost.services.ledger.budgets import Settings, Store, refusal
from roost.truth.roster.changes import ATTENTION, UPDATED
from tests.ledger.sessions import Panes, World, settle
from tests.roster.helpers import Clock

OPUS = {"input": 1000, "output": 200, "cached_read": 30000, "cached_write": 400}
"""0.0275 USD at Claude Opus 4.8's price."""


def events(world: World, key: str) -> list[str]:
    """Every change of session ``key`` the roster named, in order."""
    return [
        c.event
        for c in world.live.roster.changes_since(0)
        if c.record is not None and c.record.session_key == key
    ]


def budget(world: World, key: str) -> dict[str, Any] | None:
    record = world.live.roster.record(key)
    assert record is not None
    return record.budget


def test_a_sessions_budget_warns_once_then_holds_it_and_a_lift_lets_it_go(tmp_path: Path) -> None:
    async def scenario() -> str:
        world = World(tmp_path, Clock())
        async with world.ledger(Settings(session=0.10, warn=0.5)):
            key = world.start(100, harness="claude", model="opus", name="api")
            other = world.start(200, harness="claude", model="opus")
            world.turn(key, cost=0.04)
            await settle()
            assert budget(world, key) is None
            world.turn(key, cost=0.06)
            await settle()
            warned = budget(world, key)
            assert warned is not None
            assert (warned["state"], warned["scope"], warned["crossed_by"]) == ("warning", "session", key)
            assert warned["reason"] == "this session has spent 0.06 USD of 0.10 USD, its budget: 60 % of it"
            assert warned["lift"] == f"rosterd budget lift session {key}"
            assert events(world, key).count(ATTENTION) == 1
            assert refusal(world.live.roster.record(key)) is None
            world.turn(key, cost=0.08)  # still a warning: no second attention
            await settle()
            assert events(world, key).count(ATTENTION) == 1
            world.turn(key, cost=0.11)
            await settle()
            held = budget(world, key)
            assert (held["state"], held["crossed_by"]) == ("exceeded", key)
            assert "no prompt is sent until a person lifts it" in held["reason"]
            assert events(world, key).count(ATTENTION) == 2
            over = refusal(world.live.roster.record(key))
            assert isinstance(over, OverBudget)
            assert (over.status, over.exit_code, over.extra["code"]) == (409, 1, "over_budget")
            assert over.message.startswith("api: this session has spent 0.11 USD of 0.10 USD")
            assert over.message.endswith(f"(rosterd budget lift session {key} lets it through)")
            assert budget(world, other) is None  # another session's budget is its own
            assert world.budgets is not None
            world.budgets.lift("session", key)
            assert budget(world, key)["state"] == "lifted"
            assert refusal(world.live.roster.record(key)) is None
            world.turn(key, cost=0.2)
            await settle()
            assert budget(world, key)["state"] == "lifted"
            assert events(world, key).count(ATTENTION) == 2
        return key

    key = asyncio.run(scenario())
    stored = json.loads((tmp_path / "budgets.json").read_text())
    assert list(stored["lifted"]) == [f"session:{key}"]
    assert os.stat(tmp_path / "budgets.json").st_mode & 0o777 == 0o600


def test_a_folders_budget_holds_every_session_in_it_and_tells_only_the_one_that_crossed_it(
    tmp_path: Path, home: Path
) -> None:
    world = World(tmp_path, Clock())
    panes = Panes(world, home)

    async def scenario() -> None:
        async with world.ledger(Settings(folders={"/work/api": 0.05})):
            crossing, beside = panes.start(300, cwd="/work/api"), panes.start(301, cwd="/work/api/sub")
            elsewhere = panes.start(302, cwd="/work/web")
            await world.settled()
            for _ in range(2):
                panes.prompt(300)
                panes.answer(300, "claude-opus-4-8", **OPUS)
                panes.stop(300)
                await world.settled()
            held = budget(world, crossing)
            assert (held["state"], held["scope"], held["folder"], held["crossed_by"]) == (
                "exceeded",
                "folder",
                "/work/api",
                crossing,
            )
            assert held["day"] is not None and held["day"] in held["reason"]
            assert budget(world, beside) == held  # the folder under it is held too
            assert budget(world, elsewhere) is None
            assert ATTENTION in events(world, crossing)
            assert ATTENTION not in events(world, beside) and UPDATED in events(world, beside)

    asyncio.run(scenario())


def test_a_pane_crossing_mid_turn_is_told_mid_turn_and_not_again_when_the_turn_ends(
    tmp_path: Path, home: Path
) -> None:
    clock = Clock()
    world = World(tmp_path, clock)
    panes = Panes(world, home)

    async def scenario() -> None:
        async with world.ledger(Settings(session=0.05)):
            key = panes.start(300)
            await world.settled()
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            clock.advance(3)
            world.apply(panes_tool(panes, 300, clock))  # the agent runs a tool: a look at the turn
            await world.settled()
            assert budget(world, key)["state"] == "exceeded"
            assert world.live.roster.record(key).spend is None  # nothing counted yet
            assert events(world, key).count(ATTENTION) == 1
            panes.stop(300)
            await world.settled()
            assert world.live.roster.record(key).spend["cost"] == {"USD": 0.055}
            assert budget(world, key)["state"] == "exceeded"
            assert events(world, key).count(ATTENTION) == 1

    asyncio.run(scenario())


def test_a_pane_turn_that_says_nothing_after_its_answer_is_looked_at_on_a_timer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    """No hook fires while the model thinks after an answer: the ledger looks again anyway,
    every ``PEEK_EVERY`` (shortened here), and tells the crossing mid-turn."""
    monkeypatch.setattr(follow, "PEEK_EVERY", 0.05)
    clock = Clock()
    world = World(tmp_path, clock)
    panes = Panes(world, home)

    async def scenario() -> None:
        async with world.ledger(Settings(session=0.05)):
            key = panes.start(300)
            await world.settled()
            panes.prompt(300)
            await world.settled()
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            clock.advance(3)
            for _ in range(100):
                await asyncio.sleep(0.01)
                await world.settled()
                if budget(world, key):
                    break
            assert budget(world, key)["state"] == "exceeded"
            assert world.live.roster.record(key).activity == "active"
            assert events(world, key).count(ATTENTION) == 1

    asyncio.run(scenario())


def panes_tool(panes: Panes, pid: int, clock: Clock) -> Any:
    from roost.truth.roster import Claim, ProcessId
    from roost.truth.roster.precedence import HOOK

    return Claim(HOOK, clock(), process=ProcessId(pid, 3), activity="working", event="PreToolUse")


def test_the_days_budget_counts_a_peers_spend_cancels_a_headless_turn_and_ends_with_the_day(
    tmp_path: Path,
) -> None:
    clock = Clock(1_796_601_000.0)  # 2026-12-06, 23:30 UTC
    world = World(tmp_path, clock)
    asked: list[tuple[str, float]] = []

    async def ask(node_id: str, since: float) -> dict[str, Any]:
        asked.append((node_id, since))
        return {"rows": [{"folder": "/elsewhere", "cost": {"USD": 4.5, "EUR": 99.0}}, {"folder": 3}]}

    async def scenario() -> None:
        async with world.ledger(Settings(day=5.0)):
            assert world.budgets is not None
            world.budgets.ask = ask
            key = world.start(100, harness="claude", model="opus")
            world.begin(key)  # a turn under way
            world.budgets.peer_heard("peer-node")
            world.budgets.peer_heard("peer-node")  # one ask covers both
            await asyncio.sleep(0.4)
            await settle()
            assert budget(world, key)["state"] == "warning"
            assert budget(world, key)["crossed_by"] is None  # the peer's spend: the peer tells its own
            assert ATTENTION not in events(world, key)
            world.finish(key, cost=0.6)
            await settle()
            held = budget(world, key)
            assert (held["state"], held["scope"], held["crossed_by"]) == ("exceeded", "day", key)
            assert held["reason"].startswith(
                "every node's sessions have spent 5.10 USD of 5.00 USD on 2026-12-06"
            )
            other = world.start(200, harness="claude", model="opus")
            world.begin(other)
            world.budgets.evaluate(None)
            assert budget(world, other)["state"] == "exceeded"
            clock.advance(3600)  # midnight passed
            world.budgets.evaluate(None)
            assert budget(world, key) is None and budget(world, other) is None
            view = world.budgets.view()
            assert view["day"] == "2026-12-07" and view["budgets"][0]["spent"] == 0.0

    asyncio.run(scenario())
    assert asked == [("peer-node", 1_796_515_200.0)]  # the day's start
    assert world.cancelled == []  # the only turn under way when it crossed ended with that crossing


def test_a_headless_turn_under_way_when_the_day_is_exceeded_is_cancelled(tmp_path: Path) -> None:
    world = World(tmp_path, Clock())

    async def scenario() -> None:
        async with world.ledger(Settings(day=1.0)):
            spender = world.start(100, harness="claude", model="opus")
            busy = world.start(200, harness="claude", model="opus")
            world.begin(busy)
            world.turn(spender, cost=1.5)
            await settle()
            await asyncio.sleep(0)
            assert budget(world, busy)["state"] == "exceeded"

    asyncio.run(scenario())
    assert world.cancelled == [f"{world.live.roster.node_id}:200:1"]


def test_budgets_set_through_a_face_are_kept_checked_and_cleared(tmp_path: Path) -> None:
    world = World(tmp_path, Clock())

    async def scenario() -> None:
        async with world.ledger(Settings(session=1.0, warn=0.8)):
            budgets = world.budgets
            assert budgets is not None
            key = world.start(100, harness="claude", model="opus")
            made = budgets.set("session", key, 0.5)
            assert (made.limit, made.warn, made.origin) == (0.5, 0.8, "api")
            budgets.set("folder", "/work/api/", 3, 0.5)
            budgets.set("day", None, 10)
            view = budgets.view()
            assert [(b["scope"], b["target"], b["limit"], b["origin"]) for b in view["budgets"]] == [
                ("session", None, 1.0, "config"),  # every session's but the one with its own
                ("session", key, 0.5, "api"),
                ("folder", "/work/api", 3.0, "api"),
                ("day", None, 10.0, "api"),
            ]
            assert view["budgets"][0]["session_key"] is None
            for call, error in (
                (lambda: budgets.set("week", None, 1), "scope must be one of session, folder, day"),
                (lambda: budgets.set("day", "x", 1), "a day budget has no target"),
                (lambda: budgets.set("folder", "rel", 1), "a folder budget's target is an absolute folder"),
                (lambda: budgets.set("day", None, 0), "limit must be a number greater than 0"),
                (lambda: budgets.set("day", None, True), "limit must be a number greater than 0"),
                (lambda: budgets.set("day", None, 1, 1.5), "warn must be a fraction of the limit"),
            ):
                with pytest.raises(UsageError, match=error):
                    call()
            with pytest.raises(TargetGone):
                budgets.set("session", "nobody", 1)
            budgets.clear("day", None)
            with pytest.raises(TargetGone):
                budgets.clear("day", None)

    asyncio.run(scenario())
    kept = Store(tmp_path / "budgets.json")
    assert sorted((scope, target) for scope, target in kept.limits) == [
        ("folder", "/work/api"),
        ("session", f"{world.live.roster.node_id}:100:1"),
    ]
    (tmp_path / "budgets.json").write_text(
        '{"schema": "rosterd.budgets.v1", "budgets": [{"scope": "day"}], "lifted": {}}'
    )
    with pytest.raises(SetupError, match="is not a list of budgets"):
        Store(tmp_path / "budgets.json")
    os.chmod(tmp_path / "budgets.json", 0o644)
    with pytest.raises(SetupError):
        Store(tmp_path / "budgets.json")


def test_a_budget_change_the_disk_refuses_changes_nothing(tmp_path: Path) -> None:
    """A set, clear or lift whose save fails leaves the budgets as they were: the daemon never
    holds (or lets through) what a restart would not."""
    world = World(tmp_path, Clock())

    async def scenario() -> None:
        async with world.ledger(Settings()):
            budgets = world.budgets
            assert budgets is not None
            budgets.set("day", None, 10)
            before = (dict(budgets.store.limits), dict(budgets.store.lifted), budgets.view())
            kept = budgets.store.path
            kept.unlink()
            (kept / "in-the-way").mkdir(parents=True)  # a directory where the file goes
            for change in (
                lambda: budgets.set("day", None, 20),
                lambda: budgets.set("folder", "/work/api", 3),
                lambda: budgets.clear("day", None),
                lambda: budgets.lift("day", None),
            ):
                with pytest.raises(OSError):
                    change()
                assert (dict(budgets.store.limits), dict(budgets.store.lifted), budgets.view()) == before

    asyncio.run(scenario())
