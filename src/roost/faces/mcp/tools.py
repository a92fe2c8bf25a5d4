"""The tools, one table: each tool's name, what it does, its input model and its body, and
how a call is run on this node or handed to the node that owns its session.

A tool reads the roster and acts through :mod:`roost.actions` exactly as the API's routes do,
so a refusal is the same failure (:mod:`roost.base.errors`) with the same ``code`` and
message; the server turns it into a tool error (:mod:`roost.faces.mcp.server`). A session is
named the way every face names one (:meth:`roost.actions.sessions.Door.find`): its key, a pid
on this node, or a display name unique across the swarm; ``session.list`` lists the peers'
sessions as last heard beside this node's.

**What an agent may grant.** A person speaks through the CLIs, the API and the web app; MCP is
an agent's face. So over MCP a session starts others under its own permission policy or a
stricter one, and a caller that no person gave a policy (an agent in a terminal pane, a process
in no session, a token holder on loopback) is held to the strictest. ``allow_always`` answers
every later request of its kind on the person's behalf: it is a person's answer, refused over
MCP unless ``[mcp] allow_always`` in ``rosterd.toml`` turns it on (``docs/contracts.md``, "Who
may give what").

**Answering** a pending permission goes through the one contract every face uses
(:mod:`roost.actions.permission`): a headless session's adapter or a gated pane's hook gets it,
a pane with no gate is refused ``answer_in_terminal``, and a stale answer is refused by what it
pins. The journal says it came from MCP, and which session (or process) asked.

**``session.send``**: a prompt to a headless session (:func:`roost.actions.headless.prompt`),
or to a terminal pane through the fenced prompt the API writes (one paste and one Enter, once
or not at all: :func:`roost.actions.prompt.send`). A pane's prompt is pinned to what the roster
shows as the call arrives (the occupant, its revision) and refused as the API refuses it
(``not_promptable``, ``blocked``, …: 409, nothing written). A write that cannot be proven whole
is answered ``"input": "ambiguous"``: the text may have arrived, and must not be sent again.
The wait reads the same words for both lanes: ``idle``, ``needs_attention``, ``ended``; a
headless session's wait also says whether the recap is ``stale``, an earlier turn's.

**Another node's session.** ``session.find``, ``read_state``, ``send``, ``fork``, ``cancel``,
``allow`` and ``deny`` name a session; when the door finds it owned by another node, the tool hands the
owner the same call (:class:`roost.actions.remote.Act`, face ``mcp``) with the session named
by its exact key, and the owner's answer is the tool's: its result, or its refusal with the
owner's status, code and message (:class:`roost.base.errors.Relayed`). On the owner the call
arrives through the swarm listener's ``POST /swarm/act`` (:mod:`roost.remote.mesh.acts`) and
runs as :func:`call` runs every call: the same input model, the same tool, the owner's own
``[mcp]`` fences, with a caller that is no process there (held to the strictest policy) and
is named for the journal as the forwarding node said. It is done on a door that finds only the
owner's sessions, so a forwarded call never goes on to a third node.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from roost.actions import budgets, headless, permission, prompt, remote, waits
from roost.actions import fork as forking
from roost.actions.permission import ALLOW, ALLOW_ALWAYS, REJECT, Answer
from roost.actions.remote import MCP, Act, Dispatch, Reply, Through, node_named
from roost.actions.sessions import Door, Found
from roost.base.errors import Conflict, Relayed, RoostError, TargetGone, UsageError
from roost.base.validation import Invalid, validated
from roost.faces.mcp import inputs
from roost.faces.mcp.caller import Caller
from roost.truth.roster import Record, records, to_json

STRICTEST_FIRST = ("attention", "auto")

"""The permission policies, strictest first: ``attention`` leaves every request to a person,
``auto`` allows each once on the person's behalf."""

POLICY_TOO_LOOSE = "policy_too_loose"

ALLOW_ALWAYS_OFF = "allow_always_off"


def granted(door: Door, caller: Caller) -> str:
    """The policy the caller itself runs under: a headless session's own, which a person gave
    it (the runner's launcher claim, which no lower source overwrites); anyone else's is the
    strictest."""
    record = caller.record(door.live.roster)
    if record is None or not door.is_headless(record.session_key):
        return STRICTEST_FIRST[0]
    policy = record.permission_policy
    return policy if policy in STRICTEST_FIRST else STRICTEST_FIRST[0]


