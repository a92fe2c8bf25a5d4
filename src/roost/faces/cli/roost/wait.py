"""``roost wait-done``: block until a target's agents stop being busy, and say how they stopped.

Stopping being busy is not success. The exit status tells the three endings apart: done
(0), an agent in error or a wait that ran out (1), an agent that died while busy or a target
that was never there (2). It polls the server with one tmux call every 100 ms; nothing else
runs between polls.
"""

from __future__ import annotations

import time

from roost.base.errors import AgentFailed, NotRecorded, TargetGone, TimedOut, UsageError
from roost.pane.state import jobs, panestate
from roost.pane.state import words as w
from roost.pane.state.events import Log
from roost.pane.tmux.panes import Pane, list_panes
from roost.pane.tmux.server import Server
from roost.pane.tmux.targets import resolve

USAGE = "usage: roost wait-done [--turn N] TARGET [TIMEOUT_SEC]"
POLL = 0.1


def _whole(value: str) -> int | None:
    return int(value) if value.isascii() and value.isdigit() else None


def parse(args: list[str]) -> tuple[str, int | None, int]:
    """``(target, turn, timeout)``; every refusal happens here, before any waiting."""
    rest = list(args)
    turn_value: str | None = None
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag != "--turn" or turn_value is not None:
            raise UsageError(f"{USAGE} (unexpected '{flag}')")
        if not rest:
            raise UsageError(f"{USAGE} (--turn needs a value)")
        turn_value = rest.pop(0)
    if not rest or len(rest) > 2:
        raise UsageError(USAGE)
    timeout = 0
    if len(rest) == 2:
        seconds = _whole(rest[1])
        if seconds is None:
            raise UsageError(
                f"{USAGE} (TIMEOUT_SEC must be a whole number of seconds, not '{rest[1]}'; "
                "omit it or pass 0 to wait with no limit)"
            )
        timeout = seconds
    turn = None
    if turn_value == "":
        from roost.faces.cli.roost.turns import empty

        raise UsageError(empty("leave out --turn to wait until it is no longer busy"))
    if turn_value is not None:
        turn = _whole(turn_value)
        if not turn:
            raise UsageError(
                f"--turn needs a positive whole number, not '{turn_value}' — pass the turn roost send printed"
            )
    return rest[0], turn, timeout


def _check_turn_target(target: str) -> None:
    if not target.startswith("%"):
        raise UsageError(
            f"--turn needs a %N pane, not '{target}': turns are numbered per pane, so a window has "
            "no single numbering to wait on — pass the pane roost send printed"
        )
    if not panestate.recording():
        raise NotRecorded(
            f"--turn: replies are not recorded (ROOST_RECORD_DIR is empty), so '{target}' has no "
            "usable reply record and turn numbers are never written"
        )


def _last_state(server_key: str, pane_id: str) -> dict | None:
    """The pane's last state line in the events log: how a pane that closed had ended."""
    log = Log.from_env()
    try:
        lines = log.read() if log is not None else []
    except OSError:
        return None
    mine = [
        line
        for line in lines
        if line.get("server") == server_key
        and line.get("pane") == pane_id
        and line.get("event") in ("state", "blocked_on")
    ]
    return mine[-1] if mine else None


def _settle(p: Pane) -> Pane:
    """A pane that closed since the last poll, brought up to date from the events log.

    A pane can finish and close between two polls; its last state line says it finished,
    where the last poll alone would say it closed while busy.
    """
    line = _last_state(p.server_key, p.id)
    if line is None:
        return p
    p.options[w.STATE] = line.get("to") or ""
    p.options[w.REASON] = line.get("reason") or ""
    if line.get("to") in (w.DONE, w.ERROR) and line.get("turn"):
        p.options[w.TURN_DONE] = str(line["turn"])
    return p


