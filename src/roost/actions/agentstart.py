"""What a pane's agent was started with, read from its process for the layout record
(:mod:`roost.pane.state.layout`): its command line, the environment variables its manifest names
(``resume_env``) and its working directory. ``roost restore`` starts the resumed agent with them.

The agent is the outermost process of the pane's tree that is one of the manifest's binaries,
run directly (a native CLI) or as the script an interpreter runs (a node CLI's ``node
…/bin/codex``): its program is recorded as it was started, so a restore runs the same install.
"""

from __future__ import annotations

import os

from roost.agents import manifest
from roost.base import procfs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.agents.model import Manifest


def describe(harness: str, pane_pid: int) -> dict:
    """``argv``, ``env`` and ``cwd`` of the pane's agent; empty when it is not found (its shell
    is back, or the harness has no manifest): the record keeps what the hook said."""
    try:
        found = manifest.load(harness)
    except (LookupError, ValueError, OSError):
        return {}
    process = _agent_process(found, pane_pid) if found is not None else None
    if found is None or process is None:
        return {}
    pid, argv = process
    environ = _environ(pid)
    agent: dict = {"argv": argv, "env": {name: environ[name] for name in found.resume_env if name in environ}}
    try:
        agent["cwd"] = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return agent  # gone since it was found: the directory the hook said stands
    return agent


def _agent_process(found: Manifest, root: int) -> tuple[int, list[str]] | None:
    """The agent's pid and its command line with the program first, breadth first from
    ``root``; None when no process of the tree is the agent."""
    children: dict[int, list[int]] = {}
    try:
        every = procfs.pids()
    except OSError:
        return None
    for pid in every:
        stat = procfs.stat(pid)
        if stat is not None:
            children.setdefault(stat.ppid, []).append(pid)
    queue = [root]
    while queue:
        pid = queue.pop(0)
        argv = procfs.cmdline(pid)
        for at in (0, 1):
            if len(argv) > at and found.matches(os.path.basename(argv[at])):
                return pid, argv[at:]
        queue.extend(sorted(children.get(pid, ())))
    return None


def _environ(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            raw = file.read()
    except OSError:
        return {}
    pairs = (item.decode(errors="replace").partition("=") for item in raw.split(b"\0") if item)
    return {name: value for name, _, value in pairs}
