"""The swarm's trust model (``docs/swarm.md``, "The trust model") against real daemons, each in
its own network, PID and mount namespace on a 100.64 bridge: a stranger, and a member
(``mallory``, the third node) whose ``node.key`` and ``swarm.json`` the attacker holds, try each
way in that the rules forbid, and each is refused with nothing changed anywhere."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import secrets
import socket
import ssl
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from roost.remote.swarm import canonical, hello, invites, members
from roost.remote.swarm.identity import Identity
from roost.truth.roster import records
from tests.conftest import REPO
from tests.mesh.swarmnodes import PORT, Peer, SwarmNode, handshake_refused, make
from tests.mesh.unionnodes import daemon_pid, session, snapshot, swarm
from tests.nodes import Network, ip

REFUSED = {"error": "refused"}


def rows(node: SwarmNode) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in node.nodes()["nodes"]}


def certificates(*nodes: SwarmNode) -> list[bytes]:
    return [node.identity().certificate() for node in nodes]


def as_node(node: SwarmNode, *trusted: SwarmNode) -> Peer:
    """The test on the wire with ``node``'s key and certificate (an attacker that holds them)."""
    return Peer(node.identity(), node.swarm_key(), certificates(*trusted))


def greeting(identity: Identity, swarm_id: str, name: str, address: str, said: list[object]) -> dict:
    return hello.make(
        identity,
        name=name,
        version="test",
        swarm_id=swarm_id,
        address=address,
        capabilities=[],
        members=said,
        now=time.time(),
    )


def gateway(node: SwarmNode) -> str:
    return node.node.address.rsplit(".", 1)[0] + ".1"


def stranger_joins(node: SwarmNode, token: str, swarm_id: str) -> httpx.Response:
    """A stranger with a fresh identity posts ``token`` to ``node``'s join route."""
    stranger = Identity.generate(secrets.token_hex(8))
    said = greeting(stranger, swarm_id, "intruder", f"{gateway(node)}:{PORT}", [])
    bare = Peer(None, b"", certificates(node))
    body = canonical.encode({"token": token, "hello": said})
    return bare.send(node.address, "POST", "/swarm/join", body, {"content-type": "application/json"})


