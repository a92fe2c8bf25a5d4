"""Which agent a process is: its binary, the script an interpreter runs, or its own word.

Agents are often not their own binary: a node, bun or deno script, a Python entry point, a
``sh -c`` line, or any program a user wraps. So a process is recognised by, in order:

1. ``ROOST_AGENT=<name>`` in its environment, the escape hatch for wrapped agents;
2. its own name (the kernel's ``comm``, or ``argv[0]``'s base name);
3. for an interpreter, the script it runs; for a shell with ``-c``, the command it runs.

Names come from the agent manifests (binaries and aliases), never from this code.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from roost.agents.model import Manifest

ENV = "ROOST_AGENT"
_INTERPRETERS = re.compile(r"(node|nodejs|bun|deno|python[0-9.]*|pypy[0-9.]*)")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish"})
# Subcommands an interpreter takes before the script it runs (deno run x.ts, bun run x).
_SUBCOMMANDS = frozenset({"run", "x", "exec"})
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".sh")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
# Words in front of the real command in a shell line: they run what follows.
_PREFIXES = frozenset({"exec", "env", "command", "nohup", "time"})


class Names:
    """Every binary and alias the manifests know, mapped to the agent's name."""

    def __init__(self, manifests: Iterable[Manifest]) -> None:
        self._by_binary: dict[str, str] = {}
        self._agents: set[str] = set()
        for manifest in manifests:
            self._agents.add(manifest.name)
            for binary in (*manifest.binaries, *manifest.aliases):
                self._by_binary.setdefault(binary, manifest.name)

    def agent(self, name: str) -> str | None:
        """The agent a binary name belongs to, or None."""
        return self._by_binary.get(name)

    def known(self, agent: str) -> bool:
        return agent in self._agents


def _base(word: str) -> str:
    return os.path.basename(word)


def _strip_suffix(name: str) -> str:
    for suffix in _SCRIPT_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _script(argv: Sequence[str]) -> str | None:
    """The script an interpreter command line runs (``-m module`` counts), without its suffix."""
    args = iter(argv[1:])
    for arg in args:
        if arg == "-m":
            module = next(args, None)
            return module.split(".")[0] if module else None
        if arg in ("-c", "-e", "--eval"):
            return None  # inline code: nothing names the program
        if arg.startswith("-") or arg in _SUBCOMMANDS:
            continue
        return _strip_suffix(_base(arg))
    return None


def _shell_command(argv: Sequence[str]) -> str | None:
    """The command a ``sh -c LINE`` runs: the first word that is not an assignment or prefix."""
    try:
        line = argv[argv.index("-c") + 1]
        words = shlex.split(line)
    except (ValueError, IndexError):
        return None
    for word in words:
        if _ASSIGNMENT.fullmatch(word) or word in _PREFIXES or word.startswith("-"):
            continue
        return _base(word)
    return None


def by_command(names: Names, name: str, argv: Sequence[str]) -> str | None:
    """The agent a process is by what it runs: its own name, or what its interpreter or shell runs."""
    candidates = [name]
    if argv:
        candidates.append(_base(argv[0]))
    for candidate in candidates:
        found = names.agent(candidate)
        if found:
            return found
    program = _base(argv[0]) if argv else name
    if _INTERPRETERS.fullmatch(program) or _INTERPRETERS.fullmatch(name):
        script = _script(argv)
        return names.agent(script) if script else None
    if (program in SHELLS or name in SHELLS) and "-c" in argv:
        command = _shell_command(argv)
        return names.agent(command) if command else None
    return None


def by_environment(names: Names, environ: Mapping[str, str]) -> str | None:
    """The agent a process declares itself to be with ``ROOST_AGENT``, when the name is known."""
    declared = environ.get(ENV)
    return declared if declared and names.known(declared) else None
