"""``roost completion bash|zsh|fish``: the shell's completion script; ``roost __complete``: the
candidates it asks for on each Tab (verbs, flags, and the live panes, windows and pane names
of roost's tmux server). Set-up installs the scripts (``scripts/link-commands``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from roost.base.errors import UsageError
from roost.faces.cli import completion

USAGE = "usage: roost completion bash|zsh|fish"
PANES = "#{pane_id}\t#{session_name}\t#{window_name}\t#{@roost-name}"


def _targets() -> Iterable[str]:
    """Every way a TARGET names a live pane: ``%N``, a window's name, ``SESSION:WINDOW``, a
    pane's own name; none when no server runs."""
    from roost.pane.tmux.server import Server

    listed = Server.from_env().run("list-panes", "-a", "-F", PANES, check=False)
    for line in listed.stdout.decode(errors="replace").splitlines():
        pane, session, window, name = [*line.split("\t"), "", "", ""][:4]
        yield from (pane, window, f"{session}:{window}", name)


def _harnesses() -> Iterable[str]:
    from roost.agents import manifest

    return manifest.names()


def program() -> completion.Program:
    from roost.faces.cli.roost.helptext import VERBS

    rows = {(usage.split() or ["attach"])[0]: usage for usage, _ in VERBS}

    def usage(verb: str) -> str | None:
        """The verb's help row and its module's own usage line, which may name more flags."""
        import importlib

        from roost.faces.cli.roost import VERBS as MODULES

        if verb not in rows:
            return None
        own = getattr(importlib.import_module(f"roost.faces.cli.roost.{MODULES[verb]}"), "USAGE", "")
        mine = isinstance(own, str) and own.startswith(f"usage: roost {verb}")
        return f"{rows[verb]} {own}" if mine else rows[verb]

    return completion.Program("roost", list(rows), usage, _targets, lambda: (), _harnesses)


def run(verb: str, args: list[str]) -> int:
    if verb == "__complete":
        found = completion.answer(program(), args)
        sys.stdout.write("".join(f"{name}\n" for name in found))
        return 0
    if len(args) != 1 or args[0] not in completion.SHELLS:
        raise UsageError(USAGE)
    sys.stdout.write(completion.script("roost", args[0]))
    return 0
