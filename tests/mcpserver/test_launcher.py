"""The web launcher tells each CLI of rosterd's MCP server the way its manifest's ``[mcp]`` table
says: Claude Code a ``--mcp-config`` JSON, Codex ``-c mcp_servers.rosterd.*`` TOML values, an
agent without the table nothing. Stand-ins for the CLIs record the argv they were started with."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.mcpserver.client import bridge, ok

BRIDGE = ["-m", "roost.faces.cli.rosterd", "mcp", "--socket"]


def _stand_in(roost: Roost, tmp_path: Path, agent: str) -> Path:
    """``agent`` on PATH: writes its arguments as JSON to a file, then idles."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    said = tmp_path / f"{agent}.argv"
    script = bin_dir / agent
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(said)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "os.execvp('sleep', ['sleep', '600'])\n"
    )
    script.chmod(0o755)
    roost.env["PATH"] = f"{bin_dir}{os.pathsep}{roost.env['PATH']}"
    return said


def _launch(daemon: Daemon, roost: Roost, tmp_path: Path, agent: str) -> list[str]:
    said = _stand_in(roost, tmp_path, agent)
    daemon.start()
    roost.start()
    with daemon.unix() as client:
        answer = client.post("/launch", json={"agent": agent, "cwd": str(tmp_path)})
    assert answer.status_code == 201, answer.text
    roost.wait_for(said.exists, what=f"{agent} started")
    return list(json.loads(said.read_text()))


def test_claude_code_is_given_the_bridge_as_an_mcp_config(
    daemon: Daemon, roost: Roost, tmp_path: Path
) -> None:
    argv = _launch(daemon, roost, tmp_path, "claude")
    assert argv[0] == "--mcp-config" and len(argv) == 2
    config = json.loads(argv[1])
    assert config == {
        "mcpServers": {"rosterd": {"command": sys.executable, "args": [*BRIDGE, str(daemon.socket)]}}
    }
    server = config["mcpServers"]["rosterd"]
    assert ok(bridge(daemon, [server["command"], *server["args"]]), "session.list")["caller"] is None


def test_codex_is_given_the_bridge_as_config_overrides(daemon: Daemon, roost: Roost, tmp_path: Path) -> None:
    argv = _launch(daemon, roost, tmp_path, "codex")
    assert argv[0::2] == ["-c", "-c"]
    table = tomllib.loads("\n".join(argv[1::2]))
    assert table == {
        "mcp_servers": {"rosterd": {"command": sys.executable, "args": [*BRIDGE, str(daemon.socket)]}}
    }


@pytest.mark.parametrize("agent", ["amp"])
def test_an_agent_without_an_mcp_table_is_given_nothing(
    daemon: Daemon, roost: Roost, tmp_path: Path, agent: str
) -> None:
    assert _launch(daemon, roost, tmp_path, agent) == []
