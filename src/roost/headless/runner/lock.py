"""The adapter lock: which version of each harness's ACP adapter this node runs.

The first headless session of a harness writes what its adapter said it is (``initialize``'s
``agentInfo``) to ``adapters.lock`` beside the daemon's config (``${XDG_CONFIG_HOME}/roost/``
unless ``rosterd daemon --config`` names a file elsewhere: the lock, like the secrets, belongs
to the config it was made under); every later start is held to it. An adapter that changed
underneath (an npm upgrade, another one first on PATH) is refused with both versions and the
way to accept the new one, rather than run with different permission options or update
shapes than the node was set up with.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from roost.base import files

FILE = "adapters.lock"


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def check(path: Path, harness: str, argv: list[str], info: dict[str, Any], now: float) -> str | None:
    """Why this adapter may not run (its version is not the one ``path`` locks), or None; the
    first adapter of a harness is locked there."""
    name, version = info.get("name"), info.get("version")
    locked = _read(path)
    entry = locked.get(harness)
    if isinstance(entry, dict):
        if (entry.get("name"), entry.get("version")) == (name, version):
            return None
        return (
            f"the {harness} adapter is {name} {version}, but {path} pins {entry.get('name')} "
            f"{entry.get('version')}: remove its {harness!r} entry to run the new one"
        )
    locked[harness] = {"adapter": argv, "name": name, "version": version, "locked_at": now}
    path.parent.mkdir(parents=True, exist_ok=True)
    files.replace(path, json.dumps(locked, indent=1, sort_keys=True) + "\n")
    return None
