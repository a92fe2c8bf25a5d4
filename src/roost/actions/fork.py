"""A fork: a new session that starts from another's conversation, the source left as it was, in
a new git worktree and branch when asked. ``roost fork`` (panes, no daemon needed),
``POST /sessions/{key}/fork``, MCP's ``session.fork`` and the web app's Fork all come here.

**A pane's agent** is forked by its CLI: its manifest's ``[fork]`` command (Claude Code's
``claude --resume ID --fork-session``), run as the source was started (the same program, its
flags less those ``drop`` names, and the variables of its ``resume_env``, as ``roost restore``
reads them from its process) in a new window of the source's tmux session. Where the command
names ``{fork_id}``, roost chooses the fork's session id and says it on the new pane at once.
**A headless session** is forked by its ACP adapter's ``session/fork`` on a holder of its own
(:meth:`roost.headless.runner.runner.Runner.fork`), where the adapter offers it.

Every refusal comes before anything is made, each a failure of :mod:`roost.base.errors`:

=============================================================  ===========  =================
refusal                                                        failure      ``code``
=============================================================  ===========  =================
the target names nothing                                       TargetGone
a window of several panes                                      UsageError
no agent in it has said who it is, or it has had no turn yet   Conflict     no_conversation
its agent cannot fork (no ``[fork]``; an adapter without it)   Conflict     cannot_fork
NAME names a pane or window already (or, from the daemon, a    Conflict     name_taken
live session)
``worktree`` and the source's folder is in no git repository   UsageError
``worktree`` and the branch or folder exists                   Conflict
=============================================================  ===========  =================

A worktree is made from the repository's ``HEAD`` as ``roost spawn --worktree`` makes one
(:mod:`roost.pane.state.worktrees`), and the fork starts in the same place inside it that the
source runs in inside its repository; one made for a fork that then fails to start is
removed again, so a refusal leaves nothing behind. Nothing here loads the roster or pydantic
until a daemon's face asks (:func:`fork`): ``roost fork`` never does.
"""

from __future__ import annotations

import os
import shlex
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from roost.actions import agentstart
from roost.actions.restore import flags_only, program
from roost.agents import manifest
from roost.base.errors import Conflict, UsageError
from roost.pane.state import newpane, panestate, worktrees
from roost.pane.state import words as w
from roost.pane.tmux import placement
from roost.pane.tmux.panes import Pane, list_panes
from roost.pane.tmux.server import Server, TmuxError
from roost.pane.tmux.targets import resolve
from roost.truth.roster.records import Record  # at run time: the API's model is read off Forked

if TYPE_CHECKING:
    from collections.abc import Mapping

    from roost.actions.sessions import Door, Found
    from roost.agents.model import Manifest

FORK_ID = "{fork_id}"
CURRENT_PATH = "pane_current_path"
NO_CONVERSATION = "no_conversation"
CANNOT_FORK = "cannot_fork"
NAME_TAKEN = "name_taken"


@dataclass(frozen=True)
class Forked:
    """A fork that started: the source (a pane's ``%N`` or a session's key) and the id of the
    conversation it came from; where the fork runs (its pane, or its record when headless),
    its name, its own session id where known yet, its folder and the worktree and branch it
    was given (None without one)."""

    lane: str
    source: str
    forked_from: str
    harness: str
    name: str
    pane: str | None
    record: Record | None
    session_id: str | None
    cwd: str
    worktree: str | None
    branch: str | None


