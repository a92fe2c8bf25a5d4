"""Which process group holds a pane's terminal, read from /proc without a tmux call.

When an agent is marked busy roost notes the foreground job of the pane's terminal; the
agent has died when no process of that job is left, even if the pane and shell live on.
"""

from __future__ import annotations

import os


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    # The command name may contain spaces and parentheses; fields resume after the last ')'.
    return raw[raw.rfind(")") + 2 :].split()


def foreground_job(pane_pid: int) -> int | None:
    """The process group in the foreground of the terminal ``pane_pid`` controls."""
    fields = _stat(pane_pid)
    if not fields:
        return None
    tpgid = int(fields[5])
    return tpgid if tpgid > 0 else None


def job_alive(pgid: int) -> bool:
    """True while any process of process group ``pgid`` is still running."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        fields = _stat(int(entry))
        if fields and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def job_commands(pgid: int) -> list[str]:
    """The command names of the live processes in process group ``pgid``.

    A pane started as ``sh -c CMD`` shows ``sh`` as its command while CMD runs under it; the
    group's members tell that apart from a shell sitting alone at its prompt.
    """
    names = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat(int(entry))
        if not fields or fields[2] != str(pgid) or fields[0] == "Z":
            continue
        try:
            with open(f"/proc/{entry}/comm", "rb") as f:
                names.append(f.read().decode(errors="replace").strip())
        except OSError:
            continue
    return names
