"""systemd: the daemon as a user unit, ``${XDG_CONFIG_HOME:-~/.config}/systemd/user/rosterd.service``,
and its hook port as a socket unit beside it, ``rosterd.socket``.

The socket unit holds the hook port (``[node] hook_port``) open whatever the daemon does: a hook
Claude Code posts while the daemon is stopped, restarting or not yet started wakes it (socket
activation) and is answered once it serves, instead of being drawn as an error under the
agent's every event. The daemon takes the socket from ``LISTEN_FDS``
(:func:`roost.daemon.listen.activated`). With ``hook_port = 0`` there is no socket unit.

The unit and the daemon agree on the runtime directory: the daemon's sockets live in
``$XDG_RUNTIME_DIR/roost`` (:func:`roost.base.paths.runtime_path`), which is what
``RuntimeDirectory=roost`` makes below a user manager's ``%t``, and the unit sets
``XDG_RUNTIME_DIR`` to that same ``%t``. The daemon logs to its stderr, which the unit sends to
the journal (``journalctl --user -u rosterd``).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from roost.base import paths
from roost.base.errors import SetupError
from roost.services.autostart.common import carried, checked, program, run, said

NAME = "rosterd.service"
SOCKET_NAME = "rosterd.socket"
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


def socket_unit(hook_port: int) -> str:
    """The socket unit holding 127.0.0.1:``hook_port`` for the daemon; a pure function."""
    return "\n".join(
        [
            MARK,
            "[Unit]",
            "Description=rosterd's hook port: agents' HTTP hooks reach it, and wake rosterd when it is down",
            "",
            "[Socket]",
            f"ListenStream=127.0.0.1:{hook_port}",
            "FileDescriptorName=hooks",
            f"Service={NAME}",
            "",
            "[Install]",
            "WantedBy=sockets.target",
            "",
        ]
    )


def unit(program: str, environment: Mapping[str, str], hook_port: int = 0) -> str:
    """The unit file for ``program daemon`` with ``environment`` set, taking the hook port's
    socket from ``rosterd.socket`` when ``hook_port`` is one; a pure function."""
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
            *([f"Requires={SOCKET_NAME}", f"After={SOCKET_NAME}"] if hook_port else []),
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
            *([f"Also={SOCKET_NAME}"] if hook_port else []),
            "",
        ]
    )


def unit_path() -> Path:
    """``${XDG_CONFIG_HOME:-~/.config}/systemd/user/rosterd.service``."""
    return paths.config_home().parent / "systemd" / "user" / NAME


class Systemd:
    kind = "systemd"

    def __init__(self, hook_port: int = 0) -> None:
        self.path = unit_path()
        self.socket_path = self.path.with_name(SOCKET_NAME)
        self.hook_port = hook_port

    def render(self) -> bytes:
        return unit(str(program()), carried(), self.hook_port).encode()

    def companions(self) -> dict[Path, bytes | None]:
        """The socket unit, or None where there is to be none (``hook_port = 0``)."""
        return {self.socket_path: socket_unit(self.hook_port).encode() if self.hook_port else None}

    def _units(self) -> tuple[str, ...]:
        return (SOCKET_NAME, NAME) if self.hook_port else (NAME,)

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
        units = self._units()
        if not enabled:
            checked(self._systemctl("enable", *units))
            lines.append(f"enabled {' and '.join(units)}: started at every login")
        if active and changed:
            if self.hook_port:  # the socket unit first: the restarted daemon takes its socket
                checked(self._systemctl("stop", NAME))
                checked(self._systemctl("restart", SOCKET_NAME))
            checked(self._systemctl("restart", NAME))
            lines.append(f"restarted {NAME}, which ran the unit as it was")
        elif not active:
            checked(self._systemctl("start", *units))
            lines.append(f"started {' and '.join(units)} (the log: journalctl --user -u rosterd)")
        if enabled and active and not changed:
            lines.append(f"{NAME} is enabled and running")
        return lines

    def stop(self, reachable: bool) -> list[str]:
        if shutil.which("systemctl") is None:
            return []
        # Enabling is a link in default.target.wants/, which systemctl removes even where no
        # manager runs (it edits the files itself then); stopping needs the manager.
        units = (NAME, SOCKET_NAME) if self.socket_path.exists() else (NAME,)
        args = ("disable", "--now", *units) if reachable else ("disable", *units)
        proc = self._systemctl(*args)
        names = " and ".join(units)
        if proc.returncode != 0:
            return [f"could not disable {names}: {said(proc)}"]
        return [f"stopped and disabled {names}" if reachable else f"disabled {names}"]

    def forget(self) -> list[str]:
        checked(self._systemctl("daemon-reload"))
        return []

    def by_hand(self) -> str:
        return (
            "Once a user service manager runs (a login session, or `loginctl enable-linger`), "
            "start it with `systemctl --user daemon-reload && "
            f"systemctl --user enable --now {' '.join(self._units())}`"
        )


def held_hook_port() -> int | None:
    """The port roost's installed ``rosterd.socket`` holds, or None where there is none: where
    it is, agents' HTTP hooks reach a port that outlives the daemon."""
    try:
        text = unit_path().with_name(SOCKET_NAME).read_text()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith(MARK + "\n"):
        return None
    for line in text.splitlines():
        host, _, port = line.removeprefix("ListenStream=").rpartition(":")
        if line.startswith("ListenStream=") and host == "127.0.0.1" and port.isdigit():
            return int(port)
    return None