def hostile(keys: SwarmNode, at: SwarmNode, events: list[object], root: Path, log: Path | None = None) -> Any:
    """A server with ``keys``' key and certificate (a member's key in the wrong hands) at
    ``at``'s address, in ``at``'s namespace, serving ``events`` as its roster stream."""
    said = root / f"events-{secrets.token_hex(3)}.json"
    said.write_text(json.dumps(events))
    env = {**keys.env, **({"HOSTILE_LOG": str(log)} if log is not None else {})}
    argv = [
        sys.executable,
        "-m",
        "tests.fakes.hostile_peer",
        str(keys.config_dir),
        at.node.address,
        str(PORT),
    ]
    return at.node.start(*argv, str(said), cwd=str(REPO), env=env)


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS:")).split()[1])


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def settle(probe: Any, wanted: Any, timeout: float) -> Any:
    """Poll ``probe()`` until ``wanted(value)`` holds; the last value either way."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not wanted(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = probe()
    return value


def test_an_invite_admits_once_in_the_whole_swarm(network: Network, tmp_path: Path) -> None:
    """1: a used token posted to another member than its admitter admits nobody there; only the
    admitter it names honours a token, and only one it issued."""
    a, b = make(network, tmp_path, 2)
    token = a.ok("invite").strip()
    b.ok("join", a.address, "--token", token)
    swarm_id = str(a.nodes()["swarm_id"])

    at_b = stranger_joins(b, token, swarm_id)
    assert at_b.status_code == 401 and at_b.json()["code"] == "not_admitter"
    assert a.identity().node_id in at_b.json()["error"] and a.address in at_b.json()["error"]
    assert stranger_joins(a, token, swarm_id).json()["code"] == "used"

    fresh = a.ok("invite").strip()
    assert stranger_joins(b, fresh, swarm_id).json()["code"] == "not_admitter"  # not even unused
    # a token tagged with the swarm key (every member, and every revoked one, holds it) names a
    forged = invites.make(swarm_id, b.swarm_key(), a.identity(), a.address, now=time.time())
    assert stranger_joins(a, forged, swarm_id).json()["code"] == "not_issued"
    assert sorted(rows(a)) == sorted(rows(b)) == ["n1", "n2"]  # nobody got in

    assert stranger_joins(a, fresh, swarm_id).status_code == 200  # the fresh one admits, once
    assert stranger_joins(a, fresh, swarm_id).json()["code"] == "used"
    for node in (a, b):
        assert sorted(settle(lambda node=node: list(rows(node)), lambda names: len(names) == 3, 5)) == [
            "intruder",
            "n1",
            "n2",
        ]


def test_no_member_can_change_anothers_record_nor_answer_in_its_place(
    network: Network, tmp_path: Path
) -> None:
    """2: mallory signs a record of bravo at mallory's address: nobody takes it. And when
    mallory answers at bravo's address with its own key, alpha's dialer, which pins bravo's
    certificate, sends it nothing: no prompt, no name, no made-up answer."""
    a, b, m = swarm(network, tmp_path, 3)
    b_id, m_id = b.identity().node_id, m.identity().node_id
    before = rows(a)["n2"]
    assert before["signer"] == b_id  # bravo signed its own record once it had joined
    takeover = members.record(
        m.identity(),
        node_id=b_id,
        name="n2",
        public_key=b.identity().public_key,
        x25519_public_key=b.identity().x25519_public_key,
        address=m.address,
        now=time.time(),
        certificate=b.identity().certificate(),
    )
    swarm_id = str(a.nodes()["swarm_id"])
    said = greeting(m.identity(), swarm_id, "n3", m.address, [takeover])
    assert as_node(m, a).hello(a.address, said, to=a.identity().node_id).status_code == 200
    assert rows(a)["n2"] == before
    assert a.nodes()["records_dropped"] == {"not_own": 1}

    key = session(b)
    a.wait_for(lambda: any(r["session_key"] == key for r in snapshot(a)["records"]), "a hears b's session")
    b.stop()
    log = tmp_path / "impostor.log"
    hostile(m, b, [], tmp_path, log)
    assert settle(
        lambda: rows(a)["n2"]["link_error"] or "",
        lambda error: "not the one this node means to reach" in error,
        20,
    )
    done = a.rosterd("name", key, "renamed")
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert not log.exists() or log.read_text() == ""  # nothing reached mallory's HTTP at all
    assert rows(a)["n2"]["address"] == b.address and m_id != b_id


def test_a_request_signed_for_one_member_is_refused_by_every_other(network: Network, tmp_path: Path) -> None:
    """3: a request alpha signed for mallory, replayed by mallory to bravo, is not alpha's."""
    a, b, m = swarm(network, tmp_path, 3)
    b_id, m_id = b.identity().node_id, m.identity().node_id
    swarm_id = str(a.nodes()["swarm_id"])
    body = canonical.encode(greeting(a.identity(), swarm_id, "n1", a.address, []))
    alpha = as_node(a, b, m)
    for_m = alpha.headers("POST", "/swarm/hello", body, to=m_id)
    mallory = as_node(m, b)
    replayed = mallory.send(b.address, "POST", "/swarm/hello", body, for_m)  # over mallory's TLS
    assert (replayed.status_code, replayed.json()) == (401, REFUSED)
    again = alpha.send(b.address, "POST", "/swarm/hello", body, for_m)  # even over alpha's own
    assert (again.status_code, again.json()) == (401, REFUSED)
    # and alpha's words for bravo itself, were mallory to hold them, are not alpha's on its line
    for_b = alpha.headers("POST", "/swarm/hello", body, to=b_id)
    borrowed = mallory.send(b.address, "POST", "/swarm/hello", body, for_b)
    assert (borrowed.status_code, borrowed.json()) == (401, REFUSED)
    refused = b.nodes()["refused"]
    assert refused == {"wrong_recipient": 2, "wrong_node": 1}, refused
    assert alpha.send(m.address, "POST", "/swarm/hello", body, for_m).status_code == 200  # its own
    assert b.nodes()["nodes"][0]["node_id"] == b_id


