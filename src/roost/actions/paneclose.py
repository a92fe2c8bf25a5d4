"""Closing one pane of roost's tmux server: its agent is asked to leave its own way first.

The agent is typed its harness's exit command (its manifest's ``exit_command``, as keystrokes,
never a paste), and once it has gone (the pane closed, or a shell holds its terminal again)
that one pane is closed: never the window's other panes, never a tmux session, never the
server. Everything refused is refused before anything is typed or closed, each with the
failure of :mod:`roost.base.errors` its callers map to an exit code or a status:

=============================================  ===========  ==========================
refusal                                        failure      ``force`` lifts it
=============================================  ===========  ==========================
a target naming more than one pane             UsageError   no
the last pane of its tmux session (unless its  Conflict     no
program has exited: a dead pane holds nothing)
the agent is working (it would lose the turn)  Conflict     yes
the agent waits on a dialog for a person       Conflict     yes
no exit command to type (not an agent roost    Conflict     yes
knows, or its manifest has none)
a dialog opened while it was leaving           Conflict     (it is left open)
it did not leave within ``timeout``            TimedOut     (the pane stays)
=============================================  ===========  ==========================

A pane with no badge runs no agent roost knows of, and is closed without a word typed. ``roost
close`` (the terminal lane, which needs no daemon) and rosterd's close action
(:mod:`roost.actions.close`) both call :func:`leave`; it blocks while the agent leaves, so the
daemon runs it off its loop. Nothing here loads the roster or pydantic: ``roost`` verbs never do.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from roost.agents import manifest
from roost.agents.model import Manifest
from roost.base.errors import Conflict, TimedOut, UsageError
from roost.pane.state import jobs, panestate
from roost.pane.state import words as w
from roost.pane.tmux import placement
from roost.pane.tmux.panes import Pane
from roost.pane.tmux.server import Server
from roost.pane.tmux.targets import resolve

DEFAULT_TIMEOUT = 10
"""Seconds an agent has to leave before the close gives up, the pane left open."""
POLL = 0.1
KEY_GAP = 0.2
"""A TUI that sees text and Enter in one burst may take it for a paste and keep the Enter as a
newline in its input box; a beat between them makes it a keypress."""
SHELLS = frozenset(
    ("sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "ash", "yash", "csh", "tcsh", "nu", "elvish")
)


@dataclass(frozen=True)
class Left:
    """A pane that was closed: its ``%N``, its badge as found, the agent in it, what was typed
    (None: nothing), and whether ``force`` closed it unasked."""

    pane: str
    state: str | None
    harness: str | None
    exit_command: str | None
    forced: bool
    worktree: str | None = None
    """The git worktree ``spawn --worktree`` made for the pane's agent, kept as it was."""
    branch: str | None = None


def leave(server: Server, target: str, *, force: bool = False, timeout: float = DEFAULT_TIMEOUT) -> Left:
    """Ask the agent in the one pane ``target`` names to leave, wait for it, close the pane.
    ``target`` is any tmux target roost reads (``%N``, a window, ``session:window``); TargetGone
    when it names nothing."""
    p = _one_pane(target, resolve(server, target, (*w.PANE_OPTIONS, w.WORKTREE, w.BRANCH)).panes)
    state = p.opt(w.STATE)
    # The agent fires no hook when a dialog is declined: that 🛑 is stale, and the agent behind
    # it sits at its prompt, to be asked to exit like any other.
    current = None if panestate.clear_if_declined(server, p) else state
    foreground = _foreground(p)
    harness, agent = _harness(p, foreground) if state is not None else (None, None)
    typed = None
    if state is not None and not force and not _agent_left(p, foreground):
        typed = _exit_command(p, current, harness, agent)
        _type(server, p.id, typed)
        _wait_gone(server, p.id, timeout)
    placement.kill_pane(server, p.id)
    return Left(p.id, state, harness, typed, force, p.opt(w.WORKTREE), p.opt(w.BRANCH))


def _foreground(p: Pane) -> list[str]:
    """What holds the pane's terminal: every live process of its foreground job, by name."""
    pgid = jobs.foreground_job(p.pid)
    return (jobs.job_commands(pgid) if pgid else []) or [p.command]


def _agent_left(p: Pane, foreground: list[str]) -> bool:
    """The pane is dead, or a shell alone holds its terminal (an old badge may still be on it)."""
    return p.dead or all(name.lstrip("-") in SHELLS for name in foreground)


def _harness(p: Pane, foreground: list[str]) -> tuple[str | None, Manifest | None]:
    """The agent in the pane: the name its adapter recorded, else the program that runs there."""
    name = p.opt(w.HARNESS)
    if name:
        return name, manifest.load(name)
    for command in (*foreground, p.command):
        found = manifest.for_command(command)
        if found is not None:
            return found.name, found
    return None, None


def _one_pane(target: str, found: list[Pane]) -> Pane:
    """The refusals ``force`` never lifts: they protect panes other than the one named."""
    if len(found) > 1:
        raise UsageError(
            f"window '{target}' has {len(found)} panes; close takes one pane: "
            "give its %N (roost status lists them)"
        )
    p = found[0]
    # A dead pane (kept after its command exited) holds nothing to lose: closing it may end
    # its session, as the person who asked to close it expects.
    if p.window_panes == 1 and p.session_windows == 1 and not p.dead:
        raise Conflict(
            f"{p.id} is the last pane of session '{p.session}'; closing it would end the session "
            f"(roost kill {p.session} does that)"
        )
    return p


def _exit_command(p: Pane, state: str | None, harness: str | None, agent: Manifest | None) -> str:
    """The text to type, or a refusal (lifted by ``force``) saying why nothing can be typed."""
    if state == w.WORKING:
        raise Conflict(
            f"{p.id} is working: closing it now would lose the turn; wait with roost wait-done, "
            "or pass --force"
        )
    if state == w.BLOCKED:
        asks = f": {reason}" if (reason := p.opt(w.REASON)) else ""
        raise Conflict(f"{p.id} needs input (a dialog for a person{asks}); answer it, or pass --force")
    if agent is None or not agent.exit_command:
        what = f"harness '{harness}' has no exit command" if harness else "can't tell which agent runs there"
        raise Conflict(f"{p.id}: {what}, and a guess would be read as a prompt; --force closes it unasked")
    return agent.exit_command


def _type(server: Server, pane_id: str, text: str) -> None:
    """Type ``text`` as keystrokes (never a paste) and press Enter."""
    server.run("send-keys", "-t", pane_id, "-l", text, check=False)
    time.sleep(KEY_GAP)
    server.run("send-keys", "-t", pane_id, "Enter", check=False)


def _wait_gone(server: Server, pane_id: str, timeout: float) -> None:
    """Wait for the agent to leave: its pane closes, or a shell takes the pane back."""
    deadline = time.monotonic() + timeout
    while True:
        p = panestate.read(server, pane_id)
        if p is None or _agent_left(p, _foreground(p)):
            return
        if p.opt(w.STATE) == w.BLOCKED:
            reason = p.opt(w.REASON) or "a dialog"
            raise Conflict(
                f"{pane_id} opened a dialog while exiting ({reason}); it is left open, unanswered, for you"
            )
        if time.monotonic() >= deadline:
            raise TimedOut(f"{pane_id} did not exit within {timeout:g} s; the pane is still open")
        time.sleep(POLL)
