"""What ``list``, ``watch`` and ``changes`` read and print with ``--swarm`` or ``--node N``.

``--swarm`` reads the union roster (``/swarm/snapshot``, ``/swarm/events``,
``/swarm/changes``); ``--node N`` the same routes with ``?node=N``, one node's part of it. The
table gains one header line per node, its counts and how it stands (``stale 41s`` for a node
served from its last frame), as the specification's ``list --swarm`` shows; each session of
such a node says ``stale`` and its age at the end of its row, and a terminal draws the row
faint, as the web app dims it. ``list --node N`` for an unreachable N prints its last frame and
exits 0, as ``list --swarm`` does (the specification serves a stale peer "from its last
snapshot, dimmed, with its age"), and says on stderr how old the rows are: a script that needs
N now reads each row's ``peer_state``.
"""

from __future__ import annotations

from urllib.parse import quote

from roost.base.errors import UsageError
from roost.base.text import shown
from roost.faces.cli.rosterd import printing

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

    from roost.faces.cli.rosterd.options import Parsed

FLAGS = ("--swarm",)
VALUED = ("--node",)
COUNTED = ("working", "needs input", "done", "idle", "error", "unknown", "suspended", "stale", "ended")
"""The words a node's header line counts (:func:`roost.faces.cli.rosterd.printing.state`'s), in this order."""


def route(options: Parsed, local: str, swarm: str, usage: str) -> tuple[str, str | None]:
    """``(path, node)``: the local route, or the swarm's (narrowed by ``?node=`` when named)."""
    node = options.values.get("--node")
    if node == "" or (node is not None and "--swarm" in options.flags):
        raise UsageError(usage)
    if node is not None:
        return f"{swarm}?node={quote(node, safe='')}", node
    return (swarm if "--swarm" in options.flags else local), None


def joined(path: str, query: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}{query}"


def _counts(records: list[dict[str, Any]]) -> str:
    said = [printing.state(record) for record in records]
    return "  ".join(f"{said.count(word)} {word}" for word in COUNTED if word in said)


def standing(row: dict[str, Any]) -> str:
    if row.get("peer_state") == "unreachable":
        return f"stale {printing.age((row.get('peer_age_ms') or 0) / 1000)}"
    return "reachable"


def table(union: dict[str, Any], now: float | None = None) -> list[tuple[str, bool]]:
    """One header line per node, a blank line, then one row per session (with its node):
    each line with whether it is a session of a node served stale (drawn faint)."""
    records = union.get("records", [])
    by_node: dict[object, list[dict[str, Any]]] = {}
    for record in records:  # once, not once a node: 50,000 rows of 1,000 nodes took 8 s so
        by_node.setdefault(record.get("node_id"), []).append(record)
    heads = [
        [shown(str(row.get("node"))), _counts(by_node.get(row.get("node_id"), [])), standing(row)]
        for row in union.get("nodes", [])
    ]
    rows = printing.roster(union, now)
    faint = [printing.stale(record) for record in records]
    return [
        *((text, False) for text in printing.columns(heads)),
        *([("", False)] if rows else []),
        *zip(rows, faint, strict=True),
    ]


def stale(union: dict[str, Any]) -> str | None:
    """What to say when a node asked for by name is served from its last frame."""
    for row in union.get("nodes", []):
        if row.get("peer_state") == "unreachable":
            return (
                f"{row.get('node')} is unreachable: its sessions as last heard "
                f"{printing.age((row.get('peer_age_ms') or 0) / 1000)} ago"
            )
    return None


def describe(change: dict[str, Any]) -> str:
    """One line per swarm change: ``seq event node …``."""
    seq, event, node = change.get("seq"), change.get("event"), change.get("node")
    record = change.get("record")
    if record is not None:
        key = record.get("session_key")
        return f"{seq} {event} {node} {key} {printing.label(record)} {printing.state(record)}"
    if event == "node":
        return f"{seq} node {node} {standing(change)}"
    if event == "node_left":
        return f"{seq} node_left {node} {change.get('reason')}"
    snapshot = change.get("snapshot") or {}
    return (
        f"{seq} {event} {len(snapshot.get('records', []))} sessions on {len(snapshot.get('nodes', []))} nodes"
    )
