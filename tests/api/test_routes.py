"""Every route's happy path and its errors, over the unix socket with real processes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from starlette.routing import Route

from roost import __version__
from roost.faces.api.app import ROUTES
from roost.faces.api.claims import CLAIM_LIMIT
from roost.faces.api.gate import PAGE, PUBLIC
from roost.faces.api.web import ROUTES as WEB_ROUTES
from tests.api.helpers import about, claimed, key_of, sleeper
from tests.daemon.fixture import Daemon, pid_start_ticks


def claim(api: httpx.Client, body: dict) -> httpx.Response:
    return api.post("/claim", json=body)


def started(api: httpx.Client, proc: subprocess.Popen[bytes], **fields: object) -> str:
    response = claim(api, about(proc, activity="working", event="prompt", **fields))
    assert response.status_code == 200, response.text
    return response.json()["session_key"]


# GET /snapshot, /status, /openapi.json


def test_snapshot(api: httpx.Client, running: Daemon, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc)
    doc = api.get("/snapshot").json()
    assert doc["schema"] == "rosterd.snapshot.v1"
    assert doc["seq"] >= 1
    [record] = [r for r in doc["records"] if r["session_key"] == key]
    assert (record["pid"], record["activity"], record["activity_event"]) == (proc.pid, "active", "prompt")
    assert record["sources"] == ["hook"]
    assert key == key_of(doc["node_id"], proc)


def test_status(api: httpx.Client, running: Daemon, proc: subprocess.Popen[bytes]) -> None:
    before = api.get("/status").json()
    started(api, proc)
    after = api.get("/status").json()
    assert after["version"] == __version__
    assert after["node_id"] == before["node_id"] and after["status_epoch"] == before["status_epoch"]
    assert after["counts"]["active"] == before["counts"]["active"] + 1
    assert after["counts"]["sessions"] == before["counts"]["sessions"] + 1
    assert after["seq"] > before["seq"]
    assert after["listen"] == {
        "unix": str(running.socket),
        "loopback": f"127.0.0.1:{running.port}",
        "hooks": f"127.0.0.1:{running.hook_port}",
        "swarm": None,  # no Tailscale here and no address named: the swarm listener is off
        "off": {"swarm": after["swarm"]["off"]},
    }
    assert after["hooks"] == {
        "listen": f"127.0.0.1:{running.hook_port}",
        "counts": {"applied": 0, "refused": 0},
    }
    assert set(after["rebuild"]) == {"ms", "sessions", "headless"}
    assert set(after["rebuild"]["headless"]) == {"ms", "sessions"}


def test_openapi_describes_every_route(api: httpx.Client) -> None:
    doc = api.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    described = {(path, method.upper()) for path, ops in doc["paths"].items() for method in ops}
    http = [route for route in (*ROUTES, *WEB_ROUTES) if isinstance(route, Route)]
    served = {
        (route.path_format, method) for route in http for method in route.methods or () if method != "HEAD"
    }
    assert described == served
    for path, ops in doc["paths"].items():
        for op in ops.values():
            public = path in PUBLIC or path == PAGE  # the login page, the app's files; / redirects
            assert op.get("security") == ([] if public else None), path
            assert public or "401" in op["responses"], path
    refs = json.dumps(doc).count("#/components/schemas/")
    assert refs and all(name in doc["components"]["schemas"] for name in ("Error", "Record", "ClaimBody"))


def test_unknown_route_and_wrong_method_are_json(api: httpx.Client) -> None:
    response = api.get("/nope")
    assert (response.status_code, response.json()) == (404, {"error": "no such route"})
    response = api.post("/snapshot", json={})
    assert (response.status_code, response.json()) == (405, {"error": "method not allowed"})
    assert response.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize(
    ("path", "methods"), [("/hooks", "GET, HEAD, POST"), ("/push/subscribe", "DELETE, POST")]
)
def test_a_wrong_method_is_told_every_method_of_the_path(api: httpx.Client, path: str, methods: str) -> None:
    response = api.request("OPTIONS", path)
    assert (response.status_code, response.headers["allow"]) == (405, methods)


# GET /sessions/{key} and /sessions/{key}/explain


def test_session_by_key_pid_and_name(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc)
    assert api.get(f"/sessions/{key}").json()["session_key"] == key
    assert api.get(f"/sessions/{proc.pid}").json()["session_key"] == key
    assert api.post(f"/sessions/{key}/name", json={"name": "api: tests"}).status_code == 200
    assert api.get("/sessions/api: tests").json()["session_key"] == key


def test_unknown_session_is_404(api: httpx.Client) -> None:
    for path in ("/sessions/n0:1:2", "/sessions/n0:1:2/explain", "/sessions/999999999", "/sessions/²"):
        response = api.get(path)
        assert response.status_code == 404, path
        assert response.json() == {"error": f"no session {path.split('/')[2]!r}"}


def test_an_ambiguous_name_lists_the_candidates(api: httpx.Client) -> None:
    with sleeper() as one, sleeper() as two:
        keys = [started(api, one), started(api, two)]
        for key in keys:
            assert api.post(f"/sessions/{key}/name", json={"name": "twin"}).status_code == 200
        response = api.get("/sessions/twin")
    assert response.status_code == 409
    assert response.json()["error"] == "the name 'twin' is ambiguous"
    assert sorted(response.json()["candidates"]) == sorted(keys)


def test_explain(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc)
    claim(api, about(proc, source="scan", activity="idle"))
    view = api.get(f"/sessions/{key}/explain").json()
    assert view["session_key"] == key
    assert view["fields"]["activity"]["source"] == "hook"
    assert view["shadowed"]["activity"][0]["source"] == "scan"


# POST /claim


def test_claim_accepted(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    response = claim(api, about(proc, activity="blocked", event="permission", seq=1))
    assert response.status_code == 200
    body = response.json()
    assert body["accepted"] is True and body["reasons"] == [] and body["seq"] >= 1
    assert api.get(f"/sessions/{body['session_key']}").json()["activity"] == "needs_attention"


def test_claim_source_defaults_to_hook_and_rosterds_own_sources_are_refused(
    api: httpx.Client, proc: subprocess.Popen[bytes]
) -> None:
    key = started(api, proc)
    assert api.get(f"/sessions/{key}").json()["sources"] == ["hook"]
    for source in ("launcher", "acp", "integration"):
        response = claim(api, about(proc, source=source, activity="idle"))
        assert response.status_code == 400
        assert response.json() == {"error": f"{source} claims are not accepted over HTTP", "field": "source"}


@pytest.mark.parametrize("listener", ["unix", "tcp"])
def test_no_client_speaks_as_the_launcher_on_either_listener(running: Daemon, listener: str) -> None:
    """Only rosterd speaks for its launcher: a launcher's claim outranks every hook, so one a
    client could post would pin what no agent said. Refused on the socket and on loopback with
    the bearer alike, whether it names a session by key or by process, and nothing changes."""
    with sleeper() as proc, sleeper() as stranger:
        with running.unix() as api:
            key = started(api, proc)
        before = running.snapshot()
        client = running.unix() if listener == "unix" else running.tcp(running.token)
        forged = [
            about(proc, source="launcher", activity="blocked", event="permission"),
            {"source": "launcher", "session_key": key, "activity": "blocked", "fields": {"name": "pinned"}},
            about(stranger, source="launcher", activity="blocked", fields={"lane": "headless"}),
        ]
        with client:
            for body in forged:
                response = claim(client, body)
                assert response.status_code == 400, response.text
                assert response.json() == {
                    "error": "launcher claims are not accepted over HTTP",
                    "field": "source",
                }
        assert claimed(running.snapshot()["records"]) == claimed(before["records"])
        record = running.get(f"/sessions/{key}")
        assert (record["activity"], record["sources"], record["name"]) == ("active", ["hook"], None)
        assert running.get(f"/sessions/{key}/explain")["rejected"] == []
        with running.unix() as api:
            assert api.get(f"/sessions/{stranger.pid}").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "the body is not JSON"),
        (b"", "a JSON body is required"),
        (b"[1, 2]", "the body must be a JSON object"),
        (b'{"source": "gossip", "pid": 1, "start_ticks": 1}', "source must be one of launcher, acp"),
        (b'{"activity": "working"}', "a claim names a session_key or a process"),
        (b'{"pid": 5}', "pid and start_ticks come together"),
        (b'{"pid": 5, "start_ticks": 1, "activity": "dancing"}', "activity must be one of active"),
        (b'{"pid": 5, "start_ticks": 1, "activity": {"a": 1}}', "activity must be one of active"),
        (b'{"pid": 5, "start_ticks": 1, "ended": "exit", "activity": "idle"}', "a claim that ends a session"),
        (b'{"pid": 5, "start_ticks": 1, "fields": {"colour": "red"}}', "fields.colour cannot be set"),
    ],
)
def test_claim_bad_requests_are_400(api: httpx.Client, body: bytes, message: str) -> None:
    response = api.post("/claim", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"].startswith(message)


def test_claim_larger_than_a_recap_holds_is_413(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    """A claim may carry a turn's recap (65,536 characters, however escaped), and no more."""
    body = about(proc, activity="working", fields={"recap": "x" * CLAIM_LIMIT})
    response = claim(api, body)
    assert (response.status_code, response.json()["error"]) == (
        413,
        f"the body is larger than {CLAIM_LIMIT} bytes",
    )

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while streaming too
        yield json.dumps(body).encode()

    response = api.post("/claim", content=chunks())
    assert response.status_code == 413
    assert api.get(f"/sessions/{proc.pid}").status_code == 404


