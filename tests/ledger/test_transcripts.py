"""Reading what an interactive session's turns used from its agent's own transcript, as its
manifest's ``[usage]`` says: the recorded files of the real CLIs read to the token, and the
reading itself incremental, never counting a byte twice."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.agents import manifest
from roost.agents.model import Usage as Spec
from roost.services.ledger import transcripts
from roost.services.ledger.transcripts import Transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "usage"
CLAUDE = FIXTURES / "claude-2.1.332.jsonl"
CODEX = FIXTURES / "codex-0.171.0.jsonl"
"""Recorded in a loopback-only namespace against tests/fakes: three answers, the n-th (from 0)
charged 1000+n input, 200+n output, 30000+n cache reads and (Claude only) 400+n cache writes."""


def spec(agent: str) -> Spec:
    found = manifest.load(agent)
    assert found is not None and found.usage is not None
    return found.usage


def charged(n: int, *, writes: bool = True) -> dict[str, int]:
    tokens = {
        "input": 1000 + n,
        "output": 200 + n,
        "thought": 0,
        "cached_read": 30000 + n,
        "cached_write": 400 + n if writes else 0,
    }
    return {**tokens, "total": sum(v for k, v in tokens.items() if k != "thought")}


@pytest.mark.parametrize(
    ("agent", "path", "model", "writes"),
    [
        ("claude", CLAUDE, "claude-opus-5-5", True),
        ("codex", CODEX, "gpt-fake", False),
    ],
)
def test_the_real_clis_transcripts_read_as_the_api_charged(
    agent: str, path: Path, model: str, writes: bool
) -> None:
    answers = Transcript(spec(agent), str(path), 0).turn()
    assert [answer.tokens for answer in answers] == [charged(n, writes=writes) for n in range(3)]
    assert {answer.model for answer in answers} == {model}
    assert len({answer.id for answer in answers}) == 3


def test_a_turn_reads_only_what_was_written_since_the_last_one(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines(keepends=True)
    second = next(n for n, line in enumerate(lines) if '"msg_fake0003"' in line)
    file = tmp_path / "t.jsonl"
    file.write_text("".join(lines[:second]))
    seen = Transcript(spec("claude"), str(file), 0)
    assert [a.id for a in seen.turn()] == ["msg_fake0001"]
    assert seen.turn() == []  # nothing new
    with open(file, "a") as f:
        f.write("".join(lines[second:]))
    assert [a.id for a in seen.peek()] == ["msg_fake0003", "msg_fake0004"]
    assert [a.id for a in seen.peek()] == ["msg_fake0003", "msg_fake0004"]  # a look counts nothing
    assert [a.id for a in seen.turn()] == ["msg_fake0003", "msg_fake0004"]
    assert seen.turn() == []


def test_a_line_being_written_waits_and_an_answer_split_across_turns_counts_once(tmp_path: Path) -> None:
    answer = {"type": "assistant", "message": {"id": "m1", "model": "x", "usage": {"input_tokens": 5}}}
    file = tmp_path / "t.jsonl"
    text = json.dumps(answer) + "\n"
    file.write_text(text[:20])
    seen = Transcript(spec("claude"), str(file), 0)
    assert seen.turn() == [] and seen.offset == 0  # half a line: not read, not skipped
    file.write_text(text)
    [first] = seen.turn()
    assert first.tokens["input"] == 5
    more = {
        "type": "assistant",
        "message": {"id": "m1", "model": "x", "usage": {"input_tokens": 5, "output_tokens": 9}},
    }
    with open(file, "a") as f:  # Claude writes an answer's next content block as another line of the same id
        f.write(json.dumps(more) + "\n")
    assert seen.turn() == []


def test_lines_of_one_answer_in_one_turn_count_the_last_and_other_lines_are_not_answers(
    tmp_path: Path,
) -> None:
    def line(kind: str, ident: str, output: int) -> str:
        usage = {"input_tokens": 1, "output_tokens": output}
        return json.dumps({"type": kind, "message": {"id": ident, "model": "m", "usage": usage}}) + "\n"

    file = tmp_path / "t.jsonl"
    file.write_text(
        line("assistant", "a", 1) + line("user", "u", 50) + line("assistant", "a", 7) + "not json\n"
    )
    [only] = Transcript(spec("claude"), str(file), 0).turn()
    assert (only.id, only.tokens["output"], only.tokens["total"]) == ("a", 7, 8)


def test_a_file_first_seen_mid_session_counts_from_its_end_and_a_rewritten_one_from_its_new_end(
    tmp_path: Path,
) -> None:
    file = tmp_path / "t.jsonl"
    shutil.copy(CLAUDE, file)
    seen = Transcript.opened(spec("claude"), str(file))
    assert seen.offset == file.stat().st_size
    assert seen.turn() == []
    file.write_text(CLAUDE.read_text().splitlines(keepends=True)[0])  # shorter than the offset
    assert seen.turn() == []
    assert seen.offset == file.stat().st_size


@pytest.mark.parametrize("agent", ["claude", "codex", "pi", "copilot"])
def test_a_file_first_seen_late_counts_the_answers_since_the_agent_started_not_a_resumed_past(
    agent: str, tmp_path: Path
) -> None:
    """An agent that writes its file once its first answer is in (pi), or whose hook names the
    session after that answer, is first seen with the answer written: it counts (it came after
    the process started), where a resumed conversation's earlier answers do not."""
    usage = spec(agent)
    tokens = {name: path for name, path in usage.tokens.items() if name in ("input", "output")}

    def answer(ident: str, at: str, count: int) -> str:
        line: dict[str, Any] = {
            "timestamp": at,
            **{key: value for key, value in usage.when.items() if "." not in key},
        }
        for dotted, value in usage.when.items():
            if "." in dotted:
                head, tail = dotted.split(".", 1)
                line.setdefault(head, {})[tail] = value
        for path in [*tokens.values(), usage.id]:
            if path is None:
                continue
            where = line
            for step in path[:-1]:
                where = where.setdefault(step, {})
            where[path[-1]] = ident if path is usage.id else count
        return json.dumps(line) + "\n"

    started = 1_796_620_000.0  # 2026-12-07T05:06:40Z
    file = tmp_path / "t.jsonl"
    file.write_text(
        answer("past", "2026-12-06T10:00:00.000Z", 111) + answer("now", "2026-12-07T05:06:41.500Z", 5)
    )
    seen = Transcript.opened(usage, str(file), since=started)
    assert [(a.id, a.tokens["input"]) for a in seen.turn()] == [("now", 5)]
    with open(file, "a") as f:  # written after it was first seen: this session's, whatever its time
        f.write(answer("later", "not a time", 9))
    assert [(a.id, a.tokens["input"]) for a in seen.turn()] == [("later", 9)]
    assert [a.id for a in Transcript.opened(usage, str(file)).turn()] == []  # no start known: from its end


