#!/usr/bin/env python3
"""A stand-in for a user service manager, which CI containers do not run: linked into a test's
PATH as ``systemctl`` or ``launchctl``, it answers the calls ``roost.services.autostart`` makes as the real
one would, keeping what is enabled and running in ``$FAKE_MANAGER_STATE`` (JSON) and every call
it was given under ``calls``. ``$FAKE_MANAGER_REFUSE`` names one verb (``start``, ``bootstrap``…)
it refuses, as a manager refuses a unit it cannot start.

Like the real ones it reads the unit where it lives: ``enable`` and ``bootstrap`` fail when the
file is not there, and ``start`` runs nothing (the daemon is tested elsewhere).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

STATE = Path(os.environ["FAKE_MANAGER_STATE"])


def load() -> dict:
    try:
        return json.loads(STATE.read_text())
    except FileNotFoundError:
        return {"enabled": False, "active": False, "calls": []}


def systemctl(args: list[str], state: dict) -> int:
    assert args[0] == "--user", args
    verb, rest = args[1], args[2:]
    unit = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "systemd/user/rosterd.service"
    if verb == "show-environment":
        print(f"HOME={Path.home()}")
    elif verb == "is-enabled":
        print("enabled" if state["enabled"] else "disabled" if unit.exists() else "not-found")
        return 0 if state["enabled"] else 1
    elif verb == "is-active":
        print("active" if state["active"] else "inactive")
        return 0 if state["active"] else 3
    elif verb == "enable":
        if not unit.exists():
            print("Failed to enable unit: Unit file rosterd.service does not exist.", file=sys.stderr)
            return 1
        state["enabled"] = True
    elif verb == "disable":
        state["enabled"] = False
        state["active"] = state["active"] and "--now" not in rest
    elif verb in ("start", "restart"):
        state["active"] = True
    elif verb == "stop":
        state["active"] = False
    elif verb != "daemon-reload":
        print(f"fake systemctl: unknown verb {verb}", file=sys.stderr)
        return 1
    return 0


def launchctl(args: list[str], state: dict) -> int:
    verb, rest = args[0], args[1:]
    if verb == "print" and "/" not in rest[0].partition("/")[2]:
        print(f"{rest[0]} = {{\n}}")
    elif verb == "print":
        if not state["enabled"]:
            print(f'Could not find service "{rest[0]}" in domain', file=sys.stderr)
            return 113
        print(f"{rest[0]} = {{\n\tstate = {'running' if state['active'] else 'not running'}\n}}")
    elif verb == "bootstrap":
        if not Path(rest[1]).exists():
            print("Bootstrap failed: 2: No such file or directory", file=sys.stderr)
            return 5
        state["enabled"] = state["active"] = True
    elif verb == "bootout":
        state["enabled"] = state["active"] = False
    elif verb == "kickstart":
        state["active"] = True
    elif verb != "enable":
        print(f"fake launchctl: unknown verb {verb}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    name = os.path.basename(sys.argv[0])
    args = sys.argv[1:]
    state = load()
    state["calls"].append(args)
    verb = args[1] if name == "systemctl" else args[0]
    if verb == os.environ.get("FAKE_MANAGER_REFUSE"):
        print(f"Job for rosterd failed: {verb} refused by the fake {name}", file=sys.stderr)
        code = 1
    else:
        code = (systemctl if name == "systemctl" else launchctl)(args, state)
    STATE.write_text(json.dumps(state))
    return code


if __name__ == "__main__":
    sys.exit(main())
