"""One bad claim cannot take the roster down: values no reader could write are refused at the
door with a 400 naming the field, and every route keeps answering with the roster unchanged.

Each case here used to be accepted with 200, after which ``/snapshot``, ``/changes`` and
``/sessions/{key}`` answered 500 until the daemon restarted.
"""

from __future__ import annotations

import json
import subprocess

import httpx
import pytest

from tests.api.helpers import about, claimed
from tests.conftest import BIN
from tests.daemon.fixture import Daemon


def still_answers(api: httpx.Client, key: str | None = None) -> dict:
    snapshot = api.get("/snapshot")
    assert snapshot.status_code == 200, snapshot.text
    with api.stream("GET", "/changes", params={"since": 0}) as changes:
        assert changes.status_code == 200
        assert next(changes.iter_lines()) is not None
    if key is not None:
        assert api.get(f"/sessions/{key}").status_code == 200
    return snapshot.json()


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"started_at": 1e20}, "started_at"),
        ({"started_at": -1e12}, "started_at"),
        ({"fields": {"name": "\ud800"}}, "name"),
        ({"fields": {"name": "x\x1b]0;pwned\x07\x1b[2J"}}, "name"),
        ({"fields": {"cwd": "/tmp/\udcff"}}, "cwd"),
        ({"fields": {"usage": {"cost": 1e400}}}, "usage"),
    ],
)
def test_a_claim_no_reader_could_write_is_refused(
    api: httpx.Client, proc: subprocess.Popen[bytes], extra: dict, field: str
) -> None:
    before = still_answers(api)
    body = about(proc, activity="working", event="prompt")
    body.update({k: v for k, v in extra.items() if k != "fields"})
    body["fields"] = {**body.get("fields", {}), **extra.get("fields", {})}
    response = api.post(
        "/claim", content=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400, response.text
    assert field in response.json()["error"]
    after = still_answers(api)
    assert claimed(after["records"]) == claimed(before["records"])


def test_a_claim_for_an_impossible_pid_is_refused(api: httpx.Client) -> None:
    response = api.post(
        "/claim", json={"source": "hook", "pid": 10**30, "start_ticks": 1, "activity": "working"}
    )
    assert response.status_code == 400, response.text
    assert "pid" in response.json()["error"]
    still_answers(api)


@pytest.mark.parametrize("label", ["\ud800", "x\x1b]0;pwned\x07", "a\nb", "\u202eevil", "nul\x00"])
def test_a_name_that_is_not_one_clean_line_is_refused(
    api: httpx.Client, proc: subprocess.Popen[bytes], label: str
) -> None:
    started = api.post("/claim", json=about(proc, activity="working", event="prompt"))
    key = started.json()["session_key"]
    response = api.post(
        f"/sessions/{key}/name",
        content=json.dumps({"name": label}).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert "name" in response.json()["error"]
    assert still_answers(api, key)["records"][0]["name"] != label


def test_rosterd_name_refuses_bytes_that_are_not_text(
    running: Daemon, api: httpx.Client, proc: subprocess.Popen[bytes]
) -> None:
    key = api.post("/claim", json=about(proc, activity="working", event="prompt")).json()["session_key"]
    named = subprocess.run(
        [str(BIN / "rosterd"), "name", key, b"\xff"], capture_output=True, env=running.env, timeout=30
    )
    assert named.returncode != 0
    assert b"Traceback" not in named.stderr
    still_answers(api, key)
