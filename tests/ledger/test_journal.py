"""The journal, read off a real live roster: each lifecycle step once, in order, with its
reason; a restart starts nothing twice; answers say who and from where; no agent text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from roost.headless.runner.traffic import Said
from roost.services.ledger import journal
from roost.services.ledger.journal import Journal
from roost.services.ledger.lines import Lines
from roost.truth.roster import records
from tests.contracts.tables import names, table
from tests.ledger.sessions import SECRET, World, settle
from tests.roster.helpers import Clock


def lines(folder: Path) -> list[dict[str, Any]]:
    return list(Lines(folder / "journal.jsonl").read())


def steps(folder: Path) -> list[tuple[str, str | None, str | None]]:
    return [(doc["kind"], doc["session_key"], doc.get("reason")) for doc in lines(folder)]


def no_text(folder: Path) -> None:
    for path in folder.iterdir():
        assert SECRET not in path.read_text(), path


def test_a_headless_sessions_life_is_journalled_in_order_with_its_reasons(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> str:
        world = World(tmp_path, clock)
        async with world.ledger():
            key = world.start(100, harness="claude", model="opus", name="tests: life")
            world.turn(key, {"totalTokens": 8})
            clock.advance(60)
            world.suspend(key, "idle_timeout")
            await settle()
            world.resume(key, 101, harness="claude", model="opus")
            world.suspend(key, "suspended")
            world.resume(key, 102, harness="claude", model="opus")
            world.turn(key)
            world.end(key, "crash")
            await settle()
        return key

    key = asyncio.run(scenario())
    assert steps(tmp_path) == [
        ("start", key, "new"),
        ("suspend", key, "idle_timeout"),
        ("resume", key, "resumed"),
        ("suspend", key, "requested"),
        ("resume", key, "resumed"),
        ("end", key, "crash"),
    ]
    start, suspend, *_ = lines(tmp_path)
    assert list(start) == [
        "at",
        "kind",
        "session_key",
        "name",
        "harness",
        "lane",
        "session_id",
        "reason",
        "started_at",
    ]
    assert (start["name"], start["harness"], start["lane"]) == ("tests: life", "claude", "headless")
    assert start["at"] == "2023-11-14T22:13:20.000Z" and start["started_at"] == start["at"]
    assert suspend["at"] == "2023-11-14T22:14:20.000Z" and suspend["session_id"] == "sess-100"
    no_text(tmp_path)


def test_a_crash_resumed_under_a_new_key_is_its_start_then_a_resume_after_crash(tmp_path: Path) -> None:
    async def scenario() -> tuple[str, str]:
        world = World(tmp_path, Clock())
        async with world.ledger():
            first = world.start(100, harness="claude", model=None)
            world.end(first, "crash")
            again = world.start(200, harness="claude", model=None)
            world.say(again, Said("idle", "resumed_after_crash", {"session_id": "sess-100"}))
        return first, again

    first, again = asyncio.run(scenario())
    assert steps(tmp_path) == [
        ("start", first, "new"),
        ("end", first, "crash"),
        ("start", again, "new"),
        ("resume", again, "after_crash"),
    ]


def test_a_pane_starts_and_ends_in_the_interactive_lane(tmp_path: Path) -> None:
    async def scenario() -> str:
        world = World(tmp_path, Clock())
        async with world.ledger():
            key = world.pane(300, harness="codex")
            world.pane_ends(300)
        return key

    key = asyncio.run(scenario())
    assert steps(tmp_path) == [("start", key, "new"), ("end", key, "exit")]
    assert {doc["lane"] for doc in lines(tmp_path)} == {"interactive"}
    assert {doc["harness"] for doc in lines(tmp_path)} == {"codex"}


def test_a_restart_starts_no_session_twice_and_finds_the_one_that_began_meanwhile(tmp_path: Path) -> None:
    clock = Clock()

    async def first_life() -> World:
        world = World(tmp_path, clock, epoch=1)
        async with world.ledger():
            world.start(100, harness="claude", model="opus")
            world.turn(world.start(101, harness="codex", model="gpt"), {"totalTokens": 3})
        return world

    old = asyncio.run(first_life())
    clock.advance(10)

    async def second_life() -> None:
        world = World(tmp_path, clock, epoch=2)
        for key in old.headless:
            world.rebuild(old, key, harness="claude")
        world.pane(300, harness="claude")  # a pane that began while no daemon ran
        async with world.ledger():
            await settle()

    asyncio.run(second_life())
    assert [step[0] for step in steps(tmp_path)] == ["start", "start", "start"]
    assert [step[2] for step in steps(tmp_path)] == ["new", "new", "found"]


def test_answers_say_who_and_from_where_with_the_session_from_the_roster(tmp_path: Path) -> None:
    async def scenario() -> str:
        world = World(tmp_path, Clock())
        async with world.ledger():
            key = world.start(100, harness="claude", model="opus", name="tests: ask")
            await settle()
            world.journal.answered(key, answer="allow_always", by="uid 1000 pid 4242 (rosterd)", via="cli")
            world.journal.answered("n0de:9:9", answer="reject", by="browser\x1b[2J" + "x" * 200, via="web")
        return key

    key = asyncio.run(scenario())
    answer, unknown = lines(tmp_path)[1:]
    assert answer == {
        "at": answer["at"],
        "kind": "answer",
        "session_key": key,
        "name": "tests: ask",
        "harness": "claude",
        "lane": "headless",
        "session_id": "sess-100",
        "answer": "allow_always",
        "by": "uid 1000 pid 4242 (rosterd)",
        "via": "cli",
        "through": None,
    }
    assert (unknown["session_key"], unknown["name"], unknown["lane"]) == ("n0de:9:9", None, None)
    assert unknown["by"].startswith("browser\\x1b[2J") and len(unknown["by"]) == 120


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"answer": "maybe", "by": "cli", "via": "cli"}, "answer must be one of allow, allow_always, reject"),
        (
            {"answer": "allow", "by": "cli", "via": "telepathy"},
            "via must be one of api, cli, mcp, web, terminal",
        ),
        ({"answer": "allow", "by": "  ", "via": "api"}, "by must name who answered"),
    ],
)
def test_an_answer_outside_the_rules_is_refused_and_writes_nothing(
    tmp_path: Path, args: dict[str, str], message: str
) -> None:
    world = World(tmp_path, Clock())
    journal = Journal(world.live.roster, world.clock, Lines(tmp_path / "journal.jsonl"))
    with pytest.raises(ValueError, match=message):
        journal.answered("n0de:1:1", **args)
    with pytest.raises(ValueError, match="session_key must be text"):
        journal.answered("x" * 257, answer="allow", by="cli", via="cli")
    assert lines(tmp_path) == []


def test_since_keeps_the_newer_lines_and_hand_edits_are_skipped(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> World:
        world = World(tmp_path, clock)
        async with world.ledger():
            world.start(100, harness="claude", model=None)
            clock.advance(3600)
            world.start(101, harness="claude", model=None)
        return world

    world = asyncio.run(scenario())
    with open(tmp_path / "journal.jsonl", "a") as file:
        file.write('{"kind": "start", "session_key": 5, "at": "2023-11-14T22:13:20Z"}\n{"kind": "poem"}\n')
    assert len(world.journal.entries()) == 2
    assert [doc["session_key"] for doc in world.journal.entries(clock() - 60)] == ["n0de:101:1"]


def test_the_kinds_and_reasons_are_the_ones_docs_contracts_tables() -> None:
    rows = table("The journal's kinds")
    reasons: dict[str, set[str | None]] = {}
    for row in rows:
        said = [None if reason == "(null)" else reason for reason in names(row["reason"])]
        reasons.setdefault(row["kind"], set()).update(said or [None])
    assert reasons == {
        journal.START: {journal.NEW, journal.FOUND},
        journal.END: set(records.ENDED_REASONS),
        journal.SUSPEND: {*journal.SUSPENDED_BY.values(), None},
        journal.RESUME: {journal.RESUMED, journal.AFTER_CRASH},
        journal.ANSWER: {None},
        journal.ACT: {None},
    }
    assert list(reasons) == list(journal.KINDS)
    answer = next(row["when"] for row in rows if row["kind"] == journal.ANSWER)
    assert all(word in answer for word in (*journal.ANSWERS, *journal.VIA))


def test_an_answer_line_carries_the_documented_fields(tmp_path: Path) -> None:
    documents = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}
    world = World(tmp_path, Clock())
    world.journal = Journal(world.live.roster, world.clock, Lines(tmp_path / "journal.jsonl"))
    world.journal.answered("n0de:1:1", answer="reject", by="mcp", via="mcp")
    [line] = lines(tmp_path)
    assert list(line) == (
        documents["journal entry (each of entries), every kind"]
        + documents["journal entry, kind answer, after those"]
    )


def test_an_act_line_says_who_through_which_node_and_the_answer(tmp_path: Path) -> None:
    documents = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}
    world = World(tmp_path, Clock())
    world.journal = Journal(world.live.roster, world.clock, Lines(tmp_path / "journal.jsonl"))
    world.journal.acted(
        "n0de:1:1",
        action="prompt",
        by="local user",
        via="cli",
        through="laptop",
        through_id="abc",
        status=200,
    )
    world.journal.answered("n0de:1:1", answer="allow", by="local user", via="cli", through="laptop")
    act, answer = lines(tmp_path)
    assert list(act) == (
        documents["journal entry (each of entries), every kind"]
        + documents["journal entry, kind act, after those"]
    )
    assert (
        act["kind"],
        act["action"],
        act["by"],
        act["via"],
        act["through"],
        act["through_id"],
        act["status"],
    ) == (
        "act",
        "prompt",
        "local user",
        "cli",
        "laptop",
        "abc",
        200,
    )
    assert answer["through"] == "laptop"
    with pytest.raises(ValueError, match="via must be one of"):
        world.journal.acted(
            "n0de:1:1", action="x", by="a", via="carrier pigeon", through="t", through_id="t", status=1
        )
