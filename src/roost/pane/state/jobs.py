"""Which process group holds a pane's terminal, read from /proc without a tmux call.

When an agent is marked busy roost notes the foreground job of the pane's terminal; the
agent has died when no process of that job is left, even if the pane and shell live on.
"""

from __future__ import annotations

from roost.base import procfs

TYPE_CHECKING = False  # as in roost.base.paths: the hook and roost's verbs import this; typing costs ~2 ms
if TYPE_CHECKING:
    from collections.abc import Iterator


def foreground_job(pane_pid: int) -> int | None:
    """The process group in the foreground of the terminal ``pane_pid`` controls."""
    stat = procfs.stat(pane_pid)
    return stat.tpgid if stat is not None and stat.tpgid > 0 else None


def _members(pgid: int) -> Iterator[procfs.Stat]:
    """The live processes of process group ``pgid``, read one at a time so a caller that needs
    only the first stops there; raises ``OSError`` when /proc cannot be listed."""
    for pid in procfs.pids():
        stat = procfs.stat(pid)
        if stat is not None and stat.pgrp == pgid and not stat.gone:
            yield stat


def job_alive(pgid: int) -> bool:
    """True while any process of process group ``pgid`` is still running."""
    try:
        return next(_members(pgid), None) is not None
    except OSError:
        return True


def job_commands(pgid: int) -> list[str]:
    """The command names of the live processes in process group ``pgid``.

    A pane started as ``sh -c CMD`` shows ``sh`` as its command while CMD runs under it; the
    group's members tell that apart from a shell sitting alone at its prompt.
    """
    return [stat.name.decode(errors="replace").strip() for stat in _members(pgid)]