def child_policy(wanted: str | None, own: str) -> str:
    """The policy a session the caller starts runs under: the caller's ``own`` unless the call
    names a stricter one. A looser one is refused: only a person gives more than it has."""
    policy = wanted or own
    if STRICTEST_FIRST.index(policy) > STRICTEST_FIRST.index(own):
        raise Conflict(
            f"policy {policy} is looser than the caller's own ({own}); only a person may start "
            "a session under a looser policy, with rosterd start, the API or the web app",
            code=POLICY_TOO_LOOSE,
        )
    return policy


def stricter(one: str | None, other: str) -> str:
    """The stricter of two policies (``one`` None: ``other``): what a fork of a session with
    policy ``one`` runs under when a caller with ``other`` asks for it, so it gets no more than
    either had."""
    if one not in STRICTEST_FIRST:
        return other
    return min(one, other, key=STRICTEST_FIRST.index)


def check_answer(*, allow: bool, always: bool, always_allowed: bool) -> None:
    """Refuse an ``allow_always`` unless the config allows it to MCP; allow once and deny pass."""
    if allow and always and not always_allowed:
        raise Conflict(
            "allow_always is a person's answer and is off for MCP; allow once, or deny "
            "([mcp] allow_always in rosterd.toml turns it on)",
            code=ALLOW_ALWAYS_OFF,
        )


VIA = "mcp"


def answer(
    door: Door,
    caller: Caller,
    found: Found,
    *,
    allow: bool,
    always: bool = False,
    reason: str | None = None,
    request_id: str | None = None,
    always_allowed: bool = False,
) -> Record:
    """Allow (once, or ``always`` where ``always_allowed``) or deny the permission the session
    ``found`` waits on; the record after."""
    check_answer(allow=allow, always=always, always_allowed=always_allowed)
    option = (ALLOW_ALWAYS if always else ALLOW) if allow else REJECT
    given = Answer(option, reason, request_id, by=caller.label(), via=VIA, through=caller.through)
    return permission.answer(door, found, given)


UNTIL = {
    records.IDLE: frozenset({"idle", "blocked"}),
    records.NEEDS_ATTENTION: frozenset({"blocked"}),
    records.ENDED: frozenset(),
}

"""What a pane's wait watches for, in the row's words: ``ended`` is no state, only the
occupant's end (``session_closed``, ``occupant_changed``)."""


async def to_headless(door: Door, found: Found, args: inputs.Send) -> dict[str, Any]:
    sent = await headless.prompt(door, found, args.prompt, args.wait_until, args.timeout_s)
    answer: dict[str, Any] = {"input": prompt.ACCEPTED}
    done = sent.record
    if sent.waited is not None:
        waited = sent.waited
        done = waited.record or done
        answer["wait"] = {"until": args.wait_until, "reached": waited.reached, "stale": waited.stale}
    return {"record": to_json(done), **answer}


async def to_pane(door: Door, found: Found, args: inputs.Send) -> dict[str, Any]:
    until = UNTIL[args.wait_until] if args.wait_until is not None else None
    sent = await prompt.send(door, found, args.prompt, until, args.timeout_s)
    if sent.input == prompt.REJECTED:
        raise Conflict(
            sent.reason or sent.code or sent.input,
            session_id=sent.pane,
            input=sent.input,
            code=sent.code,
            reason=sent.reason,
        )
    assert sent.record is not None, "an admitted prompt has the occupant's record"
    answer: dict[str, Any] = {"input": sent.input, **({"reason": sent.reason} if sent.reason else {})}
    latest = sent.record
    if sent.ending is not None and args.wait_until is not None:
        latest = sent.ending.record or latest
        answer["wait"] = {"until": args.wait_until, "reached": _reached(args.wait_until, sent.ending)}
    return {"record": to_json(latest), **answer}


def _reached(until: str, ending: waits.Ending) -> bool:
    if until == records.ENDED:
        return ending.outcome in (waits.SESSION_CLOSED, waits.OCCUPANT_CHANGED)
    found = ending.record.activity if ending.record is not None else None
    return ending.outcome == waits.MATCHED and found == until


OWN_WORDS = ("error", "status", "message")

"""Fields of an owner's refusal this node words itself: the message, and the status it answered."""


async def relay(door: Door, caller: Caller, tool: str, args: inputs.Input, found: Found) -> dict[str, Any]:
    """The owner's answer to ``tool`` called with ``args`` on the session ``found``."""
    assert found.owner is not None and found.key is not None
    body = json.dumps({**args.model_dump(mode="json", exclude_unset=True), "name": found.key})
    act = Act(found.key, MCP, tool, body, caller.label(), VIA, remote.waiting(body, time.time()))
    return await _answer(door, found.owner, found.node or found.owner, act)


