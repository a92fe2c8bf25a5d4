"""Usage, read off a real live roster: one line per turn that reported tokens or cost, sums per
harness and model, and nothing counted twice across a restart, a resume or a turn that
reported nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from roost.services.ledger.lines import Lines
from roost.services.ledger.usage import Usage
from tests.ledger.sessions import SECRET, Panes, World, settle
from tests.roster.helpers import Clock


def turns(folder: Path) -> list[dict[str, Any]]:
    return list(Lines(folder / "usage.jsonl").read())


def tokens(**counts: int) -> dict[str, int]:
    return {"input": 0, "output": 0, "thought": 0, "cached_read": 0, "cached_write": 0, "total": 0, **counts}


def test_two_sessions_two_harnesses_two_models_and_a_restart_are_each_counted_once(tmp_path: Path) -> None:
    clock = Clock()

    async def first_life() -> tuple[World, str, str]:
        world = World(tmp_path, clock, epoch=1)
        async with world.ledger():
            claude = world.start(100, harness="claude", model="opus")
            codex = world.start(200, harness="codex", model="gpt-fake")
            world.turn(claude, {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}, cost=0.10)
            world.turn(claude, {"inputTokens": 5, "outputTokens": 5, "totalTokens": 10}, cost=0.15)
            world.turn(codex, {"inputTokens": 1, "outputTokens": 2, "thoughtTokens": 4, "totalTokens": 7})
            world.turn(codex)  # reported nothing: not a turn of usage, and the last one's is not repeated
            world.turn(codex, {"inputTokens": 1, "outputTokens": 2, "thoughtTokens": 4, "totalTokens": 7})
            world.begin(codex)  # mid-turn when the daemon goes
        return world, claude, codex

    old, claude, codex = asyncio.run(first_life())
    assert [(doc["session_key"], doc["tokens"].get("total"), doc["cost"]) for doc in turns(tmp_path)] == [
        (claude, 30, {"amount": 0.1, "currency": "USD"}),
        (claude, 10, {"amount": 0.05, "currency": "USD"}),
        (codex, 7, None),
        (codex, 7, None),
    ]
    clock.advance(60)

    async def second_life() -> None:
        world = World(tmp_path, clock, epoch=2)
        for key, harness, model in ((claude, "claude", "opus"), (codex, "codex", "gpt-fake")):
            world.rebuild(
                old, key, harness=harness, model=model
            )  # its replay ends with the last turn's usage
        async with world.ledger():
            await settle()
            world.turn(claude, {"inputTokens": 2, "outputTokens": 2, "totalTokens": 4}, cost=0.18)
            world.finish(codex, {"inputTokens": 1, "outputTokens": 2, "thoughtTokens": 4, "totalTokens": 7})

    asyncio.run(second_life())
    summary = Usage(Lines(tmp_path / "usage.jsonl")).summary()
    assert summary == {
        "rows": [
            {
                "harness": "claude",
                "model": "opus",
                "turns": 3,
                "sessions": 1,
                "tokens": tokens(input=17, output=27, total=44),
                "cost": {"USD": 0.18},
                "unpriced": 0,
            },
            {
                "harness": "codex",
                "model": "gpt-fake",
                "turns": 3,
                "sessions": 1,
                "tokens": tokens(input=3, output=6, thought=12, total=21),
                "cost": {},
                "unpriced": 3,
            },
        ],
        "total": {
            "turns": 6,
            "sessions": 2,
            "tokens": tokens(input=20, output=33, thought=12, total=65),
            "cost": {"USD": 0.18},
            "unpriced": 3,
        },
    }
    for path in tmp_path.iterdir():
        assert SECRET not in path.read_text(), path


def test_a_resumed_adapter_counting_its_cost_from_zero_again_is_new_cost(tmp_path: Path) -> None:
    async def scenario() -> None:
        world = World(tmp_path, Clock())
        async with world.ledger():
            key = world.start(100, harness="claude", model="opus")
            world.turn(key, cost=0.50)
            world.suspend(key)
            world.resume(key, 101, harness="claude", model="sonnet")
            world.turn(key, cost=0.02)
            world.turn(key, cost=0.05)

    asyncio.run(scenario())
    assert [(doc["model"], doc["cost"]["amount"], doc["tokens"]) for doc in turns(tmp_path)] == [
        ("opus", 0.5, {}),
        ("sonnet", 0.02, {}),
        ("sonnet", 0.03, {}),
    ]


def test_a_session_that_says_no_model_or_harness_is_unknown_and_a_pane_has_no_usage(tmp_path: Path) -> None:
    async def scenario() -> None:
        world = World(tmp_path, Clock())
        async with world.ledger():
            world.turn(world.start(100, harness="claude", model=None), {"totalTokens": 1})
            world.pane(300, harness="claude")
            world.pane_ends(300)

    asyncio.run(scenario())
    [turn] = turns(tmp_path)
    assert (turn["harness"], turn["model"], turn["lane"], turn["tokens"]) == (
        "claude",
        "unknown",
        "headless",
        {"total": 1},
    )


def test_since_counts_only_the_newer_turns(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        world = World(tmp_path, clock)
        async with world.ledger():
            key = world.start(100, harness="claude", model="opus")
            world.turn(key, {"totalTokens": 100})
            clock.advance(7200)
            world.turn(key, {"totalTokens": 1})

    asyncio.run(scenario())
    usage = Usage(Lines(tmp_path / "usage.jsonl"))
    assert usage.summary(clock() - 3600)["total"]["tokens"]["total"] == 1
    assert usage.summary(clock() + 1) == {
        "rows": [],
        "total": {"turns": 0, "sessions": 0, "tokens": tokens(), "cost": {}, "unpriced": 0},
    }


OPUS = {"input": 1000, "output": 200, "cached_read": 30000, "cached_write": 400}
"""One answer of Claude Opus 4.8: 0.0275 USD at its price (5, 25, 0.50 and 6.25 per million)."""


def test_a_panes_turns_are_read_from_its_agents_transcript_priced_and_put_on_its_record(
    tmp_path: Path, home: Path
) -> None:
    clock = Clock()
    world = World(tmp_path, clock)
    panes = Panes(world, home)

    async def scenario() -> None:
        async with world.ledger():
            key = panes.start(300)
            await world.settled()
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.stop(300)
            await world.settled()
            spend = world.live.roster.record(key).spend
            assert spend["turns"] == 1
            assert spend["tokens"] == tokens(
                input=2000, output=400, cached_read=60000, cached_write=800, total=63200
            )
            assert spend["cost"] == {"USD": 0.055}
            assert spend["unpriced"] == 0
            assert spend["last"]["model"] == "claude-opus-4-8"
            assert spend["last"]["cost"] == {"amount": 0.055, "currency": "USD"}
            panes.prompt(300)
            panes.answer(300, "claude-opus-5-5", input=7, output=3)  # a model the table does not know
            panes.stop(300)
            await world.settled()
            spend = world.live.roster.record(key).spend
            assert (spend["turns"], spend["cost"], spend["unpriced"]) == (2, {"USD": 0.055}, 1)
            assert spend["last"]["cost"] is None

    asyncio.run(scenario())
    first, second = turns(tmp_path)
    assert (first["lane"], first["folder"], first["model"], first["priced"]) == (
        "interactive",
        "/work/api",
        "claude-opus-4-8",
        "prices",
    )
    assert first["cost"] == {"amount": 0.055, "currency": "USD"}
    assert (second["model"], second["cost"], second["priced"]) == ("claude-opus-5-5", None, None)
    assert second["read"]["offset"] == panes.files[300].stat().st_size
    for path in tmp_path.iterdir():
        if path.is_file():
            assert SECRET not in path.read_text(), path


def test_a_transcript_there_before_the_session_was_seen_counts_from_then_and_a_restart_goes_on(
    tmp_path: Path, home: Path
) -> None:
    clock = Clock()
    old = World(tmp_path, clock)
    panes = Panes(old, home)
    panes.files[300] = home / ".claude" / "projects" / "-work-api" / "sess-300.jsonl"
    panes.answer(300, "claude-opus-4-8", at=clock() - 3600, **OPUS)  # a resumed conversation's history

    async def first_life() -> str:
        async with old.ledger():
            key = panes.start(300)
            await old.settled()
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.stop(300)
            await old.settled()
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", input=10)
            await old.settled()
        return key

    key = asyncio.run(first_life())
    [first] = turns(tmp_path)  # one turn: the history before it is not counted, the one under way not yet
    assert first["cost"] == {"amount": 0.0275, "currency": "USD"}
    new = World(tmp_path, clock, epoch=2)
    panes.world = new

    async def second_life() -> None:
        panes.start(300)  # rebuilt before the ledger is built, as the daemon does
        async with new.ledger():
            await new.settled()
            assert new.live.roster.record(key).spend["turns"] == 1  # put back on the rebuilt record
            panes.prompt(300)  # the rebuilt roster reads the pane working, as its badge says
            panes.answer(300, "claude-opus-4-8", input=10)
            panes.stop(300)  # the turn under way when the last daemon went ends now
            await new.settled()
            assert new.live.roster.record(key).spend["tokens"]["input"] == 1020

    asyncio.run(second_life())
    assert [turn["tokens"] for turn in turns(tmp_path)] == [
        OPUS | {"total": 31600},
        {"input": 20, "total": 20},
    ]


def test_an_answer_written_before_the_hook_named_the_session_counts(tmp_path: Path, home: Path) -> None:
    """The hook that names the session may be heard after the first answer is written (pi
    writes its file only then; a prompt sent as the agent starts beats a slow hook): the file
    is then first seen holding an answer of this session, which counts, where a resumed
    conversation's older answers in the same file do not."""
    clock = Clock()
    world = World(tmp_path, clock)
    panes = Panes(world, home)
    panes.files[300] = home / ".claude" / "projects" / "-work-api" / "sess-300.jsonl"

    async def scenario() -> str:
        async with world.ledger():
            panes.answer(300, "claude-opus-4-8", at=clock() - 3600, input=999)  # resumed from before
            panes.found(300)
            await world.settled()
            clock.advance(1)
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            key = panes.named(300)
            await world.settled()
            panes.stop(300)
            await world.settled()
            return key

    key = asyncio.run(scenario())
    assert [turn["tokens"] for turn in turns(tmp_path)] == [OPUS | {"total": 31600}]
    assert world.live.roster.record(key).spend["turns"] == 1