def test_a_revocation_is_final_and_the_revoked_node_knows_it(network: Network, tmp_path: Path) -> None:
    """4: mallory's record of itself dated five minutes ahead is refused; once alpha revokes it,
    nothing mallory or anyone sends undoes that, on any node, after any round; mallory is told,
    says so, and acts as a member no more."""
    a, b, m = swarm(network, tmp_path, 3)
    a_id, b_id, m_id = (node.identity().node_id for node in (a, b, m))
    swarm_id = str(a.nodes()["swarm_id"])
    mallory = as_node(m, a, b)
    ahead = members.own_record(m.identity(), "n3", m.address, time.time() + 300)
    assert (
        mallory.hello(
            b.address, greeting(m.identity(), swarm_id, "n3", m.address, [ahead]), to=b_id
        ).status_code
        == 200
    )
    assert rows(b)["n3"]["signed_at_ms"] < (time.time() + 60) * 1000  # dropped as from the future

    a.ok("revoke", m_id)
    for node in (a, b):
        row = rows(node)["n3"]
        assert (row["revoked"], row["revoked_by"]) == (True, a_id)

    # a record of mallory's own, dated within the skew, relayed by alpha: still revoked
    later = members.own_record(m.identity(), "n3", m.address, time.time() + 59)
    relayed = greeting(a.identity(), swarm_id, "n1", a.address, [later])
    assert as_node(a, b).hello(b.address, relayed, to=b_id).status_code == 200
    direct = mallory.hello(b.address, greeting(m.identity(), swarm_id, "n3", m.address, [later]), to=b_id)
    assert direct.status_code == 401 and direct.json()["revoked"][0]["node_id"] == m_id
    assert rows(b)["n3"]["revoked_by"] == a_id

    # mallory was told, and acts as a member no more
    told = m.nodes()
    assert told["revoked"]["by"] == a_id
    assert [row["name"] for row in told["nodes"] if row["reachable"]] == []
    refused = m.rosterd("invite")
    assert refused.returncode == 1 and "was revoked" in refused.stderr
    assert [row["node"] for row in snapshot(m)["nodes"]] == ["n3"]

    # bravo restarts (a round at start greets everyone it knows): the revocation stands
    b.stop()
    b.start()
    settle(lambda: b.nodes()["rounds"], lambda done: done >= 1, 10)
    assert rows(b)["n3"]["revoked_by"] == a_id and rows(b)["n1"]["reachable"] is True


def revoked_everywhere(nodes: list[SwarmNode], expected: tuple[bool, bool, bool]) -> None:
    """Every node in ``nodes`` comes to say that n1, n2 and n3 are (or are not) revoked."""
    for node in nodes:
        seen = settle(
            lambda node=node: {row["name"]: row["revoked"] for row in node.nodes()["nodes"]},
            lambda said: (said["n1"], said["n2"], said["n3"]) == expected,
            30,
        )
        assert (seen["n1"], seen["n2"], seen["n3"]) == expected, (node.name, seen)


def test_two_members_that_revoke_each_other_are_both_out_everywhere(network: Network, tmp_path: Path) -> None:
    """The owner revokes a stolen key while the thief, its cable pulled, revokes the owner: each
    revocation is signed before either is heard, so each node's door has shut the other out
    before its revocation got through. Once the cable is back both are out on every node."""
    a, b, m = swarm(network, tmp_path, 3)
    a_id, m_id = a.identity().node_id, m.identity().node_id
    m.node.partition()
    try:
        owner = a.rosterd("revoke", m_id)
        thief = m.rosterd("revoke", a_id)
    finally:
        m.node.heal()
    assert (owner.returncode, thief.returncode) == (0, 0), (owner.stderr, thief.stderr)
    revoked_everywhere([a, b, m], (True, False, True))
    assert a.nodes()["revoked"]["by"] == m_id and m.nodes()["revoked"]["by"] == a_id


