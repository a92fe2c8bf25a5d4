"""The tools, one table: each tool's name, what it does, its input model and its body.

A tool reads the roster and acts through :mod:`roost.actions` exactly as the API's routes do,
so a refusal is the same failure (:mod:`roost.errors`) with the same ``code`` and message; the
server turns it into a tool error (see :mod:`roost.mcpserver.server`). A session is named the
way every face names one (:meth:`roost.actions.door.Door.find`): its key, a pid on this node, or
a display name unique across the swarm. A session another node owns is acted on by that node:
the tool hands it the call (:mod:`roost.mcpserver.relay`) and answers with its answer, and
``session.list`` lists the peers' sessions as last heard beside this node's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from roost.actions import fork as forking
from roost.actions import headless
from roost.actions.door import Door, Found
from roost.errors import RoostError, TargetGone, UsageError
from roost.mcpserver import grants, inputs, sending
from roost.mcpserver.answer import answer
from roost.mcpserver.caller import Caller
from roost.mcpserver.relay import relay, relay_start
from roost.roster import Record, records, to_json
from roost.validation import Invalid, validated

log = logging.getLogger("rosterd")

BRIEF = (
    "session_key",
    "node",
    "name",
    "harness",
    "lane",
    "activity",
    "activity_at",
    "liveness",
    "cwd",
    "parent_session_key",
    "permission_policy",
)
"""A session in a list: the record's own fields (its own words), enough to pick one."""
INTERNAL = {"error": "internal error; see the daemon's log", "status": 500}
BAD_ARGUMENT = "bad_argument"
"""The ``code`` of a tool's argument its input model refuses (the ``field`` names it)."""


@dataclass(frozen=True)
class Context:
    """What the tools act through, handed in by the daemon: the door into this node's sessions
    (:mod:`roost.actions.door`), and what the config allows an agent."""

    door: Door
    allow_always: bool = False
    """Whether a caller may answer ``allow_always`` (``[mcp] allow_always``): a person's answer."""