async def relay_start(
    door: Door, caller: Caller, tool: str, arguments: dict[str, Any], node_id: str
) -> dict[str, Any]:
    """Another node's answer to ``tool`` (a start: it names no session) called with ``arguments``."""
    body = json.dumps(arguments)
    act = Act(None, MCP, tool, body, caller.label(), VIA)
    name = door.forwarder.name(node_id) if door.forwarder is not None else node_id
    return await _answer(door, node_id, name, act)


async def _answer(door: Door, owner: str, node: str, act: Act) -> dict[str, Any]:
    reply = await remote.forward(door.forwarder, owner, act)
    answer: dict[str, Any] = json.loads(reply.body)  # an object: the forwarder checked it
    if reply.status != 200:
        said = answer.get("error")
        extra = {name: value for name, value in answer.items() if name not in OWN_WORDS}
        raise Relayed(str(said or f"{node} answered {reply.status}"), status=reply.status, **extra)
    return answer


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
    (:mod:`roost.actions.sessions`), and what the config allows an agent."""

    door: Door
    allow_always: bool = False
    """Whether a caller may answer ``allow_always`` (``[mcp] allow_always``): a person's answer."""
    lift_budgets: bool = False
    """Whether a caller may lift a budget (``[mcp] lift_budgets``): a person's decision to spend."""


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
    own = args.policy if caller.through is not None and args.policy else granted(door, caller)
    policy = child_policy(args.policy, own)
    node_id = roster.node_id
    if args.node is not None:
        node_id = node_named(door.forwarder, roster.node_id, roster.node, args.node)
    if node_id != roster.node_id:
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
    policy = stricter(source, granted(context.door, caller)) if found.headless else None
    forked = await forking.fork(
        context.door,
        found,
        args.new_name,
        worktree=args.worktree,
        branch=args.branch,
        policy=policy,
        parent=caller.session,
    )
    return records.answer(forked)


async def send(context: Context, caller: Caller, args: inputs.Send) -> dict[str, Any]:
    found = _found(context, args.name)
    if found.owner is not None:
        return await relay(context.door, caller, "session.send", args, found)
    if found.headless:
        return await to_headless(context.door, found, args)
    return await to_pane(context.door, found, args)


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


async def budget_list(context: Context, caller: Caller, args: inputs.Nothing) -> dict[str, Any]:
    return budgets.view(context.door)


async def budget_lift(context: Context, caller: Caller, args: inputs.Budget) -> dict[str, Any]:
    return budgets.lift(context.door, args.scope, args.target, allowed=context.lift_budgets)


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
            "(its last turn's final message), name, harness, lane, plan, usage, what its turns "
            "used and cost (`spend`) and the budget it is near or over (`budget`).",
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
        Tool(
            "budget.list",
            "This node's budgets (a session's, a folder's per UTC day, the swarm's day): each one's "
            "limit, what its scope has spent on every node, and its state (warning, exceeded, lifted). "
            "A session's own spend and budget are in its record (`spend`, `budget`).",
            inputs.Nothing,
            budget_list,
            read_only=True,
        ),
        Tool(
            "budget.lift",
            "Lift a budget that holds sessions (scope session, folder or day, and the session or "
            "folder it is about) until its period ends. A person's decision: refused (`lift_off`) "
            "unless rosterd's config turns it on for MCP.",
            inputs.Budget,
            budget_lift,
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
    The MCP server's calls and the calls another node forwards (:func:`dispatcher`)
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


def dispatcher(context: Context) -> Dispatch:
    """Forwarded tool calls, run by this node's tools through a door of its own sessions only."""
    own = dataclasses.replace(context, door=dataclasses.replace(context.door, forwarder=None))

    async def dispatch(act: Act, came: Through, _request: Request) -> Reply:
        tool = TOOLS.get(act.verb)
        if tool is None:
            return _reply(failure(TargetGone(f"no tool {act.verb!r} on this node", code="no_such_verb")))
        try:
            arguments = json.loads(act.body)
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            return _reply(failure(UsageError("a tool's arguments are a JSON object", field="arguments")))
        result, refused = await call(own, tool, Caller(by=came.by, through=came.node), arguments)
        return _reply(result) if refused else Reply(200, json.dumps(result).encode())

    return dispatch


def _reply(refusal: dict[str, object]) -> Reply:
    status = refusal.get("status")
    return Reply(status if isinstance(status, int) else 500, json.dumps(refusal).encode())
