"""Bringing back the layout a record kept (:mod:`roost.pane.state.layout`): the plan, then the panes.
``roost restore`` is its face.

Which record: the one of the socket's last server that is not running now (the current
record, or the previous one when a new server has written since). A record whose server
still runs is refused; a record already restored, or a session whose name runs now, makes
nothing, and the plan says why. So a restore run twice creates nothing twice.

Each pane comes back as what it was: an agent with its manifest's resume command, its own
program (the binary it was started as) and flags, the variables its manifest names and the
directory it ran in; a plain shell as a shell in its directory; an agent whose harness has no
resume command as the command it was started with, with a note; any other program as a shell
in its directory, with a note naming what it ran (a command is not run again unasked).
"""

from __future__ import annotations

import itertools
import os
import shlex

from roost.base.errors import Conflict, NotRecorded, SetupError
from roost.pane.state import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.agents.model import Manifest
    from roost.pane.tmux.placement import Birth
    from roost.pane.tmux.server import Server

RUNNING = "session {name} is running"
ALREADY = "this layout was already restored"


class Step:
    """One pane of the plan: what it was, what restore starts in it, and what became of it."""

    def __init__(self, session: str, window: dict, pane: dict) -> None:
        self.session = session
        self.window = window
        self.pane = pane
        agent = pane.get("agent") or {}
        self.harness: str | None = agent.get("harness")
        self.session_id: str | None = agent.get("session_id")
        self.kind = "agent" if agent else ("command" if pane.get("command") else "shell")
        self.action = "shell"
        self.argv: list[str] | None = None
        self.env: dict[str, str] = {}
        self.cwd: str | None = agent.get("cwd") or pane.get("cwd")
        self.note: str | None = None
        self.reason: str | None = None
        self.pane_id: str | None = None

    def document(self) -> dict:
        return {
            "session": self.session,
            "window": self.window["index"],
            "window_name": self.window["name"],
            "pane": self.pane["index"],
            "name": self.pane.get("name"),
            "kind": self.kind,
            "harness": self.harness,
            "session_id": self.session_id,
            "cwd": self.cwd,
            "command": shlex.join(self.argv) if self.argv else None,
            "action": "none" if self.reason else self.action,
            "restored": self.pane_id is not None,
            "pane_id": self.pane_id,
            "reason": self.reason,
            "note": self.note,
        }


class Plan:
    def __init__(self, path: str, record: dict, steps: list[Step]) -> None:
        self.path = path
        self.record = record
        self.steps = steps


def source(server: Server) -> tuple[str, dict]:
    """The record to restore and where it is; refusals as the module docstring says."""
    from roost.pane.tmux.panes import server_key

    live = server_key(server) if server.running() else None
    found = None
    for path in (layout.record_path(server.socket), layout.previous_path(server.socket)):
        try:
            record = layout.read(path)
        except layout.Corrupt as error:
            raise SetupError(f"the layout record is not usable, so nothing was restored: {error}") from None
        if record is None:
            continue
        if record["server"] != live:
            return path, record
        found = found or record
    if found is not None:
        raise Conflict(
            f"roost's tmux server on socket '{server.socket}' still runs the layout it recorded; "
            "nothing to restore"
        )
    raise NotRecorded(f"no layout has been recorded for socket '{server.socket}'")


def plan(server: Server) -> Plan:
    from roost.pane.tmux import sessions

    path, record = source(server)
    running = server.running()
    steps = []
    for session in record["sessions"]:
        reason = None
        if record.get("restored"):
            reason = ALREADY
        elif running and sessions.has_session(server, session["name"]):
            reason = RUNNING.format(name=session["name"])
        for window in session["windows"]:
            for pane in window["panes"]:
                step = Step(session["name"], window, pane)
                step.reason = reason
                _decide(step)
                _installed(step)
                _somewhere(step)
                steps.append(step)
    return Plan(path, record, steps)


