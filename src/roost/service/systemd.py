"""systemd: the daemon as a user unit, ``${XDG_CONFIG_HOME:-~/.config}/systemd/user/rosterd.service``.

The unit and the daemon agree on the runtime directory: the daemon's sockets live in
``$XDG_RUNTIME_DIR/roost`` (:func:`roost.paths.runtime_path`), which is what
``RuntimeDirectory=roost`` makes below a user manager's ``%t``, and the unit sets
``XDG_RUNTIME_DIR`` to that same ``%t``. The daemon logs to its stderr, which the unit sends to
the journal (``journalctl --user -u rosterd``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from roost import paths
from roost.errors import SetupError
from roost.service.common import carried, checked, program, run, said

NAME = "rosterd.service"
MARK = "# Written by `rosterd service install`; `rosterd service uninstall` removes it."
UNSAFE = "\"'\\"
"""What systemd refuses in the path of the program it starts ("special characters"), quoted or not."""
RESTART_SEC = 3
"""Seconds between a failed daemon and its next start; with the start limit below, a daemon
that cannot start (a broken config) is given up on after five tries in a minute."""


def _quoted(value: str) -> str:
    """``value`` as one double-quoted word of a unit file: backslash and quote escaped, ``%``
    doubled (specifiers are expanded even inside quotes). A line break cannot be written."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise SetupError(f"{value!r} holds a control character, which a unit file cannot carry")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


def unit(program: str, environment: Mapping[str, str]) -> str:
    """The unit file for ``program daemon`` with ``environment`` set; a pure function."""
    if any(c in program for c in UNSAFE):
        raise SetupError(
            f"systemd starts no program whose path holds a quote or a backslash ({program}): "
            "install roost at a path without one"
        )
    assignments = ['Environment="XDG_RUNTIME_DIR=%t"']
    assignments += [
        f"Environment={_quoted(f'{name}={value}')}"
        for name, value in environment.items()
        if name != "XDG_RUNTIME_DIR"
    ]
    return "\n".join(
        [
            MARK,
            "# Install rewrites this file: put changes in a drop-in (`systemctl --user edit rosterd`).",
            "[Unit]",
            "Description=rosterd, the roster of this machine's coding agent sessions (Roost)",
            "StartLimitIntervalSec=60",
            "StartLimitBurst=5",
            "",
            "[Service]",
            "Type=exec",
            f"ExecStart={_quoted(program)} daemon",
            "Restart=on-failure",
            f"RestartSec={RESTART_SEC}",
            "# Headless sessions' holders and roost's tmux server outlive the daemon: stopping or",
            "# restarting it ends its own process alone.",
            "KillMode=process",
            "# $XDG_RUNTIME_DIR/roost, where the daemon keeps its sockets and the holders theirs;",
            "# kept when the daemon stops, since the holders still use it.",
            "RuntimeDirectory=roost",
            "RuntimeDirectoryMode=0700",
            "RuntimeDirectoryPreserve=yes",
            *assignments,
            "StandardOutput=journal",
            "StandardError=journal",
            "SyslogIdentifier=rosterd",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
    )


def unit_path() -> Path:
    """``${XDG_CONFIG_HOME:-~/.config}/systemd/user/rosterd.service``."""
    return paths.config_home().parent / "systemd" / "user" / NAME


class Systemd:
    kind = "systemd"

    def __init__(self) -> None:
        self.path = unit_path()

    def render(self) -> bytes:
        return unit(str(program()), carried()).encode()

    def ours(self, data: bytes) -> bool:
        return data.startswith(MARK.encode() + b"\n")

    def _systemctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(shutil.which("systemctl") or "systemctl", "--user", *args)

    def unreachable(self) -> str | None:
        if shutil.which("systemctl") is None:
            return "systemctl is not installed"
        proc = self._systemctl("show-environment")  # the cheapest question a user manager answers
        if proc.returncode != 0:
            return f"no user service manager answers (systemctl --user: {said(proc)})"
        return None

    def state(self) -> tuple[bool, bool]:
        enabled = self._systemctl("is-enabled", NAME).stdout.strip()
        active = self._systemctl("is-active", NAME).stdout.strip()
        return enabled in ("enabled", "enabled-runtime", "linked"), active == "active"

    def start(self, changed: bool, enabled: bool, active: bool) -> list[str]:
        lines = []
        if changed:
            checked(self._systemctl("daemon-reload"))
        if not enabled:
            checked(self._systemctl("enable", NAME))
            lines.append(f"enabled {NAME}: it starts at every login")
        if active and changed:
            checked(self._systemctl("restart", NAME))
            lines.append(f"restarted {NAME}, which ran the unit as it was")
        elif not active:
            checked(self._systemctl("start", NAME))
            lines.append(f"started {NAME} (its log: journalctl --user -u rosterd)")
        if enabled and active and not changed:
            lines.append(f"{NAME} is enabled and running")
        return lines

    def stop(self, reachable: bool) -> list[str]:
        if shutil.which("systemctl") is None:
            return []
        # Enabling is a link in default.target.wants/, which systemctl removes even where no
        # manager runs (it edits the files itself then); stopping needs the manager.
        args = ("disable", "--now", NAME) if reachable else ("disable", NAME)
        proc = self._systemctl(*args)
        if proc.returncode != 0:
            return [f"could not disable {NAME}: {said(proc)}"]
        return [f"stopped and disabled {NAME}" if reachable else f"disabled {NAME}"]

    def forget(self) -> list[str]:
        checked(self._systemctl("daemon-reload"))
        return []

    def by_hand(self) -> str:
        return (
            "Once a user service manager runs (a login session, or `loginctl enable-linger`), "
            f"start it with `systemctl --user daemon-reload && systemctl --user enable --now {NAME}`"
        )
