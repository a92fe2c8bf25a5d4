"""The swarm stays off the hot paths: the hook and ``roost``'s verbs never load it, nor the
cryptography it stands on."""

from __future__ import annotations

import subprocess
import sys


def test_the_hook_and_roost_never_import_the_swarm() -> None:
    probe = (
        "import sys, roost.faces.hook.main, roost.faces.hook.pane, roost.faces.hook.post,"
        " roost.faces.cli.roost,"
        " roost.faces.cli.roost.send, roost.faces.cli.roost.status; print(*sorted(sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "roost.faces.cli.roost.send" in loaded
    assert not [name for name in loaded if name.startswith(("roost.remote.swarm", "cryptography"))]


def test_importing_the_package_loads_none_of_its_modules() -> None:
    probe = "import sys, roost.remote.swarm; print(*sorted(sys.modules))"
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert [name for name in loaded if name.startswith("roost.remote.swarm")] == ["roost.remote.swarm"]
    assert not [name for name in loaded if name.startswith("cryptography")]
