"""Opening a headless session on a new holder: every step from "no holder" to an open ACP session.

A holder is started over the harness's adapter with the adapter's environment; the process
that answers on its socket must be that holder; then ``initialize``, the adapter lock
(:mod:`roost.headless.runner.lock`), ``session/new``, ``session/load`` or ``session/fork``, and
the model and effort asked for through the config options the adapter offers. The lifecycle
(:mod:`roost.headless.runner.lifecycle`) decides when a session is launched and what a failed launch
leaves behind; this module says how each step is taken and how it fails.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from typing import Any

from roost.agents.mcpconfig import StdioServer
from roost.base import paths
from roost.base.errors import AdapterFailed, Conflict
from roost.headless.runner import holders
from roost.headless.runner import link as links
from roost.headless.runner.link import Handshake, Link, LinkError
from roost.headless.runner.store import Entry
from roost.headless.runner.traffic import current_option

SANDBOX = "IS_SANDBOX"
"""Claude Code as root refuses to start unless this is unset or ``1``; its ACP adapter then
fails every ``session/new``. The runner drops any other value from an adapter's environment."""


def environment(environ: Mapping[str, str], entry: Entry) -> dict[str, str]:
    """The adapter's environment: the daemon's, the API socket its harness's hooks post to, and
    what the session was started with."""
    env = {**environ, paths.API_SOCKET_ENV: str(paths.api_socket())}
    if env.get(SANDBOX) not in (None, "1"):
        del env[SANDBOX]
    return {**env, **entry.env}


def check_adapter(entry: Entry, adapter: list[str], env: Mapping[str, str]) -> None:
    """Refuse an adapter that is not on the environment's PATH, before anything is started or
    written: a holder would start and then fail to run it, a 502 that reads like a crash where
    the fix is to install it."""
    if shutil.which(adapter[0], path=env.get("PATH", os.defpath)) is None:
        raise Conflict(
            f"{entry.harness}'s ACP adapter {adapter[0]!r} is not installed (not on the daemon's PATH): "
            "run `rosterd setup` to install it",
            code="adapter_missing",
        )


def spawn_holder(entry: Entry, adapter: list[str], env: dict[str, str]) -> holders.Started:
    """A new holder for ``entry`` over ``adapter``, started (:func:`holder_ready` waits for its
    socket); :func:`check_adapter` first."""
    check_adapter(entry, adapter, env)
    try:
        return holders.spawn(
            holders.new_key(),
            harness=entry.harness,
            cwd=entry.cwd,
            name=entry.name,
            policy=entry.policy,
            adapter=adapter,
            env=env,
        )
    except (holders.HolderError, OSError) as error:
        raise _would_not_start(error) from None


async def holder_ready(started: holders.Started) -> None:
    """The new holder's socket answers, or the holder is gone and this says why."""
    try:
        await holders.ready(started)
    except (holders.HolderError, OSError) as error:
        raise _would_not_start(error) from None


def _would_not_start(error: Exception) -> AdapterFailed:
    return AdapterFailed(f"the holder would not start: {error}", code="holder_failed")


async def shake(started: holders.Started) -> Handshake:
    """The new holder's replay, from the process the runner started and no other."""
    shaken = await links.handshake(paths.holder_socket(started.key))
    if shaken.peer != started.process.pid:
        raise LinkError(f"another process (pid {shaken.peer}) answers on the holder's socket")
    return shaken


async def open_session(
    link: Link, entry: Entry, servers: Sequence[StdioServer], *, load: bool, fork_of: str | None = None
) -> dict[str, Any]:
    """``session/new`` (or ``session/load`` of the stored id, or ``session/fork`` of
    ``fork_of``, another session's id), offering ``servers`` over MCP, then the model and effort
    asked for; the adapter's answer as JSON. ``entry`` keeps the session id and the model the
    session runs."""
    if fork_of is not None:
        opened = await link.fork(entry.cwd, fork_of, servers)
        entry.session_id = link.session_id
    elif not load:
        opened = await link.open(entry.cwd, servers)
        entry.session_id = link.session_id
    else:
        assert entry.session_id is not None
        opened = await link.load(entry.cwd, entry.session_id, servers)
    await _options(link, entry, opened, strict=not load and fork_of is None)
    entry.current_model = _model(entry, opened)
    return opened


def failed(error: LinkError, holder_key: str) -> AdapterFailed:
    """A step of the launch that failed, with what the adapter said last on standard error,
    which usually says why."""
    said = holders.last_words(holder_key)
    message = f"{error}; the adapter said: {said}" if said else str(error)
    return AdapterFailed(message, code="adapter_failed")


def mode(opened: dict[str, Any]) -> str | None:
    """The session mode the adapter's answer says it is in."""
    modes = opened.get("modes")
    if isinstance(modes, dict) and isinstance(modes.get("currentModeId"), str):
        return modes["currentModeId"][:64]
    return None


async def _options(link: Link, entry: Entry, opened: dict[str, Any], *, strict: bool) -> None:
    """The model and effort asked for, through the config options the adapter offers. A new
    session whose adapter offers no such option is refused (``strict``); a loaded or forked one
    keeps what its adapter kept when it offers none."""
    wanted = {"model": entry.model, "thought_level": entry.effort}
    for option in opened.get("configOptions") or []:
        value = wanted.get(option.get("category")) if isinstance(option, dict) else None
        if value and isinstance(option.get("id"), str):
            await link.set_option(option["id"], value)
            wanted[option["category"]] = None
    missing = [
        name for name, value in (("model", wanted["model"]), ("effort", wanted["thought_level"])) if value
    ]
    if missing:
        raise LinkError(f"the {entry.harness} adapter offers no {' or '.join(missing)} option")


def _model(entry: Entry, opened: dict[str, Any]) -> str | None:
    """The model the session runs: the one asked for (the adapter took it), else the one its
    config options say; None when it offers no model option."""
    offered = current_option(opened.get("configOptions"), "model")
    return (entry.model or offered) if offered else None
