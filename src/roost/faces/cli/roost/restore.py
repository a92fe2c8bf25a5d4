"""``roost restore [--dry-run] [--json]``: bring back the sessions, windows, panes and agents of
roost's tmux server after it is gone (a reboot, a crash), from the layout record
(:mod:`roost.pane.state.layout`); ``roost _layout``: rewrite that record (tmux runs it as the
layout changes).

Exit 0: what the record holds was restored, or there was nothing left to make (a session that
runs now, a record restored before): the report says, pane by pane, what was and was not made
and why. Exit 1: a malformed call, no record, a record that is not usable (nothing is made), a
record whose server still runs, or tmux refused.
"""

from __future__ import annotations

import os
import sys

from roost.base.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

    from roost.pane.tmux.server import Server

USAGE = "usage: roost restore [--dry-run] [--json]"


def run(verb: str, args: list[str]) -> int:
    from roost.pane.tmux.server import Server

    server = Server.from_env()
    if verb == "_layout":
        from roost.actions.agentstart import describe
        from roost.pane.state import layout

        layout.snapshot(server.socket, describe)
        return 0
    unknown = [arg for arg in args if arg not in ("--dry-run", "--json")]
    if unknown:
        raise UsageError(f"{USAGE} (unknown {unknown[0]})")
    return restore(server, dry_run="--dry-run" in args, as_json="--json" in args)


def restore(server: Server, *, dry_run: bool, as_json: bool, report: TextIO | None = None) -> int:
    """Restore (or with ``dry_run`` plan) and print the report: a ``--json`` document, or lines
    for people on stdout (``report`` moves them: bare ``roost`` writes them to stderr)."""
    from roost.actions import restore as restoring
    from roost.pane.state import layout

    held = None if dry_run else layout.Locked(server.socket)
    try:
        plan = restoring.plan(server)
        if not dry_run:
            restoring.apply(server, plan, os.environ)
    finally:
        if held is not None:
            held.release()
    panes = [step.document() for step in plan.steps]
    if as_json:
        from roost.faces.cli.output import document

        document(
            "restore",
            socket=server.socket,
            dry_run=dry_run,
            record=plan.path,
            restored=sum(pane["restored"] for pane in panes),
            panes=panes,
        )
        return 0
    _print(panes, dry_run, report or sys.stdout)
    return 0


def _print(panes: list[dict], dry_run: bool, report: TextIO) -> None:
    from roost.base.text import shown

    def line(text: str) -> None:
        report.write(shown(text, lines=True) + "\n")
        report.flush()

    for pane in panes:
        where = f"{pane['session']}:{pane['window']}.{pane['pane']}"
        label = pane["name"] or pane["window_name"]
        if pane["reason"]:
            line(f"not restored {where} ({label}): {pane['reason']}")
            continue
        what = pane["command"] or "a shell"
        verb = "would restore" if dry_run else f"restored {pane['pane_id']} as"
        line(f"{verb} {where} ({label}): {what} in {pane['cwd'] or 'the default directory'}")
        if pane["note"]:
            line(f"  note: {pane['note']}")
