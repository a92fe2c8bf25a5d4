"""launchd: the daemon as a LaunchAgent, ``~/Library/LaunchAgents/dev.roost.rosterd.plist``.

It runs in the person's GUI session (``gui/UID``), so what the daemon opens reaches their
display and their tmux server, starts at login (``RunAtLoad``) and again whenever it exits
with a failure (``KeepAlive`` on an unsuccessful exit). launchd keeps no journal: the daemon's
stderr and stdout go to ``~/Library/Logs/roost/rosterd.log``.
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from roost.services.autostart.common import carried, checked, program, run, said

LABEL = "dev.roost.rosterd"


def plist(label: str, program: str, environment: Mapping[str, str], log: str) -> bytes:
    """The LaunchAgent for ``program daemon`` with ``environment`` set; a pure function."""
    document = {
        "Label": label,
        "ProgramArguments": [program, "daemon"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        # Headless sessions' holders and roost's tmux server outlive the daemon, as with
        # systemd's KillMode=process: launchd must not end them with it.
        "AbandonProcessGroup": True,
        "EnvironmentVariables": dict(environment),
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    return plistlib.dumps(document, sort_keys=False)


def home() -> Path:
    return Path(os.path.expanduser("~"))


class Launchd:
    kind = "launchd"

    def __init__(self) -> None:
        self.path = home() / "Library" / "LaunchAgents" / f"{LABEL}.plist"
        self.log = home() / "Library" / "Logs" / "roost" / "rosterd.log"
        self.domain = f"gui/{os.getuid()}"

    def render(self) -> bytes:
        return plist(LABEL, str(program()), carried(), str(self.log))

    def companions(self) -> dict[Path, bytes | None]:
        """None: a LaunchAgent's ``Sockets`` would need the daemon to ask launchd for them
        (``launch_activate_socket``), which this version does not, so on macOS the daemon binds
        its hook port itself and Claude's hooks stay commands unless asked (``--http``)."""
        return {}

    def ours(self, data: bytes) -> bool:
        try:
            document = plistlib.loads(data)
        except Exception:  # plistlib raises several kinds for a file that is no plist
            return False
        return isinstance(document, dict) and document.get("Label") == LABEL

    def _launchctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run(shutil.which("launchctl") or "launchctl", *args)

    def unreachable(self) -> str | None:
        if shutil.which("launchctl") is None:
            return "launchctl is not installed"
        proc = self._launchctl("print", self.domain)
        if proc.returncode != 0:
            return f"there is no GUI session of yours for launchd ({said(proc)})"
        return None

    def state(self) -> tuple[bool, bool]:
        proc = self._launchctl("print", f"{self.domain}/{LABEL}")
        loaded = proc.returncode == 0
        return loaded, loaded and "state = running" in proc.stdout

    def start(self, changed: bool, enabled: bool, active: bool) -> list[str]:
        lines = []
        self.log.parent.mkdir(parents=True, exist_ok=True)
        if enabled and changed:
            checked(self._launchctl("bootout", f"{self.domain}/{LABEL}"))
            lines.append(f"unloaded {LABEL}, which ran the agent as it was")
        if changed or not enabled:
            checked(self._launchctl("enable", f"{self.domain}/{LABEL}"))
            checked(self._launchctl("bootstrap", self.domain, str(self.path)))
            lines.append(f"loaded {LABEL}: it runs now and at every login (its log: {self.log})")
        elif not active:
            checked(self._launchctl("kickstart", f"{self.domain}/{LABEL}"))
            lines.append(f"started {LABEL} (its log: {self.log})")
        else:
            lines.append(f"{LABEL} is loaded and running")
        return lines

    def stop(self, reachable: bool) -> list[str]:
        if not reachable or not self.state()[0]:
            return []
        checked(self._launchctl("bootout", f"{self.domain}/{LABEL}"))
        return [f"stopped and unloaded {LABEL}"]

    def forget(self) -> list[str]:
        return []

    def by_hand(self) -> str:
        command = f"launchctl bootstrap {self.domain} {self.path}"
        return f"Once you are logged in to this Mac, load it with `{command}`"
