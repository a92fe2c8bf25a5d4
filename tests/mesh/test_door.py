"""The listener's door, in process: a member's signed request reaches its route with the member
in ``request.state``; anything else gets the same 401 before routing, counted by its reason;
the join path is the one open door."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.remote.mesh import listener
from roost.remote.mesh.membership import Membership
from roost.remote.swarm import signing
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.members import MAX_SET_DOCUMENT
from tests.mesh.presenting import presenting

REFUSED = (401, {"error": "refused"})


async def _whoami(request: Request) -> JSONResponse:
    return JSONResponse({"peer": listener.peer(request).node_id, "body": (await request.body()).decode()})


async def _join(request: Request) -> JSONResponse:
    return JSONResponse({"open": True})


def _exchange(app: object, method: str, target: str, body: bytes = b"", headers: dict | None = None) -> tuple:
    async def go() -> tuple:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="https://node") as client:
            answer = await client.request(method, target, content=body, headers=headers or {})
        return answer.status_code, answer.json()

    return asyncio.run(go())


def test_only_a_members_signed_request_reaches_a_route(tmp_path: Path) -> None:
    me = Identity.generate("me")
    membership = Membership(tmp_path, me, name="me", address="127.0.0.1:8791", version="t", clock=time.time)
    membership.invite(60)
    refusals = listener.Refusals()
    door = listener.app(
        membership,
        [listener.route("/echo", _whoami), listener.route(listener.JOIN, _join)],
        refusals,
    )
    app, bare = presenting(door, me.certificate()), presenting(door, None)
    key = membership.swarm.swarm_key
    signed = signing.sign(me, key, "POST", "/echo?x=1", b"hi", to="me", now=time.time())
    assert _exchange(app, "POST", "/echo?x=1", b"hi", signed) == (200, {"peer": "me", "body": "hi"})
    assert _exchange(app, "POST", "/echo?x=1", b"hi", signed) == REFUSED  # replayed
    assert _exchange(app, "POST", "/echo", b"") == REFUSED  # unsigned
    assert _exchange(app, "GET", "/nowhere") == REFUSED  # unsigned, and no such route: the same
    elsewhere = signing.sign(me, key, "POST", "/echo", b"", to="other", now=time.time())
    assert _exchange(app, "POST", "/echo", b"", elsewhere) == REFUSED  # signed for another node
    stranger = Identity.generate("stranger")
    as_stranger = signing.sign(stranger, key, "POST", "/echo", b"", to="me", now=time.time())
    assert (
        _exchange(app, "POST", "/echo", b"", as_stranger) == REFUSED
    )  # another node's words on my connection
    assert _exchange(presenting(door, stranger.certificate()), "POST", "/echo", b"", as_stranger) == REFUSED
    too_big = signing.sign(me, key, "POST", "/echo", b"x" * (listener.MAX_BODY + 1), to="me", now=time.time())
    assert _exchange(app, "POST", "/echo", b"x" * (listener.MAX_BODY + 1), too_big) == REFUSED
    assert _exchange(bare, "POST", "/echo", b"", signed) == REFUSED  # no certificate: a join or nothing
    assert _exchange(bare, "POST", listener.JOIN, b"{}") == (200, {"open": True})
    assert _exchange(bare, "POST", listener.JOIN, b"x" * (listener.JOIN_BODY + 1)) == REFUSED
    assert _exchange(bare, "GET", listener.JOIN) == REFUSED  # open to a POST only
    assert dict(refusals) == {
        "replayed": 1,
        "malformed": 2,
        "wrong_recipient": 1,
        "unknown_node": 2,
        "too_large": 2,
        "no_certificate": 2,
    }


def test_a_hello_may_carry_the_whole_member_set_and_no_more(tmp_path: Path) -> None:
    """A hello to a node never heard from carries every member record and introduction: past the
    1 MiB other routes take at ~700 members. Its route takes MAX_SET_DOCUMENT, and no more."""
    me = Identity.generate("me")
    membership = Membership(tmp_path, me, name="me", address="127.0.0.1:8791", version="t", clock=time.time)
    membership.invite(60)
    refusals = listener.Refusals()
    door = listener.app(membership, [listener.route(listener.HELLO, _whoami)], refusals)
    app, key = presenting(door, me.certificate()), membership.swarm.swarm_key
    for size, answered in (
        (listener.MAX_BODY + 1, 200),
        (MAX_SET_DOCUMENT, 200),
        (MAX_SET_DOCUMENT + 1, 401),
    ):
        body = b"x" * size
        signed = signing.sign(me, key, "POST", listener.HELLO, body, to="me", now=time.time())
        assert _exchange_status(app, "POST", listener.HELLO, body, signed) == answered
    assert dict(refusals) == {"too_large": 1}


def _exchange_status(app: object, method: str, target: str, body: bytes, headers: dict) -> int:
    async def go() -> int:
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="https://node") as client:
            return (await client.request(method, target, content=body, headers=headers)).status_code

    return asyncio.run(go())