def test_a_headless_turn_of_a_model_the_table_knows_is_priced_by_the_table(tmp_path: Path) -> None:
    async def scenario() -> None:
        world = World(tmp_path, Clock())
        async with world.ledger():
            key = world.start(100, harness="claude", model="claude-opus-4-8")
            acp = {
                "inputTokens": 1000,
                "outputTokens": 200,
                "cachedReadTokens": 30000,
                "cachedWriteTokens": 400,
            }
            world.turn(key, acp, cost=0.03)  # the adapter's own figure: the table's wins
            world.turn(key, acp, cost=0.06)
            await settle()
            assert world.live.roster.record(key).spend["cost"] == {"USD": 0.055}

    asyncio.run(scenario())
    assert [(doc["cost"], doc["priced"]) for doc in turns(tmp_path)] == [
        ({"amount": 0.0275, "currency": "USD"}, "prices"),
    ] * 2


def test_the_sums_group_by_session_folder_day_and_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    clock = Clock()
    world = World(tmp_path, clock)
    panes = Panes(world, home)

    async def scenario() -> tuple[str, str]:
        async with world.ledger():
            api, web = panes.start(300, cwd="/work/api"), panes.start(301, cwd="/work/web")
            await world.settled()
            for pid in (300, 301):
                panes.prompt(pid)
                panes.answer(pid, "claude-opus-4-8", **OPUS)
                panes.stop(pid)
            await world.settled()
            clock.advance(86400)
            panes.prompt(300)
            panes.answer(300, "claude-opus-4-8", **OPUS)
            panes.stop(300)
            await world.settled()
        return api, web

    api, web = asyncio.run(scenario())
    usage = Usage(Lines(tmp_path / "usage.jsonl"))
    by_session = usage.summary(by="session")
    assert by_session["by"] == "session"
    assert [(r["session_key"], r["turns"], r["cost"]) for r in by_session["rows"]] == [
        (api, 2, {"USD": 0.055}),
        (web, 1, {"USD": 0.0275}),
    ]
    assert [(r["folder"], r["turns"]) for r in usage.summary(by="folder")["rows"]] == [
        ("/work/api", 2),
        ("/work/web", 1),
    ]
    days = usage.summary(by="day")["rows"]
    assert [r["turns"] for r in days] == [2, 1] and days[0]["day"] < days[1]["day"]
    [node] = usage.summary(by="node")["rows"]
    assert (node["turns"], node["sessions"], node["cost"]) == (3, 2, {"USD": 0.0825})
    with pytest.raises(ValueError):
        usage.summary(by="harness")
