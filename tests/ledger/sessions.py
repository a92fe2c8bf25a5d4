"""Sessions played onto a real live roster the way the daemon's parts claim them, for the
ledger's unit tests: a headless session's claims are the runner's (its identity as ``launcher``,
what a real :class:`~roost.headless.runner.traffic.Traffic` makes of ACP messages as ``acp``), a pane's
are the scan's and the hook's. Time moves only when the test says so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from roost.headless.runner.link import replayed
from roost.headless.runner.rebuild import fold
from roost.headless.runner.traffic import Said, Traffic
from roost.services.ledger.budgets import Budgets, Settings, Store
from roost.services.ledger.follow import Ledger
from roost.services.ledger.journal import Journal
from roost.services.ledger.lines import Lines
from roost.services.ledger.prices import Prices
from roost.services.ledger.usage import Usage
from roost.truth.roster import Claim, ProcessId, Roster
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import ACP, HOOK, LAUNCHER, SCAN
from tests.roster.helpers import NODE, NODE_ID, Clock

SECRET = "SECRET-MARKER-7f3a"
"""Agent text every scenario sends: no ledger file may ever hold it."""


@dataclass
class Headless:
    key: str
    traffic: Traffic
    seq: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    """The notifications a holder would keep, for a rebuild to replay."""


class World:
    """One daemon's life: a live roster, and the ledger following it into ``folder``."""

    def __init__(self, folder: Path, clock: Clock, epoch: int = 1) -> None:
        self.folder = folder
        self.clock = clock
        self.live = Live(Roster(NODE, NODE_ID, clock, status_epoch=epoch), clock)
        self.headless: dict[str, Headless] = {}

    def ledger(
        self, budgets: Settings | None = None, prices: Prices | None = None
    ) -> AbstractAsyncContextManager[None]:
        """The ledger, built as the daemon builds it (once the roster is rebuilt), with the
        budgets ``budgets`` sets when given (their store in ``folder``, each headless turn they
        cancel noted in ``cancelled``); enter it to follow, leave it to stop."""
        self.journal = Journal(self.live.roster, self.clock, Lines(self.folder / "journal.jsonl"))
        self.usage = Usage(Lines(self.folder / "usage.jsonl"), prices)
        self.cancelled: list[str] = []
        self.budgets = None
        if budgets is not None:

            async def cancel(key: str) -> None:
                self.cancelled.append(key)

            store = Store(self.folder / "budgets.json")
            self.budgets = Budgets(self.live, self.usage, budgets, store, self.clock, cancel=cancel)
        self.keeper = Ledger(self.live, self.journal, self.usage, self.clock, budgets=self.budgets)
        return self._following()

    @asynccontextmanager
    async def _following(self) -> AsyncIterator[None]:
        async with self.keeper, AsyncExitStack() as stack:
            if self.budgets is not None:
                await stack.enter_async_context(self.budgets)
            yield

    async def settled(self) -> None:
        """Let the ledger take what was announced, and finish every transcript it reads."""
        await settle()
        await self.keeper.settled()
        await settle()

    def apply(self, claim: Claim) -> None:
        outcome = self.live.apply(claim)
        assert outcome.accepted, outcome.reasons

    # Headless sessions, as the runner claims them.

    def start(self, pid: int, *, harness: str, model: str | None, name: str | None = None) -> str:
        key = f"{NODE_ID}:{pid}:1"
        self.headless[key] = Headless(key, Traffic())
        self.identity(key, ProcessId(pid, 1), harness=harness, name=name)
        fields = {"session_id": f"sess-{pid}", **({"model": model} if model else {})}
        self.say(key, Said("idle", "session_new", fields))
        return key

    def identity(
        self, key: str, process: ProcessId, *, harness: str, name: str | None, suspended: bool = False
    ) -> None:
        fields = {"harness": harness, "cwd": "/work", "lane": "headless", "permission_policy": "attention"}
        fields |= {"liveness": "suspended" if suspended else "live", **({"name": name} if name else {})}
        self.apply(
            Claim(
                LAUNCHER,
                self.clock(),
                session_key=key,
                process=process,
                fields=fields,
                started_at=self.clock(),
            )
        )

    def say(self, key: str, said: Said | None) -> None:
        if said is None:
            return
        h = self.headless[key]
        h.seq += 1
        self.apply(
            Claim(
                ACP,
                self.clock(),
                session_key=key,
                activity=said.activity,
                event=said.event,
                fields=said.fields,
                seq=h.seq,
            )
        )

    def turn(self, key: str, tokens: dict[str, int] | None = None, cost: float | None = None) -> None:
        """A prompt (holding the secret), a reply chunk (holding it too), maybe a usage update,
        and the turn's end with the prompt's answer."""
        self.begin(key)
        self.finish(key, tokens, cost)

    def begin(self, key: str) -> None:
        chunk = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"reply {SECRET}"},
        }
        self.note(key, {"method": "_roost/turn_started", "params": {}})
        self.note(key, {"method": "session/update", "params": {"update": chunk}})

    def finish(self, key: str, tokens: dict[str, int] | None = None, cost: float | None = None) -> None:
        if cost is not None:
            update = {
                "sessionUpdate": "usage_update",
                "used": 100,
                "size": 1000,
                "cost": {"amount": cost, "currency": "USD"},
            }
            self.note(key, {"method": "session/update", "params": {"update": update}})
        ended = {"stopReason": "end_turn", **({"usage": tokens} if tokens else {})}
        self.note(key, {"method": "_roost/turn_ended", "params": ended})

    def note(self, key: str, note: dict[str, Any]) -> None:
        """One message from the holder, kept for a replay and said as the link says it."""
        h = self.headless[key]
        h.history.append(note)
        if note["method"] == "_roost/turn_started":
            self.say(key, h.traffic.turn_started())
        elif note["method"] == "_roost/turn_ended":
            self.say(key, h.traffic.turn_ended(note["params"]))
        else:
            self.say(key, h.traffic.update(note["params"]["update"]))

    def suspend(self, key: str, word: str = "idle_timeout") -> None:
        """As ``Runner.suspend``: liveness first, then the word that says why, in one go."""
        self.apply(
            Claim(LAUNCHER, self.clock(), session_key=key, fields={"liveness": "suspended", "holder": None})
        )
        self.say(key, Said("idle", word, {"session_id": f"sess-{key.split(':')[1]}"}))

    def resume(self, key: str, pid: int, *, harness: str, model: str | None) -> None:
        """As ``Runner._resume``: a new holder (a new occupant), then ``session/load`` answered."""
        h = self.headless[key]
        h.seq = 0
        self.identity(key, ProcessId(pid, 1), harness=harness, name=None)
        self.say(key, Said("idle", "resumed", {"session_id": f"sess-{key.split(':')[1]}", "model": model}))

    def end(self, key: str, reason: str) -> None:
        self.apply(Claim(ACP, self.clock(), session_key=key, ended=reason))

    def rebuild(self, old: World, key: str, *, harness: str, model: str | None = None) -> None:
        """As ``Runner._restore_live`` after a restart: the holder's replay, folded into one
        claim with the model the runner kept."""
        kept = old.headless[key]
        h = self.headless[key] = Headless(key, Traffic(), history=list(kept.history))
        self.identity(key, ProcessId(int(key.split(":")[1]), 1), harness=harness, name=None)
        folded = fold(replayed(h.traffic, h.history))
        if model:
            folded.fields.setdefault("model", model)
        self.say(key, folded)

    # Terminal sessions, as the scan and the hook claim them.

    def pane(self, pid: int, *, harness: str) -> str:
        process = ProcessId(pid, 2)
        fields = {"harness": harness, "lane": "interactive", "tty": "/dev/pts/9"}
        self.apply(Claim(SCAN, self.clock(), process=process, fields=fields, started_at=self.clock()))
        self.apply(Claim(HOOK, self.clock(), process=process, activity="working", event="UserPromptSubmit"))
        return f"{NODE_ID}:{pid}:2"

    def pane_ends(self, pid: int) -> None:
        self.apply(Claim(SCAN, self.clock(), process=ProcessId(pid, 2), ended="exit"))