def command(found: Manifest, session_id: str, fork_id: str | None, argv: list[str] | None) -> list[str]:
    """The fork's command line: the ``[fork]`` command's words for ``session_id`` (and
    ``fork_id``), with the program and flags the source was started with (``argv``, None when
    unknown) less those ``drop`` names; a prompt on its command line is not sent again."""
    assert found.fork is not None
    template = shlex.split(found.fork.command)
    words = [
        word.replace("{session_id}", session_id).replace(FORK_ID, fork_id or "") for word in template[1:]
    ]
    flags, _ = flags_only(found, argv[1:] if argv else [])
    kept: list[str] = []
    at = 0
    while at < len(flags):
        size = 2 if flags[at] in found.value_flags and at + 1 < len(flags) else 1
        if flags[at].partition("=")[0] not in found.fork.drop:
            kept += flags[at : at + size]
        at += size
    return [program(found, argv, template[0]), *words, *kept]


def taken(server: Server, name: str) -> bool:
    """Whether ``name`` already names a pane (its ``-n`` name) or a window of roost's server."""
    return any(p.window_name == name or p.opt(w.NAME) == name for p in list_panes(server, (w.NAME,)))


def inside(planned: worktrees.Planned, cwd: str) -> str:
    """Where in the new worktree (made already) the fork starts: where ``cwd`` is in the
    repository, or the worktree's top when that folder is not in it (git keeps no empty or
    untracked folder)."""
    relative = os.path.relpath(os.path.realpath(cwd), os.path.realpath(planned.repo))
    there = os.path.join(planned.path, relative)
    if relative == "." or relative.startswith(os.pardir) or not os.path.isdir(there):
        return planned.path
    return there


