"""What both service managers share: the program a unit runs, the environment it carries, and
install, uninstall and status as one flow over a :class:`Manager`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from roost.base import files
from roost.base.errors import SetupError

CARRIED = (
    "PATH",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "ROOST_SOCKET",
    "ROSTERD_SOCKET",
    "ROOST_RECORD_DIR",
    "ROOST_EVENTS",
    "ROOST_EVENTS_KEEP",
)
"""The variables a unit carries from the environment it is installed from, when set there: PATH
(a service manager's own finds neither the agents nor their adapters) and every variable that
moves one of roost's places, so the service and the CLI that installed it agree on the config,
the state, the sockets and the tmux server. Nothing else is copied: no token or API key of the
shell's ends up in a unit file."""

TIMEOUT = 30
"""Seconds a service manager's command may take (a ``start`` waits for the daemon's exec)."""


class NotStarted(SetupError):
    """The unit is written, but no service manager answers to enable and start it: this
    machine (a container, CI) has none to use as it is, which is the person's to arrange."""


@dataclass(frozen=True)
class Status:
    """What ``rosterd service status`` says. ``enabled`` and ``active`` are None when the
    service manager cannot be asked, and ``detail`` then says why."""

    manager: str
    path: Path
    installed: bool
    current: bool
    enabled: bool | None
    active: bool | None
    detail: str | None

    def fields(self) -> dict[str, object]:
        """The ``--json`` fields, every one always present."""
        return {
            "manager": self.manager,
            "path": str(self.path),
            "installed": self.installed,
            "current": self.current,
            "enabled": self.enabled,
            "active": self.active,
            "detail": self.detail,
        }

    @property
    def running(self) -> bool:
        """Installed as this installation would write it, enabled and active."""
        return self.installed and self.current and bool(self.enabled) and bool(self.active)


class Manager(Protocol):
    """One platform's service manager and the file it reads."""

    kind: str
    """``systemd`` or ``launchd``."""
    path: Path
    """The file install writes."""

    def render(self) -> bytes:
        """What install writes there, for this installation and environment."""
        ...

    def companions(self) -> dict[Path, bytes | None]:
        """Other files install writes beside it (None: to be absent), each with roost's mark,
        which install, status and uninstall treat as they treat ``path``."""
        ...

    def ours(self, data: bytes) -> bool:
        """Whether ``data`` (what is at ``path``) was written by roost."""
        ...

    def unreachable(self) -> str | None:
        """Why the service manager cannot be asked, or None when it answers."""
        ...

    def state(self) -> tuple[bool, bool]:
        """Whether the service is enabled (starts at login) and active (running now)."""
        ...

    def start(self, changed: bool, enabled: bool, active: bool) -> list[str]:
        """Make the manager read the file, enable the service and start it (again, when the
        file ``changed`` under a running one); lines saying what it did."""
        ...

    def stop(self, reachable: bool) -> list[str]:
        """Stop and disable the service, as far as a manager that is not ``reachable`` allows."""
        ...

    def forget(self) -> list[str]:
        """Tell the manager the file is gone."""
        ...

    def by_hand(self) -> str:
        """The command that enables and starts the service, for a person to run later."""
        ...


def program() -> Path:
    """This installation's ``rosterd``: in the virtualenv's ``bin``, beside Python. Not resolved:
    a virtualenv's python is a link to the system's, and its ``rosterd`` is not there."""
    return Path(sys.executable).parent / "rosterd"


def carried(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The :data:`CARRIED` variables set (and not empty) in ``environ``, in that order."""
    source = os.environ if environ is None else environ
    return {name: source[name] for name in CARRIED if source.get(name)}


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    """A service manager's command; a program that cannot run answers like one that failed."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return subprocess.CompletedProcess(argv, 127, "", str(error))


def said(proc: subprocess.CompletedProcess[str]) -> str:
    """A failed command's own words: its last line of stderr (or stdout), else its status."""
    for stream in (proc.stderr, proc.stdout):
        lines = [line.strip() for line in stream.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return f"exit status {proc.returncode}"


def checked(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``proc``, or a :class:`SetupError` quoting the command and its words when it failed."""
    if proc.returncode != 0:
        raise SetupError(f"`{' '.join(proc.args)}` failed: {said(proc)}")
    return proc


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SetupError(f"cannot read {path}: {error.strerror or error}") from None


@contextmanager
def _changing() -> Iterator[None]:
    """What stops a change to the unit's file (:class:`roost.base.files.Unwritable`), as one
    SetupError line."""
    try:
        yield
    except files.Unwritable as error:
        raise SetupError(f"{error}; left untouched") from None


def _not_ours(path: Path) -> SetupError:
    return SetupError(f"{path} was not written by roost: left alone (move it aside to install roost's)")


def _companions_current(manager: Manager) -> bool:
    return all(_read(path) == wanted for path, wanted in manager.companions().items())


def status(manager: Manager) -> Status:
    data = _read(manager.path)
    installed = data is not None and manager.ours(data)
    detail = str(_not_ours(manager.path)) if data is not None and not installed else None
    current = installed and data == manager.render() and _companions_current(manager)
    why = manager.unreachable()
    if why is not None:
        return Status(manager.kind, manager.path, installed, current, None, None, detail or why)
    enabled, active = manager.state()
    return Status(manager.kind, manager.path, installed, current, enabled, active, detail)


def install(manager: Manager) -> list[str]:
    """Write the unit (unless it is right already), then enable and start it.

    Raises :class:`NotStarted`, after writing, when no service manager answers, and
    :class:`SetupError` when a file of someone else's is in the way or the manager refuses.
    """
    wanted = manager.render()
    existing = _read(manager.path)
    if existing is not None and not manager.ours(existing):
        raise _not_ours(manager.path)
    beside = {path: (_read(path), want) for path, want in manager.companions().items()}
    for path, (found, _) in beside.items():
        if found is not None and not manager.ours(found):
            raise _not_ours(path)
    changed = existing != wanted or any(found != want for found, want in beside.values())
    for path, (found, want) in {manager.path: (existing, wanted), **beside}.items():  # all before any
        problem = (
            None if found == want else files.unwritable(path) if want is not None else files.unremovable(path)
        )
        if problem:
            raise SetupError(f"{problem}; left untouched")
    if changed:
        with _changing():
            for path, (found, want) in beside.items():
                if found != want and want is not None:
                    files.update(path, want)
                elif found != want:
                    files.discard(path)
            files.update(manager.path, wanted)
    said_file = (
        f"{'wrote' if existing is None else 'updated' if existing != wanted else 'unchanged:'} {manager.path}"
    )
    for path, (found, want) in beside.items():
        if found != want:
            said_file += f" ({'removed' if want is None else 'wrote' if found is None else 'updated'} {path})"
    why = manager.unreachable()
    if why is not None:
        raise NotStarted(f"{said_file}; not enabled or started: {why}. {manager.by_hand()}")
    enabled, active = manager.state()
    return [said_file, *manager.start(changed, enabled, active)]


def uninstall(manager: Manager) -> list[str]:
    """Stop and disable the service, then remove the file install wrote (and nothing else)."""
    existing = _read(manager.path)
    if existing is None:
        return [f"not installed: there is no {manager.path}"]
    if not manager.ours(existing):
        raise _not_ours(manager.path)
    for path in (manager.path, *(p for p in manager.companions() if os.path.lexists(p))):
        problem = files.unremovable(path)  # before the service is stopped for nothing
        if problem:
            raise SetupError(f"{problem}; left untouched")
    why = manager.unreachable()
    lines = manager.stop(reachable=why is None)
    with _changing():
        for path in manager.companions():
            found = _read(path)
            if found is not None and manager.ours(found):
                files.discard(path)
                lines.append(f"removed {path}")
        files.discard(manager.path)
    lines.append(f"removed {manager.path}")
    if why is None:
        lines += manager.forget()
    else:
        lines.append(f"nothing was running under a service manager: {why}")
    return lines