def test_codex_counts_cached_input_out_of_its_input_and_takes_the_model_of_the_turn(tmp_path: Path) -> None:
    def record(response: str, cached: int) -> str:
        usage = {"input_tokens": 100 + cached, "cached_input_tokens": cached, "output_tokens": 7}
        return (
            json.dumps({"type": "token_usage_record", "payload": {"response_id": response, "usage": usage}})
            + "\n"
        )

    def context(model: str) -> str:
        return json.dumps({"type": "turn_context", "payload": {"model": model}}) + "\n"

    file = tmp_path / "rollout.jsonl"
    file.write_text(context("gpt-a") + record("r1", 40) + context("gpt-b") + record("r2", 0))
    answers = Transcript(spec("codex"), str(file), 0).turn()
    assert [(a.model, a.tokens["input"], a.tokens["cached_read"]) for a in answers] == [
        ("gpt-a", 100, 40),
        ("gpt-b", 100, 0),
    ]


def test_a_codex_rollout_first_seen_after_its_turn_named_the_model_prices_by_that_model(
    tmp_path: Path,
) -> None:
    """Codex says who it is as its first turn starts, after it wrote the turn's model: the
    file is counted from its end, and the model named before that end is the turn's."""
    lines = CODEX.read_text().splitlines(keepends=True)
    first = next(n for n, line in enumerate(lines) if '"token_usage_record"' in line)
    file = tmp_path / "rollout.jsonl"
    file.write_text("".join(lines[:first]))
    seen = Transcript.opened(spec("codex"), str(file))
    assert seen.offset == file.stat().st_size
    with open(file, "a") as f:
        f.write("".join(lines[first:]))
    answers = seen.turn()
    assert [(a.model, a.tokens) for a in answers] == [
        ("gpt-fake", charged(n, writes=False)) for n in range(3)
    ]
    again = Transcript.opened(spec("codex"), str(file), seen.offset)  # where a restarted daemon resumes
    assert (again.offset, again.model, again.turn()) == (seen.offset, "gpt-fake", [])


