"""Hostile request bodies, cursors and push endpoints get a 4xx with the JSON error shape.

Each case here used to answer 500: a body nested thousands deep failed inside the JSON parser
(RecursionError), ``?since=`` with thousands of digits inside ``int()``, and an endpoint with an
unclosed IPv6 bracket inside ``urlsplit``. The roster must answer as before afterwards.
"""

from __future__ import annotations

import subprocess
from urllib.parse import quote

import httpx
import pytest

from roost.faces.api.app import ROUTES
from roost.faces.api.web import ROUTES as WEB_ROUTES
from tests.api.helpers import about, claimed

DEEP = b"[" * 2000 + b"]" * 2000
DEEP_MIXED = b'[{"":' * 580 + b"1" + b"}]" * 580
"""1,160 deep, objects within arrays, inside the 4 KiB most routes take."""
BODIES = {"/login-link", "/sessions/{key}/seen"}
"""POST routes that read no body."""


def post_routes() -> list[str]:
    paths = [r.path_format for r in (*ROUTES, *WEB_ROUTES) if "POST" in (getattr(r, "methods", None) or ())]
    return [path for path in paths if path not in BODIES]


def refused(response: httpx.Response) -> str:
    assert response.status_code == 400, (response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/json"
    return str(response.json()["error"])


@pytest.mark.parametrize("path", post_routes())
@pytest.mark.parametrize("body", [DEEP, DEEP_MIXED], ids=["arrays", "mixed"])
def test_a_body_nested_thousands_deep_is_a_400_on_every_post_route(
    api: httpx.Client, proc: subprocess.Popen[bytes], path: str, body: bytes
) -> None:
    assert api.post("/claim", json=about(proc, activity="working", event="prompt")).status_code == 200
    before = api.get("/snapshot").json()["records"]
    target = path.replace("{key}", quote(before[0]["session_key"], safe=""))
    target = target.replace("{node}", before[0]["node"])  # this node: the route's own refusal
    response = api.post(target, content=body, headers={"Content-Type": "application/json"})
    assert "deep" in refused(response)
    assert claimed(api.get("/snapshot").json()["records"]) == claimed(before)


def test_a_body_of_ordinary_depth_with_brackets_in_strings_is_read(
    api: httpx.Client, proc: subprocess.Popen[bytes]
) -> None:
    claim = about(proc, activity="working", event="prompt", fields={"name": "[[[[" * 20 + '"{'})
    assert api.post("/claim", json=claim).status_code == 200


@pytest.mark.parametrize("since", ["9" * 5000, "1:" + "9" * 5000, "9" * 5000 + ":1"])
def test_a_cursor_of_thousands_of_digits_is_a_400(api: httpx.Client, since: str) -> None:
    response = api.get("/changes", params={"since": since})
    assert "since" in refused(response)
    assert len(response.text) < 400
    response = api.get("/changes", headers={"Last-Event-ID": "9" * 5000})
    assert "since" in refused(response)


@pytest.mark.parametrize("endpoint", ["http://[::1", "https://[zz]/push", "http://[::1/x"])
@pytest.mark.parametrize("path", ["/push/subscribe", "/push/viewing"])
def test_a_push_endpoint_urlsplit_refuses_is_a_400(api: httpx.Client, path: str, endpoint: str) -> None:
    keys = {"p256dh": "BA" + "A" * 85, "auth": "A" * 22}
    response = api.post(path, json={"endpoint": endpoint, "keys": keys, "session": None})
    assert "endpoint" in refused(response)
