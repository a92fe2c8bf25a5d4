"""A private HOME and XDG dirs for ``rosterd integrate``, run as the real console script."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import BIN, BOOTSTRAP


@dataclass
class Rosterd:
    home: Path
    env: dict[str, str]

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "rosterd"), *args],
            capture_output=True,
            text=True,
            env={**self.env, **(env or {})},
            timeout=60,
        )

    def ok(self, *args: str) -> str:
        proc = self.run(*args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def status(self, harness: str) -> tuple[int, str]:
        proc = self.run("integrate", "status", harness)
        return proc.returncode, proc.stdout

    def status_json(self, harness: str) -> dict:
        proc = self.run("integrate", "status", "--json", harness)
        lines = proc.stdout.splitlines()
        assert len(lines) == 1, proc.stdout
        return json.loads(lines[0])

    def files(self) -> dict[str, bytes]:
        """Every file under HOME, by relative path: what an integration wrote."""
        return {
            str(p.relative_to(self.home)): p.read_bytes() for p in sorted(self.home.rglob("*")) if p.is_file()
        }


@pytest.fixture
def rosterd(tmp_path: Path) -> Rosterd:
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XDG_", "CLAUDE_", "CODEX_", "COPILOT_", "PI_", "GEMINI_"))
    }
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    )
    return Rosterd(home, env)


def asset_lifecycle(rosterd: Rosterd, harness: str, relpath: str, kind: str) -> None:
    """The contract every owned-file integration keeps: exactly one file, ours, in and out."""
    code, out = rosterd.status(harness)
    assert (code, out.startswith(f"{harness}: not installed")) == (1, True)
    assert f"installed the {harness} {kind}" in rosterd.ok("integrate", "install", harness)
    files = rosterd.files()
    assert list(files) == [relpath]
    text = files[relpath].decode()
    assert text.splitlines()[0].startswith("// roost-integration: ")
    assert 'const HOOK = "rosterd-hook";' in text
    assert "already installed" in rosterd.ok("integrate", "install", harness)
    assert rosterd.files() == files
    assert rosterd.status(harness)[0] == 0
    path = rosterd.home / relpath
    path.write_text(text.replace("rosterd-hook", "rosterd-hook-old"))
    code, out = rosterd.status(harness)
    assert (code, out.startswith(f"{harness}: outdated")) == (1, True)
    rosterd.ok("integrate", "install", harness)
    assert rosterd.files() == files
    rosterd.ok("integrate", "uninstall", harness)
    assert rosterd.files() == {}
    assert rosterd.status(harness)[0] == 1


def foreign_file_is_never_touched(rosterd: Rosterd, harness: str, relpath: str) -> None:
    path = rosterd.home / relpath
    path.parent.mkdir(parents=True)
    path.write_text("// somebody else's file\n")
    proc = rosterd.run("integrate", "install", harness)
    assert proc.returncode == 1 and "not written by roost" in proc.stderr
    rosterd.ok("integrate", "uninstall", harness)
    assert path.read_text() == "// somebody else's file\n"
    code, out = rosterd.status(harness)
    assert code == 1 and "a file roost did not write" in out


DRIVERS = Path(__file__).with_name("drivers")


def drive_in_pane(roost, harness: str, relpath: str, setup=None, args: tuple[str, ...] = ()) -> str:
    """Install ``harness`` for real, then run its adapter under node in a roost pane, where its
    calls reach the real ``rosterd-hook``; returns the pane. ``args`` go to the driver."""
    if shutil.which("node") is None:
        pytest.fail(
            f"these tests run the adapters under Node.js, which is not installed: {BOOTSTRAP}",
            pytrace=False,
        )
    proc = subprocess.run(
        [str(BIN / "rosterd"), "integrate", "install", harness], capture_output=True, text=True, env=roost.env
    )
    assert proc.returncode == 0, proc.stderr
    home = Path(roost.env["HOME"])
    installed = next(p for p in (home / relpath, roost.root / "config" / relpath) if p.exists())
    if setup is not None:
        setup(home)
    driver = shlex.join(["node", str(DRIVERS / f"{harness}.mjs"), str(installed), *args])
    done = roost.root / f"{harness}.exit"
    pane = roost.start(f"sh -c '{driver} 2>{roost.root}/{harness}.err; echo $? > {done}; exec sleep 600'")
    roost.wait_for(
        lambda: done.exists() and done.read_text().strip(), timeout=30, what=f"the {harness} driver"
    )
    assert done.read_text().strip() == "0", (roost.root / f"{harness}.err").read_text()
    return pane
