"""``rosterd completion bash|zsh|fish``: the shell's completion script; ``rosterd __complete``:
the candidates it asks for on each Tab (verbs, flags, agents' names, and the keys and names of
the sessions the daemon knows, when one answers within a moment)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from roost.base.errors import RoostError, UsageError
from roost.faces.cli import completion

USAGE = (("completion bash|zsh|fish", "print the shell's completion script (set-up installs it)"),)
ASK = 0.5
"""Seconds a Tab waits for the daemon's session list; past it, no keys are offered."""


def _keys() -> Iterable[str]:
    """Each live session's key and name, as the daemon lists them."""
    import json

    from roost.faces.cli.daemonclient import Client

    try:
        with Client(timeout=ASK) as client:
            listed = json.loads(client.get("/snapshot"))
    except (RoostError, OSError, ValueError):
        return []
    live = [r for r in listed.get("records", []) if r.get("liveness") != "ended"]
    return [str(r[field]) for r in live for field in ("session_key", "name") if r.get(field)]


def _harnesses() -> Iterable[str]:
    from roost.agents import manifest

    return manifest.names()


def program() -> completion.Program:
    from roost.faces.cli.rosterd.helptext import rows

    usages: dict[str, str] = {}
    for usage, _ in rows():
        verb = [*usage.split(), ""][1]
        usages[verb] = f"{usages.get(verb, '')} {usage}".strip()
    return completion.Program("rosterd", list(usages), usages.get, lambda: (), _keys, _harnesses)


def run(verb: str, args: list[str]) -> int:
    if verb == "__complete":
        found = completion.answer(program(), args)
        sys.stdout.write("".join(f"{name}\n" for name in found))
        return 0
    if len(args) != 1 or args[0] not in completion.SHELLS:
        raise UsageError(f"usage: rosterd {USAGE[0][0]}")
    sys.stdout.write(completion.script("rosterd", args[0]))
    return 0