def test_the_file_is_found_under_the_first_root_whose_variables_are_set(tmp_path: Path) -> None:
    home, config = tmp_path / "home", tmp_path / "config"
    wanted = config / "projects" / "-work-api" / "abc-123.jsonl"
    wanted.parent.mkdir(parents=True)
    wanted.write_text("")
    elsewhere = home / ".claude" / "projects" / "-work-api" / "abc-123.jsonl"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_text("")
    claude = spec("claude")
    assert transcripts.located(
        claude, "abc-123", {"HOME": str(home), "CLAUDE_CONFIG_DIR": str(config)}
    ) == str(wanted)
    assert transcripts.located(claude, "abc-123", {"HOME": str(home)}) == str(elsewhere)
    assert transcripts.located(claude, "nope", {"HOME": str(home)}) is None
    for hostile in ("*", "../x", "a/b", "[a]", ""):
        assert transcripts.located(claude, hostile, {"HOME": str(home)}) is None


def gemini_answer(ident: str, tokens: dict[str, int] | None, model: str = "gemini-3.1-pro-preview") -> str:
    """A line of Gemini CLI 0.61.0's chat file for one answer, as it writes one."""
    line = {"id": ident, "timestamp": "2026-12-07T06:14:09.310Z", "type": "gemini", "content": "hi"}
    line |= {"thoughts": [], "tokens": tokens, "model": model}
    return json.dumps(line) + "\n"


def test_gemini_counts_its_cached_input_out_of_its_input_and_its_thinking_into_its_output(
    tmp_path: Path,
) -> None:
    """Gemini's prompt count holds the cached part; its output count leaves out the thinking
    tokens, which are billed as output: the ledger's output holds them (``output_adds``), as
    Claude's and Codex's own output counts do. An answer written again under its id (a tool
    call added to it) is one answer, its last line counting; a ``$set`` line is none."""
    first = {"input": 1300, "output": 20, "cached": 300, "thoughts": 50, "tool": 0, "total": 1370}
    second = {"input": 9000, "output": 7, "cached": 0, "thoughts": 0, "tool": 0, "total": 9007}
    file = tmp_path / "session-2026-12-07T06-14-319a18f6.jsonl"
    file.write_text(
        json.dumps({"sessionId": "319a18f6-ed15", "kind": "main"})
        + "\n"
        + json.dumps({"id": "u1", "type": "user", "content": [{"text": "first turn"}]})
        + "\n"
        + gemini_answer("g1", None)
        + gemini_answer("g1", first)
        + json.dumps({"$set": {"messages": [{"id": "g1", "type": "gemini", "tokens": first}]}})
        + "\n"
        + gemini_answer("g2", second)
    )
    answers = Transcript(spec("gemini"), str(file), 0).turn()
    assert [(a.id, a.model, a.tokens) for a in answers] == [
        (
            "g1",
            "gemini-3.1-pro-preview",
            {
                "input": 1000,
                "output": 70,
                "thought": 50,
                "cached_read": 300,
                "cached_write": 0,
                "total": 1370,
            },
        ),
        (
            "g2",
            "gemini-3.1-pro-preview",
            {"input": 9000, "output": 7, "thought": 0, "cached_read": 0, "cached_write": 0, "total": 9007},
        ),
    ]


def test_a_files_pattern_may_name_the_first_characters_of_the_session_id(tmp_path: Path) -> None:
    """Gemini CLI names a chat file with the first 8 characters of its session's id
    (``{session_id:8}``), under a folder per project, in $GEMINI_CLI_HOME/.gemini or ~/.gemini."""
    session = "319a18f6-ed15-4b9b-ad08-35db614a5371"
    home, moved = tmp_path / "home", tmp_path / "moved"
    wanted = moved / ".gemini" / "tmp" / "api" / "chats" / "session-2026-12-07T06-14-319a18f6.jsonl"
    elsewhere = home / ".gemini" / "tmp" / "api" / "chats" / "session-2026-12-07T06-14-319a18f6.jsonl"
    other = home / ".gemini" / "tmp" / "api" / "chats" / "session-2026-12-07T06-20-11112222.jsonl"
    for path in (wanted, elsewhere, other):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    gemini = spec("gemini")
    assert transcripts.located(gemini, session, {"HOME": str(home), "GEMINI_CLI_HOME": str(moved)}) == str(
        wanted
    )
    assert transcripts.located(gemini, session, {"HOME": str(home)}) == str(elsewhere)
    assert transcripts.located(gemini, "aaaabbbb-0000", {"HOME": str(home)}) is None
    assert (
        transcripts.pattern_for("a/{session_id}/b-{session_id:3}.jsonl", "abcdef") == "a/abcdef/b-abc.jsonl"
    )
    assert transcripts.pattern_for("{session_id:8}", "abc") == "abc"


