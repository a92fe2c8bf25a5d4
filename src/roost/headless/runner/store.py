"""What the runner must not forget about a headless session: one small file per session.

The roster is memory only and a holder's own state file lives in the runtime directory, which
a reboot empties; a suspended session has no holder at all. So the runner writes what it needs
to bring a session back (its harness session id, folder, name, policy, parent, its resume
history, and when it last said the session's activity itself) to
``${XDG_STATE_HOME}/roost/headless/<key>.json`` (0600, in a 0700 directory): the environment
given at start may hold a secret. A file that cannot be read is left where it is
and skipped, never guessed at.
"""

from __future__ import annotations

import contextlib
import json
import logging
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from roost.base import files, paths

log = logging.getLogger("rosterd")


@dataclass
class Entry:
    """One headless session as the runner keeps it between holders."""

    key: str
    harness: str
    cwd: str
    started_at: float
    policy: str = "attention"
    recap: bool = True
    name: str | None = None
    session_id: str | None = None
    holder: str | None = None
    """The key of the holder now keeping it (its socket's file name), None while suspended."""
    parent: str | None = None
    model: str | None = None
    effort: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    resumes: list[float] = field(default_factory=list)
    """When it was resumed, within the last hour: ``max_resumes_per_hour`` counts these."""
    crashes: list[float] = field(default_factory=list)
    """When its holder or harness crashed, within the last few minutes."""
    suspended: bool = False
    warning: str | None = None
    current_model: str | None = None
    """The model the adapter said it runs when last opened, so a rebuilt record can say it."""
    activity_at: float | None = None
    """When the runner last said the session's activity itself (opened, resumed, suspended): a
    rebuilt record's ``activity_at`` when the holder's replay tells of nothing later, or there
    is no holder."""
    holder_process: dict[str, Any] | None = None
    """The holder's :class:`~roost.truth.detect.procs.Stamp`, as the kernel named the process that
    answered on its socket: whom a restarted daemon may wait for, and stop."""
    adapter_process: dict[str, Any] | None = None
    """The adapter's stamp, taken while its holder was its parent: the one process a holder that
    died may have left that the runner ends (see :func:`roost.headless.runner.stamps.end_leftovers`)."""
    handing_to: str | None = None
    """The node a handoff is taking it to, from its suspend until the target answered: no
    resume while it is set (the session could come alive on both nodes). A daemon killed in
    between leaves it set; another ``handoff`` settles it (see :mod:`roost.actions.handoff`)."""
    arrived_from: str | None = None
    """Its key on the node it was handed off from, when it came by a handoff."""
    unconfirmed: bool = False
    """Taken in by a handoff, and the answer saying so not yet sent to the origin, which keeps
    its own copy until it hears it: a daemon that restarts with this set drops the session."""


def _file(key: str) -> Path:
    return paths.headless_dir() / f"{key.replace(':', '_')}.json"


def save(entry: Entry) -> None:
    directory = paths.headless_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    files.replace(_file(entry.key), json.dumps(asdict(entry), indent=1) + "\n")


def forget(key: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        _file(key).unlink()


def load_all() -> list[Entry]:
    """Every session the runner kept, oldest first; unreadable files are logged and skipped."""
    directory = paths.headless_dir()
    if not directory.is_dir():
        return []
    known = {f.name for f in fields(Entry)}
    out = []
    for path in sorted(directory.glob("*.json")):
        try:
            doc: Any = json.loads(path.read_text())
            out.append(Entry(**{k: v for k, v in doc.items() if k in known}))
        except (OSError, ValueError, TypeError) as error:
            log.warning("headless session file %s is unreadable and was skipped: %s", path.name, error)
    return sorted(out, key=lambda entry: entry.started_at)