Body = Callable[[Context, Caller, Any], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    model: type[inputs.Input]
    body: Body
    read_only: bool = False


def brief(record: Record) -> dict[str, Any]:
    doc = to_json(record)
    return {field: doc[field] for field in BRIEF}


async def session_list(context: Context, caller: Caller, args: inputs.Listing) -> dict[str, Any]:
    everyone = list(context.door.live.roster.records())
    peers = context.door.peers
    for peer in peers.all() if peers is not None else ():
        everyone += peer.records.values()
    shown = [brief(r) for r in everyone if args.include_ended or r.liveness != records.ENDED]
    return {"caller": caller.session, "sessions": shown}


def _found(context: Context, name: str) -> Found:
    return context.door.find(name, pane_ids=False)


async def session_find(context: Context, caller: Caller, args: inputs.Which) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.find", args, found)
    return brief(context.door.session(found))


async def read_state(context: Context, caller: Caller, args: inputs.Which) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.read_state", args, found)
    return to_json(context.door.session(found))


def _folder(value: str | None, parent: Record | None) -> str:
    """Where a spawned session runs: the folder given (``~`` is the daemon's home), or the
    caller's own."""
    if value is None:
        if parent is None or not parent.cwd:
            raise UsageError(
                "cwd is required: the caller is no session whose folder could be used", field="cwd"
            )
        return parent.cwd
    path = os.path.expanduser(value) if value.startswith("~") else value
    if not os.path.isabs(path):
        raise UsageError(f"cwd must be an absolute folder or start with ~, not {value!r}", field="cwd")
    return os.path.normpath(path)


async def spawn(context: Context, caller: Caller, args: inputs.Spawn) -> dict[str, Any]:
    """A child of the caller, here or on the node ``args.node`` names. A spawn another node
    forwarded carries its caller's session as ``parent_session_key`` and the policy that node
    held it to (its member's word, as its ``session.allow`` is); a caller here may set neither."""
    door = context.door
    roster = door.live.roster
    if caller.through is None and args.parent_session_key is not None:
        raise UsageError(
            "parent_session_key is set by the node a spawn comes through", field="parent_session_key"
        )
    parent = caller.record(roster)
    own = args.policy if caller.through is not None and args.policy else grants.granted(door, caller)
    policy = grants.child_policy(args.policy, own)
    if args.node is not None and args.node not in (roster.node, roster.node_id):
        node_id = door.forwarder.member(args.node) if door.forwarder is not None else None
        if node_id is None:
            raise TargetGone(f"no node {args.node!r} in this node's swarm", code="no_such_node")
        cwd = args.cwd or (parent.cwd if parent is not None else None)
        if cwd is None:
            raise UsageError(
                "cwd is required: the caller is no session whose folder could be used", field="cwd"
            )
        arguments = {
            **args.model_dump(mode="json", exclude_unset=True, exclude={"node"}),
            "cwd": cwd,
            "policy": policy,
            "parent_session_key": caller.session,
        }
        return await relay_start(door, caller, "session.spawn", arguments, node_id)
    options = headless.Options(
        args.name, policy, args.model, args.effort, parent=args.parent_session_key or caller.session
    )
    record = await headless.start(door, args.harness, _folder(args.cwd, parent), options)
    return {"record": to_json(record)}


async def fork(context: Context, caller: Caller, args: inputs.Fork) -> dict[str, Any]:
    """A new session from ``args.name``'s conversation, started by the caller: a headless fork
    runs under the stricter of the source's policy and the caller's own."""
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.fork", args, found)
    source = found.record.permission_policy if found.record is not None else None
    policy = grants.stricter(source, grants.granted(context.door, caller)) if found.headless else None
    forked = await forking.fork(
        context.door,
        found,
        args.new_name,
        worktree=args.worktree,
        branch=args.branch,
        policy=policy,
        parent=caller.session,
    )
    return forked.to_json()


async def send(context: Context, caller: Caller, args: inputs.Send) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.send", args, found)
    if found.headless:
        return await sending.to_headless(context.door, found, args)
    return await sending.to_pane(context.door, found, args)


async def cancel(context: Context, caller: Caller, args: inputs.Which) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.cancel", args, found)
    return {"record": to_json(await headless.cancel(context.door, found))}


async def allow(context: Context, caller: Caller, args: inputs.Allow) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.allow", args, found)
    answered = answer(
        context.door,
        caller,
        found,
        allow=True,
        always=args.always,
        request_id=args.request_id,
        always_allowed=context.allow_always,
    )
    return {"record": to_json(answered)}


async def deny(context: Context, caller: Caller, args: inputs.Deny) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.deny", args, found)
    answered = answer(
        context.door, caller, found, allow=False, reason=args.reason, request_id=args.request_id
    )
    return {"record": to_json(answered)}


TOOLS = {
    tool.name: tool
    for tool in (
        Tool(
            "session.list",
            "Every session on this node (agents in terminals and headless ones): key, name, "
            "harness, lane, activity (active, idle, needs_attention), liveness, folder. "
            "`caller` is your own session's key when you run in one.",
            inputs.Listing,
            session_list,
            read_only=True,
        ),
        Tool(
            "session.find",
            "One session by its key, a pid on this node, or its display name. An ambiguous "
            "name is refused with the candidates' keys; it never guesses.",
            inputs.Which,
            session_find,
            read_only=True,
        ),
        Tool(
            "session.read_state",
            "A session's whole record: activity, liveness, the pending permission, the recap "
            "(its last turn's final message), name, harness, lane, plan, usage.",
            inputs.Which,
            read_state,
            read_only=True,
        ),
        Tool(
            "session.spawn",
            "Start a headless session of a harness in a folder (yours if left out), on this node or "
            "on the swarm's node `node` names. It is your "
            "child, and keeps your permission policy unless `policy` names a stricter one: "
            "`attention` is stricter than `auto`, and a looser one than yours is refused "
            "(`policy_too_loose`). Outside a headless session yours counts as `attention`.",
            inputs.Spawn,
            spawn,
        ),
        Tool(
            "session.fork",
            "Fork a session: a new one, named `new_name`, that starts from its conversation (its "
            "whole context), the source left as it was; with `worktree`, in a new git worktree and "
            "branch of the source's repository, so the two never edit each other's files. A "
            "headless fork runs under the source's policy or yours, whichever is stricter. Refused "
            "(`no_conversation`) before the source's first turn, and (`cannot_fork`) for an agent "
            "that cannot fork.",
            inputs.Fork,
            fork,
        ),
        Tool(
            "session.send",
            "Send a prompt to a session: a headless one (resumed first when suspended) or an agent "
            "in a terminal pane (written once, only while it is idle or working). With "
            "`wait_until` (idle, needs_attention, ended) it answers once the session gets there "
            "or `timeout_s` passes: the record (its recap when idle) and whether the wait was reached; "
            "for a headless session `stale` says the recap is an earlier turn's (this one had not ended). "
            'An `input` of "ambiguous" means the text may have arrived: never send it again.',
            inputs.Send,
            send,
        ),
        Tool("session.cancel", "Cancel a headless session's running turn.", inputs.Which, cancel),
        Tool(
            "session.allow",
            "Allow the permission a session waits on, once. `always` is a person's answer: refused "
            "(`allow_always_off`) unless rosterd's config turns it on for MCP.",
            inputs.Allow,
            allow,
        ),
        Tool(
            "session.deny",
            "Deny the permission a headless session waits on, with an optional reason.",
            inputs.Deny,
            deny,
        ),
    )
}
"""Every tool, by name, in the order ``tools/list`` gives them."""


def failure(error: RoostError) -> dict[str, Any]:
    """A refusal as the API words it (``{"error": …, …extra}``), with the HTTP status it has there."""
    return {"error": error.message, "status": error.status, **error.extra}


async def call(
    context: Context, tool: Tool, caller: Caller, arguments: Mapping[str, Any]
) -> tuple[dict[str, Any], bool]:
    """``tool`` called with ``arguments``: its result, or its refusal, and whether it is one.
    The MCP server's calls and the calls another node forwards (:mod:`roost.mcpserver.acts`)
    are both this one, so a forwarded call is checked and refused exactly as a local one."""
    try:
        args = validated(tool.model, arguments)
        return await tool.body(context, caller, args), False
    except Invalid as refused:
        return failure(UsageError(str(refused), code=BAD_ARGUMENT, field=refused.field)), True
    except RoostError as error:
        return failure(error), True
    except Exception:
        log.exception("the MCP tool %s failed", tool.name)
        return dict(INTERNAL), True