def fork_pane(
    server: Server,
    target: str,
    name: str,
    *,
    worktree: bool = False,
    branch: str | None = None,
    caller: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[Forked, list[str]]:
    """Fork the agent of the one pane ``target`` names into a new window ``name`` of its tmux
    session. The new pane gets ``caller``'s environment as ``roost spawn`` gives one (or ``env``
    alone, the daemon's), with the source's ``resume_env`` variables over it. Returns the fork
    and the names of the caller's variables too large to pass (they keep the server's values)."""
    from roost.pane.tmux import environ

    source = _one_pane(target, resolve(server, target, (*w.PANE_OPTIONS, CURRENT_PATH)).panes)
    harness, session_id, found = _forkable(source)
    if taken(server, name):
        raise Conflict(
            f"{name!r} names a pane or window already: give the fork another NAME", code=NAME_TAKEN
        )
    described = agentstart.describe(harness, source.pid)
    cwd = described.get("cwd") or source.opt(w.CWD) or source.opt(CURRENT_PATH) or os.getcwd()
    planned = worktrees.plan(cwd, name, branch) if worktree else None
    fork_id = str(uuid.uuid4()) if found.fork is not None and FORK_ID in found.fork.command else None
    argv = command(found, session_id, fork_id, described.get("argv"))
    passed, left_out = environ.callers(server, source.session, caller) if caller is not None else ({}, [])
    birth = newpane.birth({**passed, **(env or {})}, keep=True)
    kept = {key: value for key, value in (described.get("env") or {}).items() if key in found.resume_env}
    birth.env = {**birth.env, **kept}
    birth.forget = (*birth.forget, *kept)
    if planned is not None:
        worktrees.create(planned)
    where = inside(planned, cwd) if planned is not None else cwd
    try:
        opened = placement.new_window(server, source.session, name, shlex.join(argv), where, birth)
    except TmuxError:
        if planned is not None:
            worktrees.remove(planned.path, planned.branch)
        raise
    panestate.label(server, opened.pane, name)
    if planned is not None:
        panestate.worktree(server, opened.pane, planned.path, planned.branch)
    if fork_id is not None and (made := panestate.read(server, opened.pane)) is not None:
        panestate.identify(server, made, fork_id, where, harness, None)
    forked = Forked(
        "pane",
        source.id,
        session_id,
        harness,
        name,
        opened.pane,
        None,
        fork_id,
        where,
        planned.path if planned else None,
        planned.branch if planned else None,
    )
    return forked, left_out


def _one_pane(target: str, found: list[Pane]) -> Pane:
    if len(found) > 1:
        raise UsageError(
            f"window '{target}' has {len(found)} panes; fork takes one pane: "
            "give its %N (roost status lists them)"
        )
    return found[0]


def _forkable(p: Pane) -> tuple[str, str, Manifest]:
    """The pane's harness, conversation and manifest, or why it cannot be forked."""
    harness, session_id = p.opt(w.HARNESS), p.opt(w.SESSION_ID)
    if not harness or not session_id:
        raise Conflict(
            f"{p.id} has no conversation to fork: no agent in it has said who it is (its hooks say so)",
            code=NO_CONVERSATION,
        )
    found = _manifest(harness)
    if found is None or found.fork is None:
        display = found.display if found is not None else harness
        raise Conflict(
            f"{display} cannot fork a conversation (its manifest has no [fork] command)", code=CANNOT_FORK
        )
    transcript = p.opt(w.TRANSCRIPT)
    if not (os.path.exists(transcript) if transcript else panestate.turn_number(p) > 0):
        raise Conflict(
            f"{p.id} has no conversation yet: fork it once it has had a turn", code=NO_CONVERSATION
        )
    return harness, session_id, found


def _manifest(harness: str) -> Manifest | None:
    try:
        return manifest.load(harness)
    except (LookupError, ValueError, OSError):
        return None


async def fork(
    door: Door,
    target: str | Found,
    name: str,
    *,
    worktree: bool = False,
    branch: str | None = None,
    policy: str | None = None,
    parent: str | None = None,
) -> Forked:
    """Fork the session ``target`` names, whatever its lane, for the daemon's faces: a headless
    one through the runner (under ``policy`` when given, else its own; ``parent``: the session
    that asked, over MCP), a pane's through :func:`fork_pane` with the PATH the launcher
    searches. NAME is refused when a live session of the roster has it too."""
    import asyncio

    from roost.actions import runnable
    from roost.base.errors import Unavailable
    from roost.truth.roster import records

    found = door.local(target)
    live = (r for r in door.live.roster.records() if r.liveness != records.ENDED)
    if any(r.name == name for r in live) or (
        door.tmux is not None and await asyncio.to_thread(taken, door.tmux, name)
    ):
        raise Conflict(f"{name!r} names a session already: give the fork another NAME", code=NAME_TAKEN)
    if found.headless:
        return await _fork_headless(door, found, name, worktree, branch, policy, parent)
    if found.pane is None or door.tmux is None:
        raise Conflict(
            f"{found.name} runs in no pane of roost's tmux server and is no headless session: "
            "it cannot be forked from here",
            code=CANNOT_FORK,
        )
    path = await asyncio.to_thread(runnable.search_path, door)
    try:
        forked, _ = await asyncio.to_thread(
            fork_pane, door.tmux, found.pane, name, worktree=worktree, branch=branch, env={"PATH": path}
        )
    except TmuxError as error:
        raise Unavailable(f"tmux could not open the fork's window: {error}") from None
    return forked


async def _fork_headless(
    door: Door,
    found: Found,
    name: str,
    worktree: bool,
    branch: str | None,
    policy: str | None,
    parent: str | None,
) -> Forked:
    import asyncio

    from roost.base.errors import RoostError

    runner, key = door.headless(found)
    source = (await runner.forkable(key)).entry
    planned = await asyncio.to_thread(worktrees.plan, source.cwd, name, branch) if worktree else None
    if planned is not None:
        await asyncio.to_thread(worktrees.create, planned)
    where = inside(planned, source.cwd) if planned is not None else source.cwd
    try:
        record = await runner.fork(key, where, name=name, policy=policy, parent=parent)
    except RoostError:
        if planned is not None:
            await asyncio.to_thread(worktrees.remove, planned.path, planned.branch)
        raise
    return Forked(
        "headless",
        key,
        source.session_id or "",
        source.harness,
        name,
        None,
        record,
        record.session_id,
        where,
        planned.path if planned else None,
        planned.branch if planned else None,
    )
