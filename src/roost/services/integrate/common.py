"""What every integration shares: where its files are, the hook command, safe writes, reports."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from roost.agents import manifest
from roost.agents.model import Manifest
from roost.base import files
from roost.base.errors import RoostError, SetupError, UsageError

INSTALLED, NOT_INSTALLED, OUTDATED = "installed", "not installed", "outdated"
HOOK = "rosterd-hook"
HARNESS = re.compile(r"[a-z0-9_-]{1,32}")

# manifest ``[hook] kind`` (every one of HOOK_KINDS but "none") -> module under roost.services.integrate
# that defines ``make(manifest)``
KINDS = {"claude-settings": "claude", "codex-hooks": "codex", "asset": "asset"}


class NoIntegration(UsageError):
    """The harness is unknown, or roost has no adapter for it."""


@dataclass
class Report:
    """One harness's integration as ``status`` sees it."""

    harness: str
    state: str
    paths: list[Path] = field(default_factory=list)
    detail: str = ""
    gate: bool | None = None
    """Whether the harness's permission gate is installed; None where it offers none."""
    hooks: str | None = None
    """How installed hooks reach roost: ``command`` (``rosterd-hook``) or ``http`` (the
    daemon's hook port); None where nothing is installed or the host has one way only."""
    port: int | None = None
    """The hook port HTTP hooks post to."""

    @property
    def line(self) -> str:
        where = ", ".join(str(p) for p in self.paths)
        text = f"{self.harness}: {self.state}"
        if where:
            text += f" ({where})"
        return text + (f" — {self.detail}" if self.detail else "")


class Integration(Protocol):
    def install(self) -> list[str]: ...
    def uninstall(self) -> list[str]: ...
    def status(self) -> Report: ...


class Gated(Protocol):
    """An integration whose host lets a hook decide a permission (its manifest's ``[hook.gate]``)."""

    def install(
        self, gate: bool | None = None, gate_timeout_s: int | None = None, *, port: int | bool = True
    ) -> list[str]: ...
    def gate_timeout(self) -> int | None: ...


def names() -> list[str]:
    """Every harness roost can integrate, in name order."""
    return sorted(n for n, m in manifest.load_all().items() if m.hook.kind in KINDS)


def integration(harness: str) -> Integration:
    agent = manifest.load(harness) if HARNESS.fullmatch(harness) else None
    if agent is None:
        raise NoIntegration(f"unknown harness '{harness}' (one of: {', '.join(names())})")
    kind = agent.hook.kind
    if kind not in KINDS:
        raise NoIntegration(
            f"roost has no adapter for {harness}: an agent there can badge itself with "
            "`roost reply` and `roost state`"
        )
    module = importlib.import_module(f"roost.services.integrate.{KINDS[kind]}")
    return module.make(agent)


def missing(harness: str) -> str | None:
    """Why roost's integration with ``harness`` is not in place (not installed, out of date, or
    none exists), with the command that fixes it; None when it is installed. What a headless
    start asks of a harness whose adapter relies on it (``[harness.NAME] extension``)."""
    try:
        report = integration(harness).status()
    except RoostError as error:
        return error.message
    if report.state == INSTALLED:
        return None
    return f"{report.line}: run `rosterd integrate install {harness}`"


def gates() -> dict[str, str | None]:
    """Every harness that offers a permission gate, by name: None where roost's gate is on,
    else the command that turns it on (the web app says it where only the terminal can answer)."""
    found: dict[str, str | None] = {}
    for harness in names():
        agent = manifest.load(harness)
        if agent is None or agent.hook.gate is None:
            continue
        try:
            on = integration(harness).status().gate
        except RoostError:
            on = False
        found[harness] = None if on else f"rosterd integrate install {harness} --gate"
    return found


def gated(harness: str) -> Gated:
    """The integration of ``harness`` if it can install a permission gate; NoIntegration if not."""
    found = integration(harness)
    agent = manifest.load(harness)
    if agent is None or agent.hook.gate is None:
        raise NoIntegration(f"{harness} offers no permission gate: answer its dialogs in the terminal")
    return found  # type: ignore[return-value]


def location(agent: Manifest) -> Path:
    """The first of the manifest's ``dirs`` whose ``$VARIABLES`` are all set; ``~`` is $HOME."""
    for candidate in agent.hook.dirs:
        parts = candidate.split("/")
        if any(p.startswith("$") and not os.environ.get(p[1:]) for p in parts):
            continue
        expanded = [os.environ[p[1:]] if p.startswith("$") else p for p in parts]
        return Path(os.path.expanduser("/".join(expanded)))
    raise SetupError(f"cannot tell where {agent.name} keeps its configuration (set HOME)")


def hook_program() -> str:
    """The program a host runs: bare ``rosterd-hook`` when PATH finds this very one.

    The bare name is what Claude's documented settings show, and it survives reinstalling
    roost elsewhere on PATH; the absolute path is used only when PATH would not find this
    installation's hook at all (roost in a virtualenv that is not on PATH).
    """
    ours = Path(sys.executable).parent / HOOK
    found = shutil.which(HOOK)
    return HOOK if found and Path(found).resolve() == ours.resolve() else str(ours)


def hook_command(harness: str | None, *flags: str) -> str:
    """``hook_program`` as a shell command line: its ``flags`` (``--gate``), then the harness
    argument when one is needed."""
    return shlex.join([hook_program(), *flags, *([harness] if harness else [])])


def is_hook_command(command: object) -> bool:
    """Whether a host's command line runs ``rosterd-hook``: the mark of roost's own entries."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return bool(words) and os.path.basename(words[0]) == HOOK


def read_text(path: Path) -> str | None:
    """The file's text, or None when there is none; a link to nothing is refused in the words
    a write through it would get, since no install could fix it."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if path.is_symlink():
            writable(path)
        return None
    except UnicodeDecodeError as error:
        raise SetupError(f"cannot read {path}: it is not UTF-8 text ({error.reason})") from error
    except OSError as error:
        raise SetupError(f"cannot read {path}: {error.strerror or error}") from error


def writable(*paths: Path) -> None:
    """SetupError naming the first of ``paths`` that cannot be written, so an integration that
    changes two files checks both before it writes either."""
    for path in paths:
        problem = files.unwritable(path)
        if problem:
            raise SetupError(f"{problem}; left untouched")


@contextmanager
def _changing() -> Iterator[None]:
    """What stops a change to a host file (:class:`roost.base.files.Unwritable`), as one SetupError line."""
    try:
        yield
    except files.Unwritable as error:
        raise SetupError(f"{error}; left untouched") from None


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its mode; a host never reads half a file. Through a
    symbolic link (a dotfiles manager's), the file it ends at changes and the link stays."""
    with _changing():
        files.update(path, text)


def remove(path: Path, left: str) -> None:
    """Remove a file that held only roost's entries; but a symbolic link and the file it ends at
    are the person's, so that file keeps ``left`` (what remains of it) and the link stays."""
    if path.is_symlink():
        write_text(path, left)
        return
    discard(path)


def discard(path: Path) -> Path:
    """Remove a file roost owns outright (:func:`roost.base.files.discard`); where it was."""
    with _changing():
        return Path(files.discard(path))
