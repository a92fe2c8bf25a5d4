"""Every POST route of the daemon fed bodies no one chose: never a 5xx, a refusal is the JSON error
shape and changes nothing, and the roster answers afterwards.

The schemathesis run (``test_fuzz.py``) generates from the OpenAPI document, so it only tries
what the document says and what a JSON encoder can write. This one goes where it cannot: nesting
thousands deep, numbers of thousands of digits, ``NaN``, lone surrogates, bytes that are not
UTF-8, text of a megabyte, and hostile values in every field a route reads, on the API routes
and the web app's alike.
"""

from __future__ import annotations

import collections
import json
import subprocess
from urllib.parse import quote

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roost.faces.api.app import ROUTES
from roost.faces.api.web import ROUTES as WEB_ROUTES
from tests.api.helpers import about, claimed

EXAMPLES = 300
COUNTS: collections.Counter[str] = collections.Counter()
"""Across the run: inputs tried and answers by class, for the closing summary."""

PATHS = sorted(r.path for r in (*ROUTES, *WEB_ROUTES) if "POST" in (getattr(r, "methods", None) or ()))
KEYS = st.sampled_from(["REAL", "%251%3B", "..", "%00", "n0de:1:1", "x" * 3000, "%F0%9F%A6%89"])

TEXT = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"]), max_size=6),
    st.sampled_from(["\x1b]0;pwned\x07\x1b[2J", "semi;", "%1;", "\u202e", "x" * 1_000_000, "http://[::1"]),
)
NUMBER = st.one_of(st.integers(), st.floats(), st.sampled_from([-1, 0, 1 << 22, 10**30, 1e20, 2**63]))
VALUE = st.recursive(
    st.none() | st.booleans() | NUMBER | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=10,
)
FIELDS = [
    "text", "name", "data", "keys", "endpoint", "session", "revision", "status_epoch", "occupant_id",
    "deadline_ms", "timeout", "harness", "cwd", "command", "pid", "start_ticks", "source", "activity",
    "fields", "turn", "state", "args", "label", "viewing", "p256dh", "auth",
]  # fmt: skip
OBJECT = st.dictionaries(st.sampled_from(FIELDS), VALUE, max_size=5)
RAW = st.sampled_from(
    [
        b"",
        b"[" * 3000 + b"]" * 3000,
        b'{"text":' + b"[" * 3000 + b"]" * 3000 + b"}",
        b'{"revision": ' + b"9" * 5000 + b"}",
        b'{"revision": 1e999999}',
        b'{"text": NaN, "revision": Infinity}',
        b'{"text": "\\ud800", "name": "\\udfff"}',
        b'{"text": "\xff\xfe"}',
        b"\x00" * 100,
        b'{"a":1,"a":2}',
        b'{"text": "hello"',
    ]
)
BODY = st.one_of(
    OBJECT.map(lambda doc: json.dumps(doc).encode("utf-8", "surrogatepass")),
    VALUE.map(lambda doc: json.dumps(doc).encode("utf-8", "surrogatepass")),
    RAW,
)


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def session(api: httpx.Client, proc: subprocess.Popen[bytes]) -> str:
    """A real session's key, path-encoded: what a route's lookup finds, for bodies to get past it."""
    assert api.post("/claim", json=about(proc, activity="working", event="prompt")).status_code == 200
    return quote(api.get("/snapshot").json()["records"][0]["session_key"], safe="")


def test_no_body_on_any_post_route_gets_a_server_error(
    api: httpx.Client, proc: subprocess.Popen[bytes]
) -> None:
    real = session(api, proc)

    @SETTINGS
    @given(path=st.sampled_from(PATHS), key=KEYS, body=BODY)
    def run(path: str, key: str, body: bytes) -> None:
        target = path.replace("{key}", real if key == "REAL" else key)
        before = api.get("/snapshot").json()["records"]
        response = api.post(target, content=body, headers={"Content-Type": "application/json"})
        COUNTS["inputs"] += 1
        COUNTS[f"{response.status_code // 100}xx"] += 1
        assert response.status_code < 500, (target, body[:200], response.status_code, response.text[:300])
        if response.status_code >= 400:
            assert response.headers["content-type"] == "application/json", response.text[:200]
            assert isinstance(response.json()["error"], str)
            assert claimed(api.get("/snapshot").json()["records"]) == claimed(before), (target, body[:200])

    run()
    assert api.get("/status").status_code == 200
    print(f"hostile bodies: {dict(COUNTS)}")


QUERY_VALUE = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["9" * 5000, "-1", "1:" + "9" * 5000, "0x10", "1e9", "NaN", "%00", "\x00", "1;2", ""]),
)
GET_PATHS = sorted(
    r.path for r in (*ROUTES, *WEB_ROUTES) if "GET" in (getattr(r, "methods", None) or ()) and r.path != "/"
)
QUERY_NAMES = ["since", "status_epoch", "terminals", "lines", "key", "session", "turn", "json"]


def test_no_path_or_query_on_any_get_route_gets_a_server_error(
    api: httpx.Client, proc: subprocess.Popen[bytes]
) -> None:
    """The streams answer a good query with a stream that never ends: only its status is read."""
    real = session(api, proc)

    @SETTINGS
    @given(
        path=st.sampled_from(GET_PATHS),
        key=KEYS,
        query=st.dictionaries(st.sampled_from(QUERY_NAMES), QUERY_VALUE, max_size=3),
    )
    def run(path: str, key: str, query: dict[str, str]) -> None:
        target = path.replace("{key}", real if key == "REAL" else key)
        target = target.replace("{session}", real if key == "REAL" else key).replace("{pane}", "%250")
        with api.stream("GET", target, params=query) as response:
            COUNTS["queries"] += 1
            COUNTS[f"GET {response.status_code // 100}xx"] += 1
            assert response.status_code < 500, (target, query, response.status_code)
            if response.status_code >= 400:
                response.read()
                assert isinstance(response.json()["error"], str), response.text[:200]

    run()
    assert api.get("/status").status_code == 200
    print(f"hostile queries: {dict(COUNTS)}")
