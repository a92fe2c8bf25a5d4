"""``rosterd fork KEY NAME [--worktree [--branch B]] [--json]``: a new session from a session's
conversation, whatever its lane.

One request to the daemon (``POST /sessions/{key}/fork``): a headless session is forked by its
ACP adapter (``session/fork``) on a holder of its own, a pane's agent by its CLI in a new window
beside it (as ``roost fork`` does); the source is left as it was. With ``--worktree`` the fork
runs in a new git worktree and branch of the source's repository. ``--json`` prints the
daemon's answer as sent. Every refusal exits 1 and starts nothing: no conversation yet
(``no_conversation``), an agent or adapter that cannot fork (``cannot_fork``), a NAME a session
has (``name_taken``), ``--worktree`` outside a git repository.
"""

from __future__ import annotations

import json

from roost.base.errors import UsageError
from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (
    (
        "fork KEY NAME [--worktree [--branch B]]",
        "a new session from KEY's conversation, in a git worktree of its own when asked",
    ),
)
SYNTAX = "usage: rosterd fork KEY NAME [--worktree [--branch B]] [--json]"
TIMEOUT = 120.0
"""Seconds a fork may take: a headless one starts an adapter, which reads the conversation."""


def run(verb: str, args: list[str]) -> int:
    options = parse(args, SYNTAX, flags=("--worktree", "--json"), valued=("--branch",), positional=2)
    key, name = options.positional
    body: dict = {"name": name, "worktree": "--worktree" in options.flags}
    if "--branch" in options.values:
        if not body["worktree"]:
            raise UsageError(f"{SYNTAX} (--branch goes with --worktree)")
        body["branch"] = options.values["--branch"]
    with Client(timeout=TIMEOUT) as client:
        sent = client.post(path_of("sessions", key, "fork"), body)
    if "--json" in options.flags:
        printing.raw(sent)
        return 0
    answer = json.loads(sent)
    record = answer.get("record") or {}
    where = record.get("session_key") or f"pane {answer.get('pane')}"
    place = f" in {answer['worktree']} (branch {answer['branch']})" if answer.get("worktree") else ""
    printing.line(f"{answer.get('source')}: forked as {answer.get('name')}, {where}{place}")
    return 0
