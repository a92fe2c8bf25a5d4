"""``rosterd invite | join | revoke | leave | nodes``: this node's membership of a swarm.

Each verb is one call to the daemon's ``/swarm/*`` operator routes (the daemon is the only
writer of ``swarm.json``), and ``--json`` prints the daemon's answer as sent. A refusal keeps
its class from the one failure table, and the exit code is one of the specification's four:
a token refused (``PeerRefused``, exit 1, with its ``code``), no such member (1: a node id
mistyped is the caller's to fix), no daemon (2), an admitter that does not answer
(``PeerUnreachable``, 3). ``join`` reads its token before asking the daemon, so a token that
is not one is refused with nothing sent.
"""

from __future__ import annotations

import json
import time

from roost.base.errors import PEER_UNREACHABLE, PeerRefused, PeerUnreachable, UsageError
from roost.base.text import shown
from roost.faces.cli.daemonclient import Client, Refused
from roost.faces.cli.output import complain
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (
    ("invite [--ttl MINUTES] [--json]", "a single-use token another machine joins with (60 minutes)"),
    ("join ADDRESS --token T [--json]", "join the swarm of an invite, admitted by the node at ADDRESS"),
    (
        "revoke NODE_ID [--admitted] [--json]",
        "take a member out of the swarm for good (with --admitted, every node it admitted too); "
        "every member hears at once",
    ),
    ("leave [--json]", "revoke this node, tell the members, forget the swarm"),
    ("nodes [--json]", "this node's swarm: every member, reachable or not"),
)
_USAGES = {
    "invite": "usage: rosterd invite [--ttl MINUTES] [--json]",
    "join": "usage: rosterd join ADDRESS --token T [--json]",
    "revoke": "usage: rosterd revoke NODE_ID [--admitted] [--json]",
    "leave": "usage: rosterd leave [--json]",
    "nodes": "usage: rosterd nodes [--json]",
}


def _call(path: str, body: object = None) -> bytes:
    """The daemon's answer; its refusal raised as the failure the table names for it."""
    try:
        with Client(timeout=60.0) as client:
            return client.get(path) if body is None else client.post(path, body)
    except Refused as refused:
        if refused.status == 401:
            said = (refused.doc or {}).get("error") or refused.message
            raise PeerRefused(str(said), code=refused.code) from None
        if refused.code == PEER_UNREACHABLE:
            raise PeerUnreachable(refused.message, code=refused.code) from None
        raise


def _ttl(text: str | None) -> int:
    if text is None:
        return 60
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 7 * 24 * 60:
        raise UsageError(f"usage: rosterd invite --ttl MINUTES: 1 to {7 * 24 * 60} minutes, not {text!r}")
    return int(text)


def run(verb: str, args: list[str]) -> int:
    usage = _USAGES[verb]
    positional = {"join": 1, "revoke": 1}.get(verb, 0)
    valued = {"invite": ("--ttl",), "join": ("--token",)}.get(verb, ())
    flags = ("--json", "--admitted") if verb == "revoke" else ("--json",)
    options = parse(args, usage, flags=flags, valued=valued, positional=positional)
    if verb == "invite":
        body = _call("/swarm/invite", {"ttl_minutes": _ttl(options.values.get("--ttl"))})
    elif verb == "join":
        token = options.values.get("--token")
        if not token:
            raise UsageError(usage)
        from roost.remote.swarm import invites

        invites.read(token)  # a token that is not one goes no further than this machine
        body = _call("/swarm/join", {"address": options.positional[0], "token": token})
    elif verb == "revoke":
        admitted = "--admitted" in options.flags
        body = _call("/swarm/revoke", {"node_id": options.positional[0], "admitted": admitted})
    elif verb == "leave":
        body = _call("/swarm/leave", {})
    else:
        body = _call("/swarm/nodes")
    if "--json" in options.flags:
        printing.raw(body)
        return 0
    answer = json.loads(body)
    if verb == "invite":
        _invited(answer)
    else:
        if verb == "leave":
            printing.line(f"left swarm {answer.get('left')}")
        _nodes(answer)
    return 0


def _invited(answer: dict) -> None:
    """The token alone on stdout (for a script or a copy), what to do with it on stderr."""
    expires = time.strftime("%H:%M", time.localtime(answer["expires_at"]))
    made = "made swarm " + answer["swarm_id"] + "; " if answer.get("created") else ""
    printing.line(answer["token"])
    complain(
        f"rosterd invite: {made}admits one node, until {expires}; on the other machine:\n"
        f"  rosterd join {answer['address']} --token TOKEN\n"
    )


def _state(node: dict) -> str:
    if node.get("self"):
        return "this node, revoked" if node.get("revoked_by") else "this node"
    if node.get("left"):
        return "left"
    if node.get("revoked"):
        return "revoked"
    state = "reachable" if node.get("reachable") else "unreachable"
    return state + (", admitted by a revoked node" if node.get("admitted_by_revoked") else "")


def _nodes(answer: dict) -> None:
    swarm = answer.get("swarm_id")
    listen = answer.get("listen") or f"off ({answer.get('listen_off')})"
    printing.line(
        f"node {answer.get('node_id')} ({answer.get('name')}); "
        f"{'swarm ' + swarm if swarm else 'in no swarm'}; listener {listen}; "
        f"discovery {answer.get('discovery')}"
    )
    gone = answer.get("revoked")
    if isinstance(gone, dict):
        printing.line(
            f"this node was revoked by {gone.get('by')}: it acts as no member; "
            "`rosterd leave` forgets the swarm"
        )
    rows = [["NODE", "NAME", "ADDRESS", "STATE", "SEEN"]]
    now = time.time()
    for node in answer.get("nodes") or []:
        seen = node.get("answered_at_ms")
        rows.append(
            [
                str(node.get("node_id")),
                str(node.get("name")),
                str(node.get("address")),
                _state(node),
                printing.age(now - seen / 1000) + " ago" if isinstance(seen, int) else "-",
            ]
        )
    if len(rows) > 1:
        for text in printing.columns([[shown(cell) for cell in row] for row in rows]):
            printing.line(text)