def test_two_members_racing_to_revoke_each_other_end_as_the_race_went(
    network: Network, tmp_path: Path
) -> None:
    """The same, both linked: whichever revocation each node heard first, every node ends the
    same. The thief's may come too late to be signed (the owner's reached it first, and a
    revoked node acts as a member no more); then the owner stays and the thief alone is out."""
    a, b, m = swarm(network, tmp_path, 3)
    a_id, m_id = a.identity().node_id, m.identity().node_id
    done: dict[str, Any] = {}
    racers = [
        threading.Thread(target=lambda: done.update(owner=a.rosterd("revoke", m_id))),
        threading.Thread(target=lambda: done.update(thief=m.rosterd("revoke", a_id))),
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert done["owner"].returncode == 0, done["owner"].stderr
    thief = done["thief"]
    signed = thief.returncode == 0
    assert signed or (thief.returncode == 1 and "no member any more" in thief.stderr), thief.stderr
    revoked_everywhere([a, b, m], (signed, False, True))
    assert m.nodes()["revoked"]["by"] == a_id
    assert (a.nodes()["revoked"] or {}).get("by") == (m_id if signed else None)


def _tls(address: str) -> ssl.SSLSocket:
    """A stranger's TLS connection to ``address``: it checks nothing and presents no certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    host, port = address.rsplit(":", 1)
    raw = socket.create_connection((host, int(port)), timeout=10)
    return context.wrap_socket(raw, server_hostname=None)


def _answer(connection: ssl.SSLSocket, timeout: float) -> bytes:
    """Whatever the server sends until it closes, within ``timeout``."""
    connection.settimeout(timeout)
    got = b""
    with contextlib.suppress(OSError):
        while chunk := connection.recv(65536):
            got += chunk
    return got


def test_nothing_before_authentication_costs_more_than_kilobytes_and_seconds(
    network: Network, tmp_path: Path
) -> None:
    """5: eight half-sent 22 MiB bodies from a stranger are refused after their headers, with
    nothing read; a join's body is cut at 16 KiB; a member's stalled body at its deadline."""
    a, b = swarm(network, tmp_path, 2)
    pid = daemon_pid(a)
    before = rss_kib(pid)
    held = []
    for path in ["/swarm/handoff"] * 8 + ["/swarm/join"] * 2:
        connection = _tls(a.address)
        head = f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {22 << 20}\r\n\r\n"
        with contextlib.suppress(OSError):  # the door may close before all of it is sent
            connection.sendall(head.encode() + b"x" * (256 << 10))
        held.append(connection)
    started = time.monotonic()
    for connection in held:
        said = _answer(connection, 5)  # a 401, or a reset that overtook it: either way, closed
        assert said == b"" or said.startswith(b"HTTP/1.1 401"), said[:80]
        connection.close()
    assert time.monotonic() - started < 5
    assert rss_kib(pid) - before < 16 * 1024, (before, rss_kib(pid))
    refused = a.nodes()["refused"]
    assert refused.get("no_certificate") == 8 and refused.get("too_large") == 2, refused

    # a join sent in chunks, no length given: cut at 16 KiB
    connection = _tls(a.address)
    connection.sendall(b"POST /swarm/join HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
    with contextlib.suppress(OSError):
        for _ in range(8):
            connection.sendall(b"1000\r\n" + b"x" * 4096 + b"\r\n")
    said = _answer(connection, 5)
    assert said == b"" or said.startswith(b"HTTP/1.1 401")
    assert a.nodes()["refused"]["too_large"] == 3

    # a member's body that stops half way is cut at its deadline (by the 512 KiB it says it has)
    member = as_node(b, a)
    body = b"{" + b" " * (512 << 10)
    signed = member.headers("POST", "/swarm/hello", body + b"}", to=a.identity().node_id)
    context = member.context
    host, port = a.address.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as raw, context.wrap_socket(raw) as connection:
        head = "".join(f"{k}: {v}\r\n" for k, v in signed.items())
        connection.sendall(
            f"POST /swarm/hello HTTP/1.1\r\nhost: x\r\n{head}content-length: {len(body) + 1}\r\n\r\n".encode()
            + body
        )
        started = time.monotonic()
        said = _answer(connection, 30)
        assert said.startswith(b"HTTP/1.1 401") and 10 <= time.monotonic() - started < 20
    assert a.nodes()["refused"]["body_timeout"] == 1


@contextlib.contextmanager
def _many_addresses(network: Network, count: int) -> Iterator[list[str]]:
    """``count`` more addresses of the nodes' network on the test's end of the bridge, to come
    from (they go with the bridge at teardown, and are taken off here)."""
    made = [f"100.64.{network.subnet}.{200 + index}" for index in range(count)]
    for address in made:
        ip("addr", "add", f"{address}/24", "dev", network.bridge)
    try:
        yield made
    finally:
        for address in made:
            ip("addr", "del", f"{address}/24", "dev", network.bridge, check=False)


def test_idle_half_sent_and_countless_connections_are_bounded_and_closed(
    network: Network, tmp_path: Path
) -> None:
    """6: connections that say nothing are closed at the handshake's deadline, a handshake with no
    request at the header deadline; a flood of them from many addresses never takes the daemon
    past its budget, a member still gets through it, and every descriptor comes back."""
    a, b = swarm(network, tmp_path, 2)
    key = session(a)
    pid = daemon_pid(a)
    limits = a.nodes()["connections"]["limits"]
    base = descriptors(pid)
    host = a.node.address

    silent = [socket.create_connection((host, PORT), timeout=10) for _ in range(200)]
    time.sleep(1)
    assert descriptors(pid) <= base + limits["stranger_per_address"] + 2
    assert settle(lambda: descriptors(pid), lambda n: n <= base + 1, limits["handshake_s"] + 3) <= base + 1
    for connection in silent:
        connection.close()

    idle = [_tls(a.address) for _ in range(4)]  # a handshake, then not a byte
    started = time.monotonic()
    for connection in idle:
        assert _answer(connection, limits["header_s"] + 5) == b""
    assert limits["header_s"] - 1 <= time.monotonic() - started <= limits["header_s"] + 3
    dribble = _tls(a.address)
    dribble.sendall(b"GET /swarm/hello HTTP/1.1\r\n")
    started = time.monotonic()
    for _ in range(int(limits["header_s"]) + 4):  # a header line every second, never the end
        with contextlib.suppress(OSError):
            dribble.sendall(b"x-slow: 1\r\n")
        time.sleep(1)
    assert _answer(dribble, 2) == b"" and time.monotonic() - started <= limits["header_s"] + 6

    # in earnest: 32 addresses, 150 connections each, as fast as they open
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))
    flood: list[socket.socket] = []
    stop = threading.Event()
    try:
        with _many_addresses(network, 32) as sources:

            def open_from(source: str) -> None:
                while not stop.is_set():
                    with contextlib.suppress(OSError):
                        connection = socket.socket()
                        connection.bind((source, 0))
                        connection.settimeout(2)
                        connection.connect((host, PORT))
                        flood.append(connection)
                    if len(flood) >= 32 * 150:
                        stop.wait(0.05)

            openers = [threading.Thread(target=open_from, args=(source,)) for source in sources]
            for opener in openers:
                opener.start()
            peak = base
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline:
                peak = max(peak, descriptors(pid))
                time.sleep(0.05)
            # a member gets through the flood, and the daemon answers its own socket
            read = b.rosterd("read", key)
            assert read.returncode == 0, read.stderr
            assert a.get("/status").status_code == 200
            stop.set()
            for opener in openers:
                opener.join()
            # the strangers' share, and the batches taken in whose descriptors go on the next turns
            assert peak <= base + limits["strangers"] + 4 * limits["backlog"] + 8, (base, peak)
            assert a.nodes()["connections"]["refused"].get("stranger_per_address", 0) > 1000
    finally:
        stop.set()
        for connection in flood:
            connection.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert settle(lambda: descriptors(pid), lambda n: n <= base + 2, limits["handshake_s"] + 3) <= base + 2


def test_a_hostile_members_endless_or_oversized_roster_stream_ends_its_link_and_costs_bounded_memory(
    network: Network, tmp_path: Path
) -> None:
    a, _, m = swarm(network, tmp_path, 3)
    m_id = m.identity().node_id
    pid = daemon_pid(a)
    a.wait_for(lambda: rows(a)["n3"]["reachable"], "a hears m")
    m.stop()
    before = rss_kib(pid)
    endless = hostile(m, m, [["endless", None]], tmp_path)
    error = settle(lambda: rows(a)["n3"]["link_error"] or "", lambda error: "longer than" in error, 30)
    assert "longer than" in error, (error, (tmp_path / "hostile.log").read_text())
    assert rss_kib(pid) - before < 96 * 1024, (before, rss_kib(pid))
    m.node.end(endless)

    oversized = {
        "schema": records.SCHEMA,
        "node": "n3",
        "node_id": m_id,
        "records": [{"session_key": f"{m_id}:{n}:1"} for n in range(10_001)],
    }
    hostile(m, m, [["frame", oversized]], tmp_path)
    assert settle(lambda: a.nodes()["stream_refused"].get("frame", 0), lambda n: n >= 1, 30) >= 1
    assert not [r for r in snapshot(a)["records"] if r["node_id"] == m_id]


def test_odd_node_names_are_refused_and_names_that_mislead_mislead_nobody(
    network: Network, tmp_path: Path
) -> None:
    a, b, m = swarm(network, tmp_path, 3)
    a_id, b_id, m_id = (node.identity().node_id for node in (a, b, m))
    swarm_id = str(a.nodes()["swarm_id"])
    mallory = as_node(m, a)
    own = rows(a)["n3"]
    for name in ("n2", "n3"):  # `list --node` reads the union's names: both frames in first
        a.hears(name)

    def renamed(name: str) -> dict[str, object]:
        record = {
            **members.own_record(m.identity(), "n3", m.address, time.time()),
            "name": name,
        }
        record.pop("signature")
        return canonical.sign(record, m.identity())

    for odd in ("a/b", " n3", "n3 ", "x" * 65, "bell\x07", "rtl\u202eevil", "two\nlines", ""):
        said = greeting(m.identity(), swarm_id, "n3", m.address, [renamed(odd)])
        assert mallory.hello(a.address, said, to=a_id).status_code == 200
        assert rows(a)["n3"]["signed_at_ms"] == own["signed_at_ms"], odd
    assert "rtl" not in a.ok("nodes")

    # a name another member goes by, and another member's id as a name: legal, and misleading
    # nobody: the name is ambiguous (a 409 that lists both), an id always means its own node
    said = greeting(m.identity(), swarm_id, "n3", m.address, [renamed("n2")])
    assert mallory.hello(a.address, said, to=a_id).status_code == 200
    assert sorted(row["name"] for row in a.nodes()["nodes"]) == ["n1", "n2", "n2"]
    ambiguous = a.rosterd("list", "--node", "n2")
    assert ambiguous.returncode == 1 and "two nodes go by that name" in ambiguous.stderr
    assert b_id in ambiguous.stderr and m_id in ambiguous.stderr
    said = greeting(m.identity(), swarm_id, "n3", m.address, [renamed(b_id)])
    assert mallory.hello(a.address, said, to=a_id).status_code == 200
    assert rows(a)[b_id]["node_id"] == m_id
    by_id = json.loads(a.ok("list", "--node", b_id, "--json"))
    assert [row["node_id"] for row in by_id["nodes"]] == [b_id]
    # and the union calls mallory's sessions by the name its record gives, whatever its frame says
    key = session(m)
    named = a.wait_for(
        lambda: next((r for r in snapshot(a)["records"] if r["session_key"] == key), None), "m's session"
    )
    assert named["node"] == b_id and named["node_id"] == m_id
    assert not handshake_refused(as_node(b, a), a.address)


def test_nodes_a_revoked_member_admitted_are_marked_and_go_with_it_when_asked(
    network: Network, tmp_path: Path
) -> None:
    """A node a revoked member admitted stays (its key is its own), marked for the person to
    judge; ``revoke --admitted`` takes a member and every node it admitted, at any depth."""
    a, b, c, d = make(network, tmp_path, 4)
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    c.ok("join", b.address, "--token", b.ok("invite").strip())
    d.ok("join", c.address, "--token", c.ok("invite").strip())
    b_id, c_id, d_id = (node.identity().node_id for node in (b, c, d))
    assert rows(a)["n4"]["admitted_by"] == c_id

    key = session(a)
    c.wait_for(lambda: any(r["session_key"] == key for r in snapshot(c)["records"]), "c hears a's session")
    a.ok("revoke", c_id)
    assert (rows(a)["n4"]["revoked"], rows(a)["n4"]["admitted_by_revoked"]) == (False, True)
    assert "admitted by a revoked node" in a.ok("nodes")
    assert "this node was revoked by" in c.ok("nodes")
    refused = c.rosterd("read", key)  # c acts for nobody now, and says why
    assert refused.returncode in (1, 3) and "revoked" in refused.stderr, refused.stderr

    a_id = a.identity().node_id
    shown = json.loads(a.ok("revoke", b_id, "--admitted", "--json"))
    gone = {row["name"]: row["revoked_by"] for row in shown["nodes"]}
    assert gone == {"n1": None, "n2": a_id, "n3": a_id, "n4": a_id}
    assert d.nodes()["revoked"]["by"] == a_id and rows(d)["n4"]["node_id"] == d_id  # told, like b
