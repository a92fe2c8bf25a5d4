"""Values that reach tmux or a terminal mean only themselves: a name ending in ``;`` names a
window (tmux would have ended its command there), a pane id with anything after its digits
names no pane, and a name that is not one clean line is refused at the door."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.api.agentpane import path
from tests.api.helpers import about
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon

NOT_ONE_LINE = [
    "\x85nel",
    "line\u2028sep",
    "para\u2029sep",
    "\u202aembed",
    "\u202eevil",
    "\u2066iso",
    "del\x7f",
]


def launch(running: Daemon, body: dict[str, str]) -> httpx.Response:
    with running.tcp(running.token) as client:
        return client.post("/launch", json=body)


def test_a_launch_named_with_a_trailing_semicolon_opens_that_window(
    roost: Roost, running: Daemon, tmp_path: Path
) -> None:
    response = launch(running, {"command": "sleep 600", "cwd": str(tmp_path), "name": "semi;"})
    assert response.status_code == 201, response.text
    pane = response.json()["pane"]
    assert response.json()["name"] == "semi;"
    assert roost.option(pane, "window_name") == "semi;"
    assert roost.option(pane, "@roost-name") == "semi;"


@pytest.mark.parametrize("name", NOT_ONE_LINE)
def test_a_launch_name_that_is_not_one_clean_line_is_refused(
    roost: Roost, running: Daemon, tmp_path: Path, name: str
) -> None:
    roost.start("sleep 600")
    before = roost.tmux("list-windows", "-a", "-F", "#{window_id}")
    response = launch(running, {"command": "sleep 600", "cwd": str(tmp_path), "name": name})
    assert response.status_code == 400, response.text
    assert "name" in response.json()["error"]
    assert roost.tmux("list-windows", "-a", "-F", "#{window_id}") == before


def test_input_to_a_pane_id_with_a_semicolon_writes_nothing(roost: Roost, running: Daemon) -> None:
    written = roost.root / "written"
    pane = roost.start(f"stty -echo; exec cat > {written}")
    data = {"data": base64.b64encode(b"pwned\r").decode()}
    with running.unix() as client:
        for key in (f"{pane};", f"{pane}x", f"{pane};display-message"):
            response = client.post(f"/sessions/{path(key)}/input", json=data)
            assert response.status_code == 404, response.text
            assert "error" in response.json()
        marker = {"data": base64.b64encode(b"marker\r").decode()}
        assert client.post(f"/sessions/{path(pane)}/input", json=marker).status_code == 200
    roost.wait_for(lambda: written.exists() and b"marker" in written.read_bytes(), what="the marker")
    assert written.read_bytes() == b"marker\n"


@pytest.mark.parametrize("label", ["x\x1b]0;pwned\x07\x1b[2J", *NOT_ONE_LINE])
def test_rosterd_name_refuses_a_name_that_is_not_one_clean_line(
    roost: Roost, running: Daemon, proc: subprocess.Popen[bytes], label: str
) -> None:
    with running.unix() as client:
        started = client.post("/claim", json=about(proc, activity="working", event="prompt"))
        key = started.json()["session_key"]
        named = subprocess.run(
            [str(BIN / "rosterd"), "name", key, label], capture_output=True, env=running.env, timeout=30
        )
        assert named.returncode == 1, named.stderr
        assert named.stderr.startswith(b"rosterd name: name is one line"), named.stderr
        assert not any(byte < 0x20 for byte in named.stderr.rstrip(b"\n")), named.stderr
        refused = client.post(
            f"/sessions/{key}/name",
            content=json.dumps({"name": label}).encode(),
            headers={"Content-Type": "application/json"},
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["field"] == "name", refused.json()
        assert client.get(f"/sessions/{key}").json()["name"] != label
