"""``roost close [--force] [--json] TARGET [TIMEOUT]``: end one agent its own way, close its pane.

close asks the agent to leave with its harness's exit command, waits for it to go, then
closes that one pane: never the window's other panes, never a session, never the server.
Everything it refuses, it refuses before typing or closing anything. Kept replies stay:
only ``roost forget`` deletes them.
"""

from __future__ import annotations

import time

from roost.agents import manifest
from roost.agents.model import Manifest
from roost.cli.output import document
from roost.errors import Conflict, TimedOut, UsageError
from roost.state import jobs, panestate
from roost.state import words as w
from roost.tmux import placement
from roost.tmux.panes import Pane
from roost.tmux.server import Server
from roost.tmux.targets import resolve

USAGE = "usage: roost close [--force] [--json] TARGET [TIMEOUT]"
DEFAULT_TIMEOUT = 10
POLL = 0.1
# A TUI that sees text and Enter in one burst may take it for a paste and keep the Enter as
# a newline in its input box; a beat between them makes it a keypress.
KEY_GAP = 0.2
SHELLS = frozenset(
    ("sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "ash", "yash", "csh", "tcsh", "nu", "elvish")
)


def _parse(args: list[str]) -> tuple[bool, bool, str, int]:
    force = as_json = False
    rest = list(args)
    while rest and rest[0] in ("--force", "--json"):
        flag = rest.pop(0)
        force = force or flag == "--force"
        as_json = as_json or flag == "--json"
    if not rest or len(rest) > 2 or rest[0].startswith("-"):
        raise UsageError(USAGE)
    timeout = DEFAULT_TIMEOUT
    if len(rest) == 2:
        if not rest[1].isdigit():
            raise UsageError(f"{USAGE} (TIMEOUT is a whole number of seconds, not '{rest[1]}')")
        timeout = int(rest[1])
    return force, as_json, rest[0], timeout


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


def _refuse_shape(target: str, found: list[Pane]) -> Pane:
    """The refusals --force never lifts: they protect panes other than the one named."""
    if len(found) > 1:
        raise UsageError(
            f"window '{target}' has {len(found)} panes; close takes one pane: "
            "give its %N (roost status lists them)"
        )
    p = found[0]
    if p.window_panes == 1 and p.session_windows == 1:
        raise Conflict(
            f"{p.id} is the last pane of session '{p.session}'; closing it would end the session "
            f"(roost kill {p.session} does that)"
        )
    return p


def _exit_command(p: Pane, state: str | None, harness: str | None, agent: Manifest | None) -> str:
    """The text to type, or a refusal (lifted by --force) saying why nothing can be typed."""
    if state == w.WORKING:
        raise Conflict(
            f"{p.id} is working: closing it now would lose the turn; wait with roost wait-done, "
            "or pass --force"
        )
    if state == w.BLOCKED:
        reason = p.opt(w.REASON) or "a dialog"
        raise Conflict(f"{p.id} is blocked on a dialog for a human ({reason}); answer it, or pass --force")
    if agent is None or not agent.exit_command:
        what = f"harness '{harness}' has no exit command" if harness else "can't tell which agent runs there"
        raise Conflict(f"{p.id}: {what}, and a guess would be read as a prompt; --force closes it unasked")
    return agent.exit_command


def _type(server: Server, pane_id: str, text: str) -> None:
    """Type ``text`` as keystrokes (never a paste) and press Enter."""
    server.run("send-keys", "-t", pane_id, "-l", text, check=False)
    time.sleep(KEY_GAP)
    server.run("send-keys", "-t", pane_id, "Enter", check=False)


def _wait_gone(server: Server, pane_id: str, timeout: int) -> None:
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
            raise TimedOut(f"{pane_id} did not exit within {timeout} s; the pane is still open")
        time.sleep(POLL)


def run(verb: str, args: list[str]) -> int:
    force, as_json, target, timeout = _parse(args)
    server = Server.from_env()
    p = _refuse_shape(target, resolve(server, target, w.PANE_OPTIONS).panes)
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
    if as_json:
        document(
            "close", target=target, pane=p.id, state=state, harness=harness, exit_command=typed, forced=force
        )
    return 0