def _decide(step: Step) -> None:
    """What the pane is started with, and the note that says what it could not be."""
    pane, agent = step.pane, step.pane.get("agent")
    if not agent:
        if step.kind == "command":
            step.note = f"it ran `{pane['command']}`: a shell is started in its place, not the command"
        return
    manifest = _manifest(agent["harness"])
    argv = agent.get("argv")
    if manifest is None:
        step.note = f"no agent is known as '{agent['harness']}'; a shell is started instead"
        return
    step.env = {name: value for name, value in agent["env"].items() if name in manifest.resume_env}
    flags, prompt = flags_only(manifest, argv[1:] if argv else [])
    said = "the prompt on its command line is not sent again" if prompt else None
    if manifest.resume_command:
        step.action = "resume"
        step.argv = resume_argv(manifest, agent["session_id"], [argv[0], *flags] if argv else None)
        step.note = said
        return
    step.action = "start"
    step.argv = [program(manifest, argv), *flags]
    step.note = f"{manifest.display} has no resume command: started again, as a new conversation"
    step.note += f"; {said}" if said else ""


def _installed(step: Step) -> None:
    """An agent whose program is not there any more comes back as a shell, with a note: started
    as a command, it would close its pane at once, and nobody would see why."""
    import shutil

    if not step.argv or shutil.which(step.argv[0]):
        return
    step.note = f"{step.argv[0]} is not installed here any more: a shell is started in its place"
    step.action, step.argv, step.env = "shell", None, {}


def _somewhere(step: Step) -> None:
    """A directory that is gone (a deleted worktree, an unmounted disk) is said, not hidden:
    tmux would quietly start the pane elsewhere. It starts in the home directory instead."""
    if step.cwd is None or os.path.isdir(step.cwd):
        return
    gone, step.cwd = step.cwd, os.path.expanduser("~")
    said = f"its directory {gone} is gone: started in {step.cwd}"
    step.note = f"{step.note}; {said}" if step.note else said


def _manifest(name: str) -> Manifest | None:
    from roost.agents import manifest

    try:
        return manifest.load(name)
    except (LookupError, ValueError, OSError):
        return None


def resume_argv(manifest: Manifest, session_id: str, argv: list[str] | None) -> list[str]:
    """The resume command for ``session_id`` with the program and flags the agent was started
    with: the template's words (``--resume {session_id}``) stand where a resumed agent's own
    command line had them, and are not given twice."""
    template = shlex.split(manifest.resume_command or "")
    words = [word.replace("{session_id}", session_id) for word in template[1:]]
    flags = _without(argv[1:] if argv else [], template[1:])
    return [program(manifest, argv, template[0]), *words, *flags]


def flags_only(manifest: Manifest, args: list[str]) -> tuple[list[str], list[str]]:
    """``args`` split into the flags (with the values of those the manifest says take one) and
    the rest: words that are no flag are a prompt the agent was started with, which its
    conversation already holds. A flag the manifest does not list is taken to stand alone, so
    a word after it is dropped rather than a prompt sent a second time."""
    flags: list[str] = []
    rest: list[str] = []
    at = 0
    while at < len(args):
        word = args[at]
        if word == "--":
            rest += args[at + 1 :]
            break
        if word.startswith("-") and word != "-":
            flags.append(word)
            if word in manifest.value_flags and at + 1 < len(args):
                flags.append(args[at + 1])
                at += 1
        else:
            rest.append(word)
        at += 1
    return flags, rest


def program(manifest: Manifest, argv: list[str] | None, fallback: str | None = None) -> str:
    """The agent's program as it was started (the same install, the same version) when the
    record names one of its binaries that still exists; else the manifest's word for it."""
    named = argv and manifest.matches(os.path.basename(argv[0]))
    if named and ("/" not in argv[0] or os.access(argv[0], os.X_OK)):
        return argv[0]
    return fallback or (manifest.binaries[0] if manifest.binaries else manifest.name)


def _without(args: list[str], pattern: list[str]) -> list[str]:
    """``args`` less the first run of words that ``pattern`` spells (``{session_id}`` stands for
    any one word)."""
    if not pattern:
        return list(args)
    size = len(pattern)
    for at in range(len(args) - size + 1):
        run = zip(pattern, args[at : at + size], strict=True)
        if all(want == "{session_id}" or want == got for want, got in run):
            return args[:at] + args[at + size :]
    return list(args)


def apply(server: Server, made: Plan, caller: Mapping[str, str] | None = None) -> None:
    """Create every session of the plan that is to be made, pane by pane, then mark the record
    restored. Runs under the record's lock, so no snapshot sees a half-built layout. ``caller``
    is the environment restore runs in: every pane gets it, as any new pane roost opens does,
    with each agent's recorded ``resume_env`` over it."""
    if made.record.get("restored"):
        return
    by_session: dict[str, list[Step]] = {}
    for step in made.steps:
        if step.reason is None:
            by_session.setdefault(step.session, []).append(step)
    try:
        for name, steps in by_session.items():
            _session(server, name, steps, caller or {})
    finally:
        if by_session:
            layout.release(server)
    from roost.pane.tmux.panes import server_key

    layout.mark_restored(made.path, made.record, server_key(server))


