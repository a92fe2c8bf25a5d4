"""A machine of its own for ``rosterd setup``, ``doctor`` and ``service``: HOME, the XDG dirs and
PATH in a temp dir, no tmux server and no daemon, and where a test asks for one, a stand-in
service manager (``tests/fakes/servicemanager.py``) or a harness's program on PATH."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BIN, _foreign

FAKE_MANAGER = Path(__file__).resolve().parents[2] / "fakes" / "servicemanager.py"
BARE_PATH = "/usr/bin:/bin"


@dataclass
class Machine:
    root: Path
    env: dict[str, str]

    @property
    def home(self) -> Path:
        return Path(self.env["HOME"])

    @property
    def bin(self) -> Path:
        """A directory first on PATH, for the programs a test puts there."""
        return self.root / "bin"

    @property
    def config(self) -> Path:
        return Path(self.env["XDG_CONFIG_HOME"]) / "roost" / "rosterd.toml"

    @property
    def unit(self) -> Path:
        return Path(self.env["XDG_CONFIG_HOME"]) / "systemd" / "user" / "rosterd.service"

    def rosterd(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "rosterd"), *args],
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    def json(self, *args: str, code: int = 0) -> dict:
        proc = self.rosterd(*args)
        assert proc.returncode == code, proc.stdout + proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 1, proc.stdout
        return json.loads(lines[0])

    def program(self, name: str, script: str = "exit 0") -> Path:
        """A program called ``name`` on PATH (a harness's, say) that runs ``script``."""
        path = self.bin / name
        path.write_text(f"#!/bin/sh\n{script}\n")
        path.chmod(0o755)
        return path

    def manager(self, name: str = "systemctl", refuse: str | None = None) -> Path:
        """Put the stand-in service manager on PATH as ``name``; its state file."""
        (self.bin / name).unlink(missing_ok=True)
        (self.bin / name).symlink_to(FAKE_MANAGER)
        state = self.root / f"{name}.json"
        self.env["FAKE_MANAGER_STATE"] = str(state)
        if refuse:
            self.env["FAKE_MANAGER_REFUSE"] = refuse
        return state

    def files(self) -> dict[str, bytes]:
        """Every file under HOME and the config dir, by path: what a run wrote."""
        found = {}
        for top in (self.home, Path(self.env["XDG_CONFIG_HOME"])):
            for path in sorted(top.rglob("*")):
                if path.is_file() or path.is_symlink():
                    found[str(path)] = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
        return found


def make(root: Path) -> Machine:
    """A new machine in ``root``."""
    root.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not _foreign(k)}
    for name in ("CODEX_HOME", "COPILOT_HOME", "PI_CODING_AGENT_DIR", "IS_SANDBOX"):
        env.pop(name, None)
    for directory in ("home", "config", "state", "run", "bin"):
        (root / directory).mkdir(mode=0o700)
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_STATE_HOME=str(root / "state"),
        XDG_RUNTIME_DIR=str(root / "run"),
        # A name, not a path: a unix socket's path must fit in 108 bytes. No server starts.
        ROOST_SOCKET=f"machine-{secrets.token_hex(6)}",
        PATH=os.pathsep.join((str(root / "bin"), str(BIN), BARE_PATH)),
        LANG="C.UTF-8",
        SHELL="/bin/sh",
    )
    return Machine(root, env)


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return make(tmp_path / "machine")
