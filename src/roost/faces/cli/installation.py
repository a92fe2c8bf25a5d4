"""This installation's commands, ``roost``, ``rosterd``, ``rosterd-hook`` and ``rosterd-holder``,
and whether a shell finds them on PATH: what both doctors and ``rosterd setup`` check, and the
exact fix they print.

Set-up (``scripts/bootstrap``, which ``make run`` and ``make test`` start with) runs
``scripts/link-commands``: a link to each command of the checkout's ``.venv/bin`` in
``$ROOST_BIN_DIR``, by default ``~/.local/bin``. Without the links, the next shell finds no
``roost``, although every line of the README after ``make run`` uses it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from roost.base.errors import SetupError

COMMANDS = ("roost", "rosterd", "rosterd-hook", "rosterd-holder")
LINKER = Path("scripts") / "link-commands"


@dataclass(frozen=True)
class OnPath:
    """Where PATH finds each command, when it does, and what to run when it does not."""

    ours: Path
    found: dict[str, Path | None]

    @property
    def missing(self) -> list[str]:
        return [name for name in COMMANDS if self.found[name] is None]

    @property
    def elsewhere(self) -> dict[str, Path]:
        """Commands PATH finds in another installation: that one runs, not this one."""
        return {
            name: where
            for name, where in self.found.items()
            if where is not None and where.resolve() != (self.ours / name).resolve()
        }

    def summary(self) -> str:
        """The one line either doctor prints: what is found where, or what is missing and the fix."""
        missing = self.missing
        if missing:
            return f"{_listed(missing)} {'is' if len(missing) == 1 else 'are'} not on PATH: {fix(self.ours)}"
        other = self.elsewhere
        if other:
            name, where = next(iter(other.items()))
            return (
                f"PATH runs another installation's {name} ({where}), not this one's: "
                f"take {where.parent} off PATH, or run this one as {self.ours / name}"
            )
        places = sorted({str(where.parent) for where in self.found.values() if where is not None})
        return f"{_listed(list(COMMANDS))} are on PATH (in {', '.join(places)})"


def check(path: str | None = None) -> OnPath:
    """Look each command up on ``path`` (the environment's PATH by default)."""
    found = {name: shutil.which(name, path=path) for name in COMMANDS}
    return OnPath(ours(), {name: Path(where) if where else None for name, where in found.items()})


def ours() -> Path:
    """The directory of this installation's commands: the virtualenv's ``bin``, beside Python."""
    return Path(sys.executable).parent


def bin_dir() -> Path:
    """Where set-up links the commands: ``$ROOST_BIN_DIR``, else ``~/.local/bin``."""
    return Path(os.environ.get("ROOST_BIN_DIR") or "~/.local/bin").expanduser()


def fix(commands: Path) -> str:
    """What puts ``commands``' programs on PATH for the next shell, in words around
    :func:`fix_command`: when the links are in place, only the directory is missing from PATH."""
    directory = bin_dir()
    if linked(commands):
        return f"add {directory} to PATH with `{profile_line(directory)}`, then open a new shell"
    return f"`{fix_command(commands)}`"


def fix_command(commands: Path) -> str:
    """The exact command that puts ``commands``' programs on PATH for the next shell.

    When the links are in place: the line that adds their directory to the shell's profile.
    Otherwise, in a checkout, its ``scripts/link-commands`` (which says what stands in the
    way, if anything does); without a checkout, the ``ln -s`` itself.
    """
    directory = bin_dir()
    if linked(commands):
        return profile_line(directory)
    linker = _linker(commands)
    if linker is not None:
        return shlex.quote(str(linker))
    targets = " ".join(shlex.quote(str(commands / name)) for name in COMMANDS)
    where = shlex.quote(str(directory))
    return f"mkdir -p {where} && ln -s {targets} {where}/"


def linked(commands: Path) -> bool:
    """Whether set-up's link to each of ``commands``' programs is in place in :func:`bin_dir`."""
    return all(_links_to(bin_dir() / name, commands / name) for name in COMMANDS)


def link(commands: Path) -> list[str]:
    """Make set-up's links to ``commands``' programs; lines saying what was done.

    In a checkout this runs its ``scripts/link-commands``, the one place the rules live (it
    replaces only a link of a checkout that is gone). Elsewhere it links only where nothing
    is in the way. Either way, anything in the way is left alone and named in a
    :class:`SetupError`.
    """
    linker = _linker(commands)
    if linker is not None:
        proc = subprocess.run([str(linker)], capture_output=True, text=True, timeout=60, check=False)
        said = proc.stdout.splitlines()
        if proc.returncode != 0:
            raise SetupError("; ".join(said) or f"{linker} exited {proc.returncode}")
        return said
    directory = bin_dir()
    directory.mkdir(parents=True, exist_ok=True)
    lines = []
    for name in COMMANDS:
        place, target = directory / name, commands / name
        if _links_to(place, target):
            continue
        if place.is_symlink() or place.exists():
            raise SetupError(f"left {place} alone: it is not a link to {target}; move it aside")
        place.symlink_to(target)
        lines.append(f"linked {place} -> {target}")
    return lines


def _linker(commands: Path) -> Path | None:
    """The checkout's ``scripts/link-commands``, when ``commands`` is a checkout's ``.venv/bin``."""
    linker = commands.parent.parent / LINKER
    return linker if commands.parent.name == ".venv" and linker.is_file() else None


def profile_line(directory: Path) -> str:
    """The command that adds ``directory`` to PATH in the user's shell profile, as
    ``scripts/link-commands`` prints it: ``$HOME`` spelled out, the profile by ``$SHELL``."""
    home = Path("~").expanduser()
    entry = f"$HOME/{directory.relative_to(home)}" if directory.is_relative_to(home) else str(directory)
    shell = os.path.basename(os.environ.get("SHELL", ""))
    profile = {"zsh": "~/.zshrc", "bash": "~/.bashrc"}.get(shell, "~/.profile")
    return f"echo 'export PATH=\"{entry}:$PATH\"' >> {profile}"


def _links_to(link: Path, target: Path) -> bool:
    return link.is_symlink() and link.exists() and link.resolve() == target.resolve()


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