def _session(server: Server, name: str, steps: list[Step], caller: Mapping[str, str]) -> None:
    from roost.pane.tmux import placement, sessions
    from roost.pane.tmux.server import THEN

    windows: list[tuple[dict, list[Step]]] = []
    for step in steps:
        if not windows or windows[-1][0] is not step.window:
            windows.append((step.window, []))
        windows[-1][1].append(step)
    active: list[str] = []
    for at, (window, panes) in enumerate(windows):
        first = panes[0]
        birth = _birth(first, server, None if at == 0 else name, caller)
        if at == 0:
            size = [str(window.get("width") or 200), str(window.get("height") or 50)]
            first.pane_id = sessions.new_session(
                server, name, _command(first), first.cwd, window["name"], birth=birth, size=size
            )
            layout.hold(server)  # the server may have started just now
        else:
            opened = placement.new_window(server, name, window["name"], _command(first), first.cwd, birth)
            first.pane_id = opened.pane
        for before, step in itertools.pairwise(panes):
            opened = placement.split(  # beside the one before: a split pane is listed right after it
                server,
                before.pane_id or "",
                beside=True,
                command=_command(step),
                cwd=step.cwd,
                birth=_birth(step, server, name, caller),
            )
            step.pane_id = opened.pane
            # Evened out after each split, or the first pane, halved again and again, runs out
            # of room; the recorded layout is put back once all are there.
            _chain(server, [["select-layout", "-t", opened.pane, "tiled"]])
        finishing = (
            [["select-layout", "-t", first.pane_id or "", window["layout"]]] if window["layout"] else []
        )
        if not window["named"]:
            finishing.append(["set-option", "-w", "-t", first.pane_id or "", "automatic-rename", "on"])
        _chain(server, finishing)
        for step in panes:
            _stamp(server, step)
            if step.pane["active"] and window["active"]:
                active.append(step.pane_id or "")
            elif step.pane["active"]:
                server.run("select-pane", "-t", step.pane_id or "", check=False)
    for pane_id in active[:1]:
        server.run("select-window", "-t", pane_id, THEN, "select-pane", "-t", pane_id, check=False)


def _chain(server: Server, commands: list[list[str]]) -> None:
    """Run ``commands`` in one tmux call; a refusal (a layout that no longer fits) is left as is:
    the panes are there, in tmux's own arrangement."""
    from roost.pane.tmux.server import THEN

    args: list[str] = []
    for command in commands:
        args += [THEN, *command] if args else command
    if args:
        server.run(*args, check=False)


def _birth(step: Step, server: Server, session: str | None, caller: Mapping[str, str]) -> Birth:
    """What ``step``'s pane, opened in ``session`` (None: a new one), is born with: the caller's
    environment, the agent's recorded variables over it, and a resumed command kept when it
    exits soon after it started (a conversation that cannot be resumed says why)."""
    from roost.pane.state import newpane
    from roost.pane.tmux import environ

    passed, _ = environ.callers(server, session, caller)
    birth = newpane.birth(passed, keep=step.argv is not None)
    birth.env = {**birth.env, **step.env}
    birth.forget = (*birth.forget, *step.env)
    return birth


def _command(step: Step) -> str | None:
    return shlex.join(step.argv) if step.argv else None


def _stamp(server: Server, step: Step) -> None:
    """What the pane was: its name and worktree, and for an agent resumed, who it is, so every
    reader (``status``, the daemon) knows it before its first hook fires."""
    from roost.pane.state import panestate

    pane_id, pane = step.pane_id or "", step.pane
    if pane.get("name"):
        panestate.label(server, pane_id, pane["name"])
    if pane.get("worktree") and pane.get("branch"):
        panestate.worktree(server, pane_id, pane["worktree"], pane["branch"])
    if step.action == "resume" and step.harness and step.session_id and step.cwd:
        found = panestate.read(server, pane_id)
        if found is not None:
            panestate.identify(server, found, step.session_id, step.cwd, step.harness, None)
