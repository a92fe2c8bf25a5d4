"""Usage, read off a real live roster: one line per turn that reported tokens or cost, sums per
harness and model, and nothing counted twice across a restart, a resume or a turn that
reported nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from roost.services.ledger.lines import Lines
from roost.services.ledger.usage import Usage
from tests.ledger.sessions import SECRET, World, settle
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
            codex = world.start(200, harness="codex", model="gpt-5")
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
        for key, harness, model in ((claude, "claude", "opus"), (codex, "codex", "gpt-5")):
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
            },
            {
                "harness": "codex",
                "model": "gpt-5",
                "turns": 3,
                "sessions": 1,
                "tokens": tokens(input=3, output=6, thought=12, total=21),
                "cost": {},
            },
        ],
        "total": {
            "turns": 6,
            "sessions": 2,
            "tokens": tokens(input=20, output=33, thought=12, total=65),
            "cost": {"USD": 0.18},
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
        "total": {"turns": 0, "sessions": 0, "tokens": tokens(), "cost": {}},
    }
