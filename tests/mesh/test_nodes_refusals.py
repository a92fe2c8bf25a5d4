"""On the wire, against a real daemon in its namespace: only a member's signed request reaches a
route, once, for the path and query it was signed for, within the clock skew; every other gets
the same 401 and learns nothing (not why, not whether the path exists)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from roost.remote.swarm import canonical, hello
from roost.remote.swarm.identity import Identity
from tests.mesh.swarmnodes import Peer, handshake_refused, make
from tests.nodes import Network

REFUSED = (401, b'{"error":"refused"}')


def answer(response: httpx.Response) -> tuple[int, bytes]:
    return response.status_code, response.content


def test_stranger_replayed_skewed_forged_and_retargeted_requests_are_refused_alike(
    network: Network, tmp_path: Path
) -> None:
    a, b = make(network, tmp_path, 2)
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    trusted = [a.identity().certificate()]
    as_b = Peer(b.identity(), b.swarm_key(), trusted)
    own = b.nodes()
    greeting = hello.make(
        b.identity(),
        name="n2",
        version="test",
        swarm_id=str(own["swarm_id"]),
        address=b.address,
        capabilities=[],
        members=[],
        now=time.time(),
    )
    body = canonical.encode(greeting)
    to_a = a.identity().node_id

    # the member itself: signed, answered with a's hello
    assert as_b.hello(a.address, greeting, to=to_a).status_code == 200

    # replayed: the very same headers and body again
    signed = as_b.headers("POST", "/swarm/hello", body, to=to_a)
    assert as_b.send(a.address, "POST", "/swarm/hello", body, signed).status_code == 200
    assert answer(as_b.send(a.address, "POST", "/swarm/hello", body, signed)) == REFUSED

    # re-targeted: signed for one query, sent with another; for one path, sent to another; for
    # another node, sent here
    signed = as_b.headers("POST", "/swarm/hello?round=1", body, to=to_a)
    assert answer(as_b.send(a.address, "POST", "/swarm/hello?round=2", body, signed)) == REFUSED
    signed = as_b.headers("POST", "/swarm/other", body, to=to_a)
    assert answer(as_b.send(a.address, "POST", "/swarm/hello", body, signed)) == REFUSED
    signed = as_b.headers("POST", "/swarm/hello", body, to=b.identity().node_id)
    assert answer(as_b.send(a.address, "POST", "/swarm/hello", body, signed)) == REFUSED

    # forged: the body changed after signing
    signed = as_b.headers("POST", "/swarm/hello", body, to=to_a)
    assert answer(as_b.send(a.address, "POST", "/swarm/hello", body + b" ", signed)) == REFUSED

    # skewed: a clock two minutes off, either way
    for off in (-120, 120):
        assert answer(as_b.hello(a.address, greeting, now=time.time() + off, to=to_a)) == REFUSED

    # another swarm's key
    elsewhere = Peer(b.identity(), bytes(32), trusted)
    assert answer(elsewhere.hello(a.address, greeting, to=to_a)) == REFUSED

    # a stranger: its certificate dies in the handshake; with none, its signed request is refused
    stranger = Identity.generate("stranger")
    assert handshake_refused(Peer(stranger, b.swarm_key(), trusted), a.address)
    bare = Peer(None, b.swarm_key(), trusted)
    bare.identity = stranger
    assert answer(bare.hello(a.address, greeting, to=to_a)) == REFUSED
    # and b's own signature, with no certificate: a request from no member
    bare.identity = b.identity()
    assert answer(bare.hello(a.address, greeting, to=to_a)) == REFUSED
    # unsigned: a route that exists, one that does not, and a session path, all alike
    for target in ("/swarm/hello", "/swarm/nowhere", "/sessions/x", "/snapshot"):
        assert answer(bare.send(a.address, "GET", target)) == REFUSED
        assert answer(as_b.send(a.address, "GET", target)) == REFUSED

    refused = a.nodes()["refused"]
    assert refused == {
        "bad_signature": 3,
        "malformed": 4,
        "no_certificate": 6,
        "other_swarm": 1,
        "replayed": 1,
        "skew": 2,
        "wrong_recipient": 1,
    }, refused
    # and the client that trusts only another node's certificate never sends a byte to a
    assert handshake_refused(Peer(b.identity(), b.swarm_key(), [stranger.certificate()]), a.address)
