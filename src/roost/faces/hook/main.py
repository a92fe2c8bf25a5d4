"""The ``rosterd-hook`` entry point.

Usage: ``rosterd-hook [HARNESS]`` with the event as JSON on stdin (``rosterd-hook --gate
[HARNESS]`` holds a permission request open instead: :mod:`roost.faces.hook.gate`); HARNESS defaults to the
agent whose manifest says ``[hook] default = true`` (Claude Code, whose settings name the bare
command). It stamps the pane it runs in, then posts
the event to the daemon as a claim (:mod:`roost.faces.hook.post`). Everything it does is bounded:
the contract is exit 0 within 800 ms of being started, so a watchdog fires 700 ms after the
process started (interpreter start-up included, the rest left for exiting).

On a loaded machine an event can take longer than that, and dropping it would leave the badge
wrong for good (a turn that ended still reads working). So the watchdog hands the event off
rather than dropping it: the process forks, the agent's process exits 0 at once, and the copy,
its standard streams on /dev/null so the agent's pipes close, finishes the interrupted work
where it stood (a tmux client it was reading goes on being read; its exit status, reaped by no
one, reads 0 as ``subprocess`` has it). The copy has until ``HARD_DEADLINE`` after the start,
then ends, taking every tmux client of either process down with it: a hung tmux server costs
one short-lived process, never a stuck one.

Most events change nothing (a tool starts on a pane already working), so the hook's cost is
mostly its start and its end: it imports nothing that costs more than a tmux call (no
``json``, ``re``, ``signal``, ``contextlib`` or ``subprocess``), and skips the interpreter's
teardown (see ``bench/hotpaths.py``).
"""

from __future__ import annotations

import _signal
import os
import sys
import time

from roost.base import cjson, procfs
from roost.faces.hook import order

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

DEADLINE = 0.7
HARD_DEADLINE = 3.0
"""Seconds after the start by which a handed-off event is finished or given up."""
# The least the watchdog allows, so a process that started late still gets to try.
FLOOR = 0.05
HARNESS_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
HARNESS_MAX = 32
STDIN_CAP = 4 * 1024 * 1024
"""Bytes of stdin an event may hold: a real one is at most a few hundred kilobytes (a long
prompt, a tool's output). One read of at most this much returns in milliseconds even from an
endless stdin (``yes |``), which a read to the end would take whole, never reaching the
watchdog (its signal is only handled between reads that never block)."""


def _started(pid: int | str) -> int | None:
    """A process's start time in clock ticks (with its pid, it names one process), or None."""
    stat = procfs.stat(pid)
    return None if stat is None else stat.start_ticks


def _age() -> float:
    """Seconds since this process started, from /proc; 0 where that cannot be read."""
    ticks = _started("self")
    if ticks is None:
        return 0.0
    try:
        started = ticks / os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, AttributeError):
        return 0.0


_adopted: list[tuple[int, int | None]] = []
"""The tmux clients the agent's process left running when it handed its event off, each with
its start time: by the time the copy gives up, a pid no longer its child may name another."""


def _give_up(_signum: int, _frame: object) -> None:
    # A hung tmux client must not outlive the hook that started it.
    doomed = procfs.children() + [pid for pid, started in _adopted if started and _started(pid) == started]
    for pid in doomed:
        try:
            os.kill(pid, _signal.SIGKILL)
        except OSError:
            continue
    os._exit(0)


def _hand_off(signum: int, frame: object) -> None:
    """The 800 ms contract is due: the agent's process exits 0 now, a copy finishes the event."""
    clients = [(pid, _started(pid)) for pid in procfs.children()]
    try:
        pid = os.fork()
    except OSError:
        _give_up(signum, frame)
        return
    if pid:
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _adopted[:] = clients
    _signal.signal(_signal.SIGALRM, _give_up)
    _signal.setitimer(_signal.ITIMER_REAL, HARD_DEADLINE - DEADLINE)


def _harness_name(name: str) -> bool:
    """1-32 lower-case letters, digits, ``_`` or ``-``: a manifest's file name, never a path."""
    return 0 < len(name) <= HARNESS_MAX and HARNESS_CHARS.issuperset(name)


def main(argv: list[str] | None = None) -> NoReturn:
    """Handle one event, then end the process with status 0, whatever happened.

    It ends with ``os._exit`` rather than by returning: by then everything the hook wrote is
    closed (stdout is flushed here), and tearing the interpreter down, every module and object
    it made, would cost the hook about as much again as its tmux call.
    """
    args = sys.argv[1:] if argv is None else argv
    gated = args[:1] == ["--gate"]
    if gated:  # holds its event open on purpose: no watchdog (roost.faces.hook.gate)
        args = args[1:]
    else:
        _signal.signal(_signal.SIGALRM, _hand_off)
        _signal.setitimer(_signal.ITIMER_REAL, max(FLOOR, DEADLINE - _age()))
    try:
        data = sys.stdin.buffer.read(STDIN_CAP + 1)
        payload = _payload(data) if len(data) <= STDIN_CAP else None  # too big: no event
        if args:
            harness = args[0]
        else:
            from roost.agents.manifest import default_harness

            harness = default_harness() or ""
        if isinstance(payload, dict) and _harness_name(harness):
            said = _gate(harness, payload) if gated else _event(harness, payload)
            if said:
                sys.stdout.write(said)
                sys.stdout.flush()
    except Exception:
        pass
    _exit_quietly()


def _payload(data: bytes) -> object:
    """The event on stdin. Bytes that are not UTF-8 (a reply its harness cut in the middle of
    a character) do not lose the event: they are read as lone surrogates, and what keeps them
    decides what becomes of them (:mod:`roost.base.text`)."""
    try:
        return cjson.loads(data or b"{}")
    except UnicodeDecodeError:
        return cjson.loads(data.decode("utf-8", "surrogateescape"))


def _event(harness: str, payload: dict) -> str | None:
    """Badge the pane and tell the daemon; the text for the agent's context, if any."""
    from roost.faces.hook.pane import stamp
    from roost.faces.hook.post import post
    from roost.truth.detect.hookevents import read

    heard = read(harness, payload)
    if heard is None:
        return None
    if not order.take():  # a later event of the pane was taken while this one was handed off
        return None
    context = reason = name = None
    try:
        context, reason, name = stamp(heard)
    finally:  # the daemon hears of the event even when the pane could not be stamped
        post(heard, reason, name, order.STARTED)
    return context


def _gate(harness: str, payload: dict) -> str | None:
    """The gate's decision as the line its host reads, or None: the host's dialog decides."""
    from roost.faces.hook.gate import decide

    decision = decide(harness, payload)
    return decision + "\n" if decision else None


def _exit_quietly() -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # closed, or a reader that went: nothing more to say
            continue
    os._exit(0)


if __name__ == "__main__":
    main()