SESSION = "ses_db06b647dffec2X219w2F1Hd5r"
STARTED_MS = 1_796_631_469_000
"""When the OpenCode rows below were made (ms since the epoch, as OpenCode writes its times)."""


class OpenCodeStore:
    """OpenCode 1.18.33's database as it keeps messages (the ``message`` table's columns as it
    creates them), written in WAL mode by a connection kept open, as a running OpenCode holds
    it while rosterd reads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute(
            "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,"
            " time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)"
        )
        self.made = 0

    def add(
        self,
        ident: str,
        role: str,
        tokens: dict[str, int] | None = None,
        *,
        session: str = SESSION,
        done: bool = True,
        at_ms: int | None = None,
    ) -> None:
        """A message row; an assistant's with ``tokens`` (OpenCode's names: input, output,
        reasoning, read, write) and completed unless ``done`` is false."""
        self.made += 1
        created = at_ms if at_ms is not None else STARTED_MS + 1000 * self.made
        data: dict[str, Any] = {"role": role, "time": {"created": created}}
        if role == "assistant":
            data |= {"modelID": "claude-sonnet-4-5", "providerID": "anthropic", "finish": "stop"}
            counts = tokens or {}
            data["tokens"] = {
                "input": counts.get("input", 0),
                "output": counts.get("output", 0),
                "reasoning": counts.get("reasoning", 0),
                "cache": {"read": counts.get("read", 0), "write": counts.get("write", 0)},
            }
            if done:
                data["time"]["completed"] = created + 500
        self.db.execute(
            "INSERT OR REPLACE INTO message VALUES (?, ?, ?, ?, ?)",
            (ident, session, created, created, json.dumps(data)),
        )

    def complete(self, ident: str, tokens: dict[str, int]) -> None:
        """An answer under way finishes: its counts and its end written into its row."""
        [(session, created)] = self.db.execute(
            "SELECT session_id, time_created FROM message WHERE id = ?", (ident,)
        ).fetchall()
        self.add(ident, "assistant", tokens, session=session, at_ms=created)

    def close(self) -> None:
        self.db.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[OpenCodeStore]:
    made = OpenCodeStore(tmp_path / "opencode.db")
    yield made
    made.close()


def opencode_tokens(
    input: int, output: int, reasoning: int = 0, read: int = 0, write: int = 0
) -> dict[str, int]:
    """What the ledger must say of an OpenCode answer with these counts: its output count left
    the reasoning out, which is billed as output."""
    return {
        "input": input,
        "output": output + reasoning,
        "thought": reasoning,
        "cached_read": read,
        "cached_write": write,
        "total": input + output + reasoning + read + write,
    }


def test_opencode_answers_are_read_from_its_database_by_session_each_completed_step_once(
    store: OpenCodeStore,
) -> None:
    """Each step of a turn (a tool call's too) is a message of its own; a step under way has
    no counts yet and is counted once it is completed, at the next turn's end, never twice."""
    opencode = spec("opencode")
    store.add("m1", "user")
    store.add("m2", "assistant", {"input": 1203, "output": 347, "reasoning": 40, "read": 5011, "write": 709})
    store.add("x1", "assistant", {"input": 999, "output": 9}, session="ses_another")
    store.add("m3", "assistant", {"input": 20, "output": 5})
    store.add("m4", "assistant", done=False)
    seen = Transcript(opencode, str(store.path), 0, session_id=SESSION)
    assert seen.peek() == seen.turn()
    assert [
        (a.id, a.model, a.tokens) for a in Transcript(opencode, str(store.path), 0, session_id=SESSION).turn()
    ] == [
        ("m2", "claude-sonnet-4-5", opencode_tokens(1203, 347, 40, 5011, 709)),
        ("m3", "claude-sonnet-4-5", opencode_tokens(20, 5)),
    ]
    assert seen.offset == 2 and seen.turn() == []
    store.complete("m4", {"input": 7, "output": 70})
    store.add("m5", "user")
    store.add("m6", "assistant", {"input": 8, "output": 80})
    assert [(a.id, a.tokens["output"]) for a in seen.turn()] == [("m4", 70), ("m6", 80)]
    assert seen.turn() == []


def test_opencode_database_first_seen_late_counts_since_the_agent_started_and_a_revert_counts_nothing_again(
    store: OpenCodeStore,
) -> None:
    opencode = spec("opencode")
    store.add("old", "assistant", {"input": 111, "output": 1}, at_ms=STARTED_MS - 3_600_000)
    store.add("new", "assistant", {"input": 5, "output": 2})
    late = Transcript.opened(opencode, str(store.path), since=STARTED_MS / 1000, session_id=SESSION)
    assert [a.id for a in late.turn()] == ["new"]
    under_way = Transcript.opened(opencode, str(store.path), session_id=SESSION)
    assert (under_way.offset, under_way.turn()) == (2, [])  # no start known: from its end
    store.db.execute("DELETE FROM message WHERE id = 'new'")  # the turn reverted
    assert (late.turn(), late.offset) == ([], 1)
    store.add("again", "assistant", {"input": 6, "output": 3})
    assert [a.id for a in late.turn()] == ["again"]
    recalled = Transcript.opened(opencode, str(store.path), late.offset, session_id=SESSION)
    assert recalled.turn() == []  # after a restart, from where the ledger counted to


def test_opencode_database_is_never_written_and_one_that_cannot_be_read_counts_nothing(
    store: OpenCodeStore, tmp_path: Path
) -> None:
    opencode = spec("opencode")
    store.add("m1", "assistant", {"input": 1, "output": 1})
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    assert len(Transcript(opencode, str(store.path), 0, session_id=SESSION).turn()) == 1
    assert {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.iterdir()} == before
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    for path in (garbage, tmp_path / "missing.db"):
        unreadable = Transcript.opened(opencode, str(path), since=0.0, session_id=SESSION)
        assert (unreadable.turn(), unreadable.offset) == ([], 0)
    assert not (tmp_path / "missing.db").exists()


def test_opencode_database_is_found_under_its_data_home(tmp_path: Path) -> None:
    opencode = spec("opencode")
    data = tmp_path / "data" / "opencode"
    data.mkdir(parents=True)
    (data / "opencode.db").write_bytes(b"")
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    assert transcripts.located(opencode, SESSION, env) == str(data / "opencode.db")
    assert transcripts.located(opencode, SESSION, {"HOME": str(tmp_path / "home")}) is None


def copilot_event(kind: str, ident: str, usage: dict[str, Any] | None = None) -> str:
    """A line of Copilot CLI 1.0.102's events file, as it writes one (fields trimmed)."""
    data: dict[str, Any] = {"turnId": "0"}
    if usage is not None:
        data = {"usage": {"model": "claude-sonnet-4.5", "cost": 0.0, "isByok": True, **usage}}
    return (
        json.dumps({"type": kind, "data": data, "id": ident, "timestamp": "2026-12-07T08:22:21.841Z"}) + "\n"
    )


def test_copilot_counts_each_usage_record_its_input_without_the_cache(tmp_path: Path) -> None:
    """Copilot's input count holds the cache's reads and writes (the API's three counts
    added up): the ledger takes them off, so its input is what the API charged as input."""
    file = tmp_path / "events.jsonl"
    file.write_text(
        copilot_event("assistant.turn_start", "e1")
        + copilot_event(
            "session.usage_record",
            "e2",
            {"inputTokens": 6923, "outputTokens": 347, "cacheReadTokens": 5011, "cacheWriteTokens": 709},
        )
        + copilot_event("assistant.message", "e3")
        + copilot_event("session.usage_record", "e4", {"inputTokens": 40, "outputTokens": 9})
        + copilot_event("assistant.turn_end", "e5")
    )
    answers = Transcript(spec("copilot"), str(file), 0).turn()
    assert [(a.id, a.model, a.tokens) for a in answers] == [
        (
            "e2",
            "claude-sonnet-4.5",
            {
                "input": 1203,
                "output": 347,
                "thought": 0,
                "cached_read": 5011,
                "cached_write": 709,
                "total": 7270,
            },
        ),
        (
            "e4",
            "claude-sonnet-4.5",
            {"input": 40, "output": 9, "thought": 0, "cached_read": 0, "cached_write": 0, "total": 49},
        ),
    ]
    home = tmp_path / "home"
    events = home / ".copilot" / "session-state" / SESSION / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_text("")
    assert transcripts.located(spec("copilot"), SESSION, {"HOME": str(home)}) == str(events)