async def settle() -> None:
    """Let the ledger's follower take what was announced."""
    for _ in range(10):
        await asyncio.sleep(0)


class Panes:
    """Agents in panes that keep a Claude Code transcript under ``home``, played as the scan and
    the hook claim them: a turn is a prompt, the answers its agent writes, and its Stop."""

    def __init__(self, world: World, home: Path) -> None:
        self.world = world
        self.home = home
        self.files: dict[int, Path] = {}
        self.said = 0

    def start(self, pid: int, *, cwd: str = "/work/api", session_id: str | None = None) -> str:
        """The agent found by the scan, then named by its SessionStart hook."""
        self.found(pid, cwd=cwd)
        return self.named(pid, cwd=cwd, session_id=session_id)

    def found(self, pid: int, *, cwd: str = "/work/api") -> None:
        """The scan finds the agent's process, started now."""
        world = self.world
        fields = {"harness": "claude", "lane": "interactive", "tty": "/dev/pts/9", "cwd": cwd}
        world.apply(
            Claim(SCAN, world.clock(), process=ProcessId(pid, 3), fields=fields, started_at=world.clock())
        )

    def named(self, pid: int, *, cwd: str = "/work/api", session_id: str | None = None) -> str:
        """The agent's SessionStart hook names its session."""
        world = self.world
        process = ProcessId(pid, 3)
        sid = session_id or f"sess-{pid}"
        ident = {"session_id": sid, "cwd": cwd, "harness": "claude"}
        world.apply(
            Claim(HOOK, world.clock(), process=process, activity="idle", event="SessionStart", fields=ident)
        )
        self.files[pid] = self.home / ".claude" / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl"
        return f"{NODE_ID}:{pid}:3"

    def prompt(self, pid: int) -> None:
        world = self.world
        world.apply(
            Claim(
                HOOK, world.clock(), process=ProcessId(pid, 3), activity="working", event="UserPromptSubmit"
            )
        )

    def answer(self, pid: int, model: str, at: float | None = None, **usage: int) -> None:
        """One answer of the model, as Claude Code writes it: with its usage, its time (``at``,
        else now), and {SECRET} in it."""
        self.said += 1
        counts = {
            "input_tokens": usage.get("input", 0),
            "output_tokens": usage.get("output", 0),
            "cache_read_input_tokens": usage.get("cached_read", 0),
            "cache_creation_input_tokens": usage.get("cached_write", 0),
        }
        message = {
            "id": f"msg_{self.said}",
            "model": model,
            "content": [{"type": "text", "text": f"reply {SECRET}"}],
            "usage": counts,
        }
        file = self.files[pid]
        file.parent.mkdir(parents=True, exist_ok=True)
        with open(file, "a") as f:
            f.write(json.dumps({"type": "user", "message": {"content": f"prompt {SECRET}"}}) + "\n")
            when = datetime.fromtimestamp(self.world.clock() if at is None else at, UTC)
            timestamp = when.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            f.write(json.dumps({"type": "assistant", "timestamp": timestamp, "message": message}) + "\n")

    def stop(self, pid: int) -> None:
        world = self.world
        world.apply(Claim(HOOK, world.clock(), process=ProcessId(pid, 3), activity="done", event="Stop"))