def test_claim_for_an_unknown_session_key_is_404(api: httpx.Client) -> None:
    response = claim(api, {"session_key": "n0:1:2", "activity": "working"})
    assert (response.status_code, response.json()) == (404, {"error": "no session 'n0:1:2'"})


def test_claims_the_roster_refuses_are_409(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    assert claim(api, about(proc, activity="working", seq=5)).status_code == 200
    response = claim(api, about(proc, activity="idle", seq=5))
    assert response.status_code == 409
    assert response.json()["error"] == "replayed: hook seq 5 was already applied"
    assert response.json()["session_key"] == key_of(api.get("/status").json()["node_id"], proc)
    assert claim(api, about(proc, ended="exit")).status_code == 200
    response = claim(api, about(proc, activity="working"))
    assert response.status_code == 409
    assert response.json()["error"].endswith("has ended")


# POST /register


def test_register_a_new_process_then_again(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    body = {
        "pid": proc.pid,
        "harness": "claude",
        "name": "board: puller",
        "cwd": "/tmp",
        "lane": "interactive",
    }
    response = api.post("/register", json=body)
    assert response.status_code == 201, response.text
    record = response.json()["record"]
    assert (record["pid"], record["start_ticks"]) == (proc.pid, pid_start_ticks(proc.pid))
    assert (record["name"], record["harness"], record["sources"]) == ("board: puller", "claude", ["launcher"])
    again = api.post("/register", json={"pid": proc.pid, "start_ticks": pid_start_ticks(proc.pid)})
    assert again.status_code == 200
    assert again.json()["session_key"] == response.json()["session_key"]


def test_register_errors(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    cases = [
        ({}, 400, "pid is required"),
        ({"pid": "12"}, 400, "pid must be a positive integer up to 4194304"),
        ({"pid": 4_000_000}, 404, "no process 4000000 on this node"),
        ({"pid": proc.pid, "start_ticks": 1}, 404, f"process {proc.pid} started at tick 1 has exited"),
        ({"pid": proc.pid, "lane": "sideways"}, 400, "lane must be one of headless, interactive"),
        ({"pid": proc.pid, "name": "x" * 5000}, 413, "the body is larger than 4096 bytes"),
    ]
    for body, status, message in cases:
        response = api.post("/register", json=body)
        assert response.status_code == status, body
        assert response.json()["error"].startswith(message), response.json()


# POST /sessions/{key}/name


def test_name_set_and_clear(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc, fields={"name": "from the hook"})
    response = api.post(f"/sessions/{key}/name", json={"name": "mine"})
    assert response.status_code == 200
    assert response.json()["record"]["name"] == "mine"
    assert claim(api, about(proc, fields={"name": "hook again"})).status_code == 409  # the user's name wins
    response = api.post(f"/sessions/{key}/name", json={"name": None})
    assert response.status_code == 200
    assert response.json()["record"]["name"] == "hook again"


def test_name_errors(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc)
    cases = [
        ({}, 400, "name is required"),
        ({"name": 7}, 400, "name must be non-empty text of 1 to 200 characters, one line"),
        ({"name": "  "}, 400, "name may not be blank"),
        ({"name": "x" * 201}, 400, "name must be non-empty text of 1 to 200 characters, one line"),
    ]
    for body, status, message in cases:
        response = api.post(f"/sessions/{key}/name", json=body)
        assert (response.status_code, response.json()["error"]) == (status, message)
    response = api.post("/sessions/n0:1:2/name", json={"name": "x"})
    assert response.status_code == 404
    response = api.post(f"/sessions/{key}/name", content=b"{", headers={"Content-Type": "application/json"})
    assert response.status_code == 400


def test_naming_an_ended_session_is_409(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    key = started(api, proc)
    assert claim(api, about(proc, ended="exit")).status_code == 200
    response = api.post(f"/sessions/{key}/name", json={"name": "late"})
    assert response.status_code == 409
    assert response.json()["error"] == f"session {key} has ended"
