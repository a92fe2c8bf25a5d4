"""What a check of this machine finds, and what the checks ask about, each looked up once.

A :class:`Finding` is one row's verdict in words both ``rosterd setup`` and ``rosterd doctor``
print; a :class:`Machine` holds what several rows need (the config, the daemon's status, the
service manager's answer), so a run asks each question once.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from roost.base.errors import RoostError
from roost.daemon import config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.services.autostart import Status

OK, MISSING, BROKEN, SKIP = "ok", "missing", "broken", "skip"
"""A finding's outcome: done; not done, and the row's fix does it; not done, and a person must
act (its ``fix`` says how, when a command can); nothing to check on this machine (a harness
that is not installed)."""


@dataclass(frozen=True)
class Finding:
    outcome: str
    detail: str
    fix: str | None = None
    """The exact command that makes this row done, when one does."""

    @property
    def with_fix(self) -> str:
        """The detail, then the command that fixes it (unless the detail names it already)."""
        if self.fix is None or f"`{self.fix}`" in self.detail:
            return self.detail
        return f"{self.detail}; run `{self.fix}`"


class Machine:
    """This machine as the checks see it, for one run of setup or doctor.

    ``config_path`` is ``--config`` (None: the XDG location). A fix changes the machine, so a
    check after a fix asks a new ``Machine``.
    """

    def __init__(self, config_path: Path | None = None) -> None:
        self.config_path = config_path

    @property
    def config_file(self) -> Path:
        return self.config_path or config.default_path()

    @cached_property
    def settings(self) -> config.Config | RoostError:
        """The config, or why it cannot be read."""
        try:
            return config.load(self.config_path)
        except RoostError as error:
            return error

    @cached_property
    def daemon(self) -> dict | RoostError:
        """The running daemon's ``/status``, or why none answers."""
        from roost.faces.cli.daemonclient import Client, Refused, Unreachable

        try:
            with Client() as client:
                return json.loads(client.get("/status"))
        except (Unreachable, Refused) as error:
            return error

    @cached_property
    def service(self) -> Status | RoostError:
        """The service's status, or why this platform has none."""
        from roost.services import autostart

        try:
            return autostart.status(autostart.manager(hook_port=self.hook_port))
        except RoostError as error:
            return error

    @property
    def hook_port(self) -> int:
        """``[node] hook_port`` of the config (its default when the config cannot be read):
        the port a service's socket unit holds."""
        settings = self.settings
        return settings.node.hook_port if isinstance(settings, config.Config) else config.Node().hook_port

    @cached_property
    def harnesses(self) -> list[str]:
        """Every harness roost can hook into or run headless, in the launcher's order; then any
        harness only the config names an adapter for."""
        from roost.agents import manifest
        from roost.services.integrate import KINDS

        names = [m.name for m in manifest.ordered() if m.hook.kind in KINDS or m.acp is not None]
        settings = self.settings
        if isinstance(settings, config.Config):
            names += [name for name, h in settings.harness.items() if h.adapter and name not in names]
        return names

    def binary(self, harness: str) -> str | None:
        """Where PATH finds the harness's own program, if it does."""
        from roost.agents import manifest

        agent = manifest.load(harness)
        for program in agent.binaries if agent else ():
            found = shutil.which(program)
            if found:
                return found
        return None

    def start_command(self) -> str:
        """What starts the daemon: the service where a service manager answers, else by hand."""
        found = self.service
        if not isinstance(found, RoostError) and found.enabled is not None:
            return "rosterd service install"
        return "rosterd daemon"
