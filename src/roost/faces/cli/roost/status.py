"""``roost status [--json]``: every session and pane on the server, with its badge.

It costs one tmux invocation however many panes there are: ``list-sessions``,
``list-clients`` and ``list-panes -a`` are chained in a single call and each line says which
listing it is from. ``attached_clients`` counts people: a terminal attached to the session or a
web app viewing one of its panes, never the daemon's own watcher (``roost.pane.tmux.panes.people``).
A pane whose command exited soon after it started is kept, dead (:mod:`roost.pane.state.newpane`):
``dead``, ``exit_status`` and ``exit_signal`` say how it ended, and its badge is left as it was.
``spend`` and ``budget`` are what rosterd last counted of the pane's session and the budget it
is near or over, as the daemon wrote them on the pane (null where it counted nothing): read
from the pane like the badge, so they are there while no daemon runs.
"""

from __future__ import annotations

from roost.base.errors import UsageError
from roost.faces.cli import output
from roost.faces.cli.output import document
from roost.pane.state import words as w
from roost.pane.tmux.panes import CLIENTS_FORMAT, people
from roost.pane.tmux.server import SEP, THEN, Server, fields

_SESSION = ("#{session_name}", "#{session_windows}")
_PANE = (
    "#{pane_id}",
    "#{session_name}",
    "#{window_id}",
    "#{window_index}",
    "#{window_name}",
    "#{pane_index}",
    "#{pane_current_command}",
    *(f"#{{{name}}}" for name in (w.NAME, w.STATE, w.SINCE, w.SESSION_ID, w.CWD, w.HARNESS, w.TRANSCRIPT)),
    *(f"#{{{name}}}" for name in (w.WORKTREE, w.BRANCH)),
    "#{pane_dead}",
    "#{pane_dead_status}",
    "#{pane_dead_signal}",
    f"#{{{w.SPEND}}}",
    f"#{{{w.BUDGET}}}",
)


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def _listing(server: Server) -> tuple[bool, list[dict], list[dict]]:
    """``(running, sessions, panes)`` from one tmux call; a failed call means no server."""
    try:
        proc = server.run(
            "list-sessions",
            "-F",
            SEP.join(("s", *_SESSION)),
            THEN,
            "list-clients",
            "-F",
            SEP.join(("c", CLIENTS_FORMAT)),
            THEN,
            "list-panes",
            "-a",
            "-F",
            SEP.join(("p", *_PANE)),
            check=False,
        )
    except OSError:  # no tmux at all: no server either
        return False, [], []
    if proc.returncode != 0:
        return False, [], []
    sessions, panes, clients = [], [], []
    for line in proc.stdout.decode(errors="replace").splitlines():
        if line.startswith("s" + SEP):
            name, windows = fields(line, 3)[1:3]
            sessions.append({"name": name, "windows": _int(windows), "attached_clients": 0})
        elif line.startswith("c" + SEP):
            clients.append(line[2:])
        elif line.startswith("p" + SEP):
            panes.append(_pane(fields(line, len(_PANE) + 1)[1:]))
    looking = people(clients)
    for session in sessions:
        session["attached_clients"] = looking.get(session["name"], 0)
    return True, sessions, panes


def _pane(values: list[str]) -> dict:
    pane_id, session, window_id, window_index, window_name, pane_index, command = values[:7]
    name, state, since, session_id, cwd, harness, transcript = (v or None for v in values[7:14])
    worktree, branch = (v or None for v in values[14:16])
    dead, status, signal = values[16:19]
    spend, budget = (_json(v) for v in values[19:21])
    return {
        "id": pane_id,
        "session": session,
        "window_id": window_id,
        "window_index": _int(window_index),
        "window_name": window_name,
        "pane_index": _int(pane_index),
        "name": name,
        "command": command,
        "state": state,
        "since": w.to_int(since),
        "session_id": session_id,
        "cwd": cwd,
        "harness": harness,
        "transcript": transcript,
        "worktree": worktree,
        "branch": branch,
        "dead": dead == "1",
        "exit_status": w.to_int(status) if dead == "1" else None,
        "exit_signal": w.to_int(signal) if dead == "1" else None,
        "spend": spend,
        "budget": budget,
    }


def _json(value: str) -> dict | None:
    """A pane option the daemon wrote as JSON; None when it wrote none (or a hand edit broke it)."""
    if not value:
        return None
    import json

    try:
        found = json.loads(value)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _spent(p: dict) -> str:
    """What the pane's session cost, for the table: its known cost, and whether a budget holds it."""
    spend, budget = p["spend"] or {}, p["budget"] or {}
    cost = ", ".join(f"{amount:.2f} {currency}" for currency, amount in (spend.get("cost") or {}).items())
    if spend.get("unpriced"):
        cost = f"{cost} + unknown" if cost else "cost unknown"
    held = {"exceeded": "  over budget", "warning": "  near budget"}.get(budget.get("state"), "")
    return (f"  {cost}" if cost else "") + held


def _ended(p: dict) -> str:
    """How a dead pane's program ended, for the table: the pane stays until someone closes it."""
    if not p["dead"]:
        return ""
    if p["exit_signal"] is not None:
        return f"  killed by signal {p['exit_signal']}"
    if p["exit_status"] is not None:
        return f"  exited with status {p['exit_status']}"
    return "  exited"


def _table(server: Server, running: bool, sessions: list[dict], panes: list[dict]) -> None:
    """The same facts for a person: one line per pane, its badge first and its state in the
    words every face uses (``needs input``, not the document's ``blocked``)."""
    if not running:
        output.line(f"no roost server is running on socket '{server.socket}'")
        return
    for s in sessions:
        looking = f", {s['attached_clients']} attached" if s["attached_clients"] else ""
        plural = "" if s["windows"] == 1 else "s"
        output.line(f"{s['name']}: {s['windows']} window{plural}{looking}")
        for p in (p for p in panes if p["session"] == s["name"]):
            badge = w.BADGES.get(p["state"] or "", "  ")
            where = f"{p['session']}:{p['window_index']}.{p['pane_index']}"
            label = p["name"] or p["window_name"]
            detail = f"  {w.human(p['state'])}" if p["state"] else ""
            harness = f"  [{p['harness']}]" if p["harness"] else ""
            tail = f"{detail}{harness}{_spent(p)}{_ended(p)}"
            output.line(f"  {badge} {p['id']:<5} {where:<10} {label}  ({p['command']}){tail}")


def run(verb: str, args: list[str]) -> int:
    if args not in ([], ["--json"]):
        raise UsageError("usage: roost status [--json]")
    server = Server.from_env()
    running, sessions, panes = _listing(server)
    if args:
        document(
            "status",
            running=running,
            socket=server.socket,
            socket_kind=server.kind,
            sessions=sessions,
            panes=panes,
        )
    else:
        _table(server, running, sessions, panes)
    return 0