class Watch:
    """The panes a target covers and what each looked like at the last poll. (A plain class:
    importing ``dataclasses`` would cost every wait ~10 ms at start.)"""

    __slots__ = ("closed", "pane_ids", "seen", "target", "turn", "window_id")

    def __init__(self, target: str, turn: int | None, pane_ids: set[str], window_id: str | None) -> None:
        self.target = target
        self.turn = turn
        self.pane_ids = pane_ids
        self.window_id = window_id
        self.seen: dict[str, Pane] = {}
        self.closed: list[Pane] = []  # covered panes that closed, as they ended

    @classmethod
    def of(cls, target: str, resolved_panes: list[Pane], single: bool, turn: int | None) -> Watch:
        window = None if single else resolved_panes[0].window_id
        watch = cls(target, turn, {p.id for p in resolved_panes}, window)
        watch.seen = {p.id: p for p in resolved_panes}
        return watch

    def name(self, pane_id: str) -> str:
        return f"'{pane_id}'" if pane_id == self.target else f"{pane_id} of '{self.target}'"

    def covers(self, p: Pane) -> bool:
        return p.id in self.pane_ids or (self.window_id is not None and p.window_id == self.window_id)

    def step(self, server: Server, panes: list[Pane]) -> bool:
        """One poll: True when the wait is over and successful; raises for every other end."""
        present = {p.id for p in panes}
        members = [p for p in panes if self.covers(p)]
        for p in members:
            panestate.clear_if_declined(server, p)
        gone = [_settle(p) for pid, p in self.seen.items() if pid not in present]
        self.seen = {p.id: p for p in members}
        self.closed += gone
        if self.turn is not None:
            return self._turn_step(members, gone)
        for p in gone:
            if p.opt(w.STATE) in w.BUSY:
                raise TargetGone(f"{self.name(p.id)} died ({w.human(p.opt(w.STATE))}): its pane closed")
        busy = [p for p in members if p.opt(w.STATE) in w.BUSY]
        for p in busy:
            self._check_alive(p)
        if busy:
            return False
        errors = [p for p in [*members, *self.closed] if p.opt(w.STATE) == w.ERROR]
        if errors:
            raise self._error(errors)
        return True

    def _turn_step(self, members: list[Pane], gone: list[Pane]) -> bool:
        """``--turn N``: over once the pane has recorded turn N; an error on turn N itself fails."""
        turn = self.turn or 0
        for p in [*members, *gone]:
            done = w.to_int(p.opt(w.TURN_DONE)) or 0
            if done >= turn:
                if done == turn and p.opt(w.STATE) == w.ERROR:
                    raise self._error([p])
                return True
        for p in members:
            if p.opt(w.STATE) in w.BUSY:
                self._check_alive(p)
        ended = gone or [p for p in members if p.dead]
        if ended:
            raise TargetGone(f"{self.name(ended[0].id)} died: its pane ended before turn {turn} was recorded")
        return False

    def _check_alive(self, p: Pane) -> None:
        state = w.human(p.opt(w.STATE))
        if p.dead:
            raise TargetGone(f"{self.name(p.id)} died ({state}): its process exited")
        job = w.to_int(p.opt(w.JOB))
        if job and not jobs.job_alive(job):
            raise TargetGone(
                f"{self.name(p.id)} died ({state}): its process exited and the shell has the pane"
            )

    def _error(self, panes: list[Pane]) -> AgentFailed:
        lines = []
        for p in panes:
            lines.append(f"{self.name(p.id)} is in error state")
            reason = p.opt(w.REASON)
            if reason:
                lines.append(f"reason: {reason}")
        return AgentFailed("\nroost wait-done: ".join(lines))

    def still_busy(self) -> str:
        busy = [p for p in self.seen.values() if p.opt(w.STATE) in w.BUSY]
        return ", ".join(f"{self.name(p.id)} is still {p.opt(w.STATE)}" for p in busy)


def _poll(server: Server) -> list[Pane] | None:
    """Every pane with its badge, in one tmux call; None when the answer cannot be trusted."""
    panes = list_panes(server, w.PANE_OPTIONS)
    if not panes and server.running():
        return None
    return panes


def run(verb: str, args: list[str]) -> int:
    target, turn, timeout = parse(args)
    if turn is not None:
        _check_turn_target(target)
    server = Server.from_env()
    try:
        resolved = resolve(server, target, w.PANE_OPTIONS)
    except TargetGone as error:
        raise TargetGone(f"'{target}' is gone: {error.message}") from error
    watch = Watch.of(target, resolved.panes, resolved.single, turn)
    deadline = time.monotonic() + timeout if timeout else None
    panes: list[Pane] | None = resolved.panes
    while True:
        if panes is not None and watch.step(server, panes):
            return 0
        if deadline is not None and time.monotonic() >= deadline:
            raise TimedOut(_timed_out(watch, timeout))
        remaining = deadline - time.monotonic() if deadline is not None else POLL
        time.sleep(max(0.0, min(POLL, remaining)))
        panes = _poll(server)


def _timed_out(watch: Watch, timeout: int) -> str:
    if watch.turn is not None:
        done = max((w.to_int(p.opt(w.TURN_DONE)) or 0 for p in watch.seen.values()), default=0)
        return (
            f"timed out waiting for turn {watch.turn} on '{watch.target}' after {timeout} s "
            f"(the last turn recorded is {done})"
        )
    return f"timed out after {timeout} s: {watch.still_busy() or 'still busy'}"
