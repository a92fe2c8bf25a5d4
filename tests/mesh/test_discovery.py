"""Where the listener binds and whom a round greets: ``place``, Tailscale's status document, and
the target list (members' addresses, static peers, Tailscale's online peers)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from roost.base.errors import PeerUnreachable
from roost.remote.mesh import place, tailscale, tls
from roost.remote.mesh.dialer import IDLE_S, Dialer
from roost.remote.mesh.membership import Membership
from roost.remote.mesh.rounds import INTERVAL, QUIET_MAX, QUIET_MIN, Rounds, addresses
from roost.remote.swarm import canonical, invites, members
from roost.remote.swarm.identity import Identity
from tests.conftest import REPO

STATUS = REPO / "tests" / "fixtures" / "tailscale" / "status.json"
FAKE = REPO / "tests" / "fakes" / "tailscale.py"


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, document: Path | None = STATUS) -> None:
    """A ``tailscale`` on PATH that prints ``document`` (None: no tailscale at all)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if document is not None:
        (bin_dir / "tailscale").symlink_to(FAKE)
        monkeypatch.setenv("FAKE_TAILSCALE_STATUS", str(document))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


def test_the_status_document_gives_this_machines_addresses_and_its_online_peers() -> None:
    found = tailscale.parse(json.loads(STATUS.read_text()))
    assert found.addresses == ("100.64.77.2", "fd7a:115c:a1e0::2")  # IPv4 first
    assert found.peers == ("100.64.77.3", "fd7a:115c:a1e0::5")  # the offline server left out


@pytest.mark.parametrize(
    "document", [None, [], {"Self": "x", "Peer": []}, {"Peer": {"k": {"Online": "yes"}}}]
)
def test_a_document_of_another_shape_gives_nothing(document: object) -> None:
    assert tailscale.parse(document) == tailscale.Status((), ())


def test_listen_tailscale_binds_the_address_tailscale_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in(tmp_path, monkeypatch)
    found = place.place("tailscale", 8791)
    assert (found.address, found.why) == ("100.64.77.2:8791", "this machine's Tailscale address")


def test_without_tailscale_the_listener_is_off_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in(tmp_path, monkeypatch, None)
    found = place.place("tailscale", 8791)
    assert found.address is None
    assert found.why.startswith("no `tailscale` on PATH and [node] listen names no address")


def test_a_tailscale_with_no_address_leaves_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "down.json"
    empty.write_text('{"BackendState": "Stopped", "Self": {"TailscaleIPs": []}}')
    stand_in(tmp_path, monkeypatch, empty)
    assert place.place("tailscale", 8791).why.startswith("tailscale reports no address for this machine")


def test_off_and_a_named_address() -> None:
    assert place.place("off", 8791).address is None
    assert place.place("100.64.0.7", 9000).address == "100.64.0.7:9000"
    assert place.place("fd7a:115c:a1e0::7", 9000).address == "[fd7a:115c:a1e0::7]:9000"


def test_discovery_asks_static_and_online_tailscale_peers_each_once_but_not_members_own_addresses(
    tmp_path: Path,
) -> None:
    me, other = Identity.generate("me"), Identity.generate("other")
    membership = Membership(tmp_path, me, name="me", address="100.64.0.2:8791", version="t", clock=time.time)
    membership.invite(60)
    record = members.record(
        me,
        node_id="other",
        name="other",
        public_key=other.public_key,
        x25519_public_key=other.x25519_public_key,
        address="100.64.0.3:8791",
        now=time.time(),
    )
    membership.swarm.standings = members.merge(
        membership.swarm.standings, [record], now=time.time()
    ).standings
    found = addresses(
        membership,
        ["100.64.0.3:8791", "100.64.0.9:8791", "100.64.0.2:8791", "100.64.0.9:8791"],
        ["100.64.0.3", "100.64.0.4", "fd7a:115c:a1e0::5"],
        8791,
    )
    # the member's own address is greeted as the member (pinned to it), not discovered
    assert found == ["100.64.0.9:8791", "100.64.0.4:8791", "[fd7a:115c:a1e0::5]:8791"]


def local_rounds(membership: Membership, dialer: Dialer) -> Rounds:
    """Rounds of ``membership`` with no static peers and no Tailscale: its members alone."""
    return Rounds(membership, dialer, static_peers=(), port=8791, clock=time.time, use_tailscale=False)


def test_rounds_run_at_start_on_the_timer_and_when_woken(tmp_path: Path) -> None:
    me = Identity.generate("me")
    membership = Membership(tmp_path, me, name="me", address="100.64.0.2:8791", version="t", clock=time.time)
    membership.invite(60)
    rounds = local_rounds(membership, Dialer(membership, tls.Trust(me)))

    async def go() -> tuple[int, int]:
        task = asyncio.create_task(rounds.every(interval=3600))
        await asyncio.sleep(0.05)
        at_start = rounds.completed
        rounds.wake()
        await asyncio.sleep(0.05)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return at_start, rounds.completed

    assert asyncio.run(go()) == (1, 2)


def admitted(tmp_path: Path) -> tuple[Membership, Membership]:
    """Node ``me`` (a) and node ``other`` (b), which ``me`` admitted."""
    me, other = Identity.generate("me"), Identity.generate("other")
    a = Membership(tmp_path / "a", me, name="me", address="100.64.0.2:8791", version="t", clock=time.time)
    b = Membership(
        tmp_path / "b", other, name="other", address="100.64.0.3:8791", version="t", clock=time.time
    )
    for one in (a.directory, b.directory):
        one.mkdir(mode=0o700)
    token = a.invite(60).token
    b.joined(invites.read(token), a.admit(token, b.joining_hello(invites.read(token).swarm_id)))
    return a, b


class Answering:
    """A dialer whose every hello is answered by ``peer``'s membership, counted: the rounds'
    policy without a network (the greetings on the wire are the node tests')."""

    def __init__(self, peer: Membership) -> None:
        self.peer = peer
        self.greeted = 0

    async def send(self, member: members.Member, method: str, path: str, document: object) -> object:
        self.greeted += 1
        said = self.peer.greeted(canonical.parse(document) if isinstance(document, bytes) else document, "me")
        return type(
            "Answer", (), {"status_code": 200, "content": canonical.encode(self.peer.hello(said.node_id))}
        )

    async def prune(self) -> int:
        return 0  # it holds no clients


def test_a_settled_member_whose_stream_speaks_is_not_greeted_until_something_changes(tmp_path: Path) -> None:
    """A round greets a member only when there is something to say or to learn: it holds another
    member set, its stream has been silent for a round, or it went unasked for its quiet time,
    which doubles with each greeting made for time alone (up to QUIET_MAX) and starts again at
    QUIET_MIN once anything else unsettled it."""
    now = [1_000_000.0]
    me, other = Identity.generate("me"), Identity.generate("other")
    a = Membership(
        tmp_path / "a", me, name="me", address="100.64.0.2:8791", version="t", clock=lambda: now[0]
    )
    b = Membership(
        tmp_path / "b", other, name="other", address="100.64.0.3:8791", version="t", clock=lambda: now[0]
    )
    for one in (a.directory, b.directory):
        one.mkdir(mode=0o700)
    token = a.invite(60).token
    b.joined(invites.read(token), a.admit(token, b.joining_hello(invites.read(token).swarm_id)))
    spoke: dict[str, float | None] = {"other": None}
    dialer = Answering(b)
    rounds = Rounds(
        a, dialer, static_peers=(), port=8791, clock=lambda: now[0], use_tailscale=False,  # type: ignore[arg-type]
        heard=lambda node_id: spoke[node_id],
    )  # fmt: skip

    def greetings_in_a_round() -> int:
        before = dialer.greeted
        asyncio.run(rounds.round())
        return dialer.greeted - before

    assert greetings_in_a_round() == 1  # no stream yet: greeted
    assert greetings_in_a_round() == 1  # b's answer told a its set; a's own record b lacked went
    assert a.agrees("other") and b.agrees("me")
    spoke["other"] = now[0]
    assert greetings_in_a_round() == 0  # settled, and its stream speaks
    assert rounds.contacts["other"].reachable

    now[0] += INTERVAL + 1
    assert greetings_in_a_round() == 1  # its stream silent for a round
    spoke["other"] = now[0]
    assert greetings_in_a_round() == 0

    def greetings_after(seconds: float) -> int:
        now[0] += seconds
        spoke["other"] = now[0]
        return greetings_in_a_round()

    assert greetings_after(QUIET_MIN) == 1  # unasked for too long
    assert greetings_after(QUIET_MIN) == 0  # that greeting told nothing: twice as long now
    assert greetings_after(QUIET_MIN) == 1
    waits = []
    for _ in range(8):
        waited = 0.0
        while greetings_after(INTERVAL) == 0:
            waited += INTERVAL
        waits.append(waited + INTERVAL)
    assert waits[0] >= 4 * QUIET_MIN and waits[-1] == pytest.approx(QUIET_MAX, abs=INTERVAL)
    assert all(later >= earlier for earlier, later in itertools.pairwise(waits))
    now[0] += INTERVAL + 1
    assert greetings_in_a_round() == 1  # its stream silent for a round: unsettled
    assert greetings_after(QUIET_MIN - INTERVAL) == 0
    assert greetings_after(INTERVAL) == 1  # and its quiet time starts again at QUIET_MIN

    a.invite(60)  # a's set moves on (the invite's nonce is no member record: nothing changes)
    assert greetings_in_a_round() == 0
    a.revoke("other")
    assert not a.peers()  # a revoked member is greeted by no round


class Slow(Answering):
    """An :class:`Answering` dialer whose answers take a while, and that notes when each
    greeting went out."""

    def __init__(self, peer: Membership) -> None:
        super().__init__(peer)
        self.sent_at: list[float] = []

    async def send(self, member: members.Member, method: str, path: str, document: object) -> object:
        self.sent_at.append(time.monotonic())
        await asyncio.sleep(0.1)
        return await super().send(member, method, path, document)


def test_rounds_asked_for_while_one_runs_share_the_next_and_a_caller_gone_ends_none(tmp_path: Path) -> None:
    """Admissions that come together (each runs a round before it answers) cost one greeting a
    member, not one each; each caller's round still starts after it asked."""
    a, b = admitted(tmp_path)
    dialer = Slow(b)
    rounds = Rounds(
        a, dialer, static_peers=(), port=8791, clock=time.time, use_tailscale=False,  # type: ignore[arg-type]
    )  # fmt: skip

    async def go() -> tuple[list[list[str | None]], list[float]]:
        first = asyncio.ensure_future(rounds.round())
        await asyncio.sleep(0.03)  # the first round's greeting is out
        asked = time.monotonic()
        later = [asyncio.ensure_future(rounds.round()) for _ in range(5)]
        gone = asyncio.ensure_future(rounds.round())
        await asyncio.sleep(0)
        gone.cancel()
        answered = await asyncio.gather(first, *later)
        await rounds.stop()
        return answered, [at - asked for at in dialer.sent_at]

    answered, sent = asyncio.run(go())
    assert answered == [["other"]] * 6
    assert len(sent) == 2  # the first round, then one for the six that asked while it ran
    assert sent[0] < 0 < sent[1]


def test_a_pooled_client_outlives_an_admission_of_another_and_closes_with_its_members_revocation(
    tmp_path: Path,
) -> None:
    """An admission greets every member: over the connections already open, not a handshake a
    member. A member's client is kept while its trust is, and closed once it is revoked."""
    me, other, third = Identity.generate("me"), Identity.generate("other"), Identity.generate("third")
    a = Membership(tmp_path / "a", me, name="me", address="100.64.0.2:8791", version="t", clock=time.time)
    b = Membership(
        tmp_path / "b", other, name="other", address="100.64.0.3:8791", version="t", clock=time.time
    )
    c = Membership(
        tmp_path / "c", third, name="third", address="100.64.0.4:8791", version="t", clock=time.time
    )
    for one in (a.directory, b.directory, c.directory):
        one.mkdir(mode=0o700)
    token = a.invite(60).token
    b.joined(invites.read(token), a.admit(token, b.joining_hello(invites.read(token).swarm_id)))
    trust = tls.Trust(me, a.pinned(), a.certificates())
    a.listeners.append(lambda: trust.update(a.pinned(), a.certificates()))
    dialer = Dialer(a, trust)

    async def go() -> tuple[object, object, int]:
        first = await dialer._client(a.members["other"])
        token = a.invite(60).token
        c.joined(invites.read(token), a.admit(token, c.joining_hello(invites.read(token).swarm_id)))
        generation = trust.generation
        kept = await dialer._client(a.members["other"])
        a.revoke("other")
        with pytest.raises(PeerUnreachable):
            await dialer._client(b.members["other"])
        await dialer.close()
        return first, kept, generation

    first, kept, generation = asyncio.run(go())
    assert generation > 1  # the admission changed the trust
    assert kept is first
    assert first.is_closed  # type: ignore[attr-defined]


def test_a_pooled_client_left_unused_is_closed_but_never_one_in_use(tmp_path: Path) -> None:
    """A swarm at rest greets a member about once an hour: a client kept between greetings holds
    a connection nothing reuses. A round prunes those; a request under way keeps its client."""
    a, _ = admitted(tmp_path)
    trust = tls.Trust(a.identity, a.pinned(), a.certificates())
    dialer = Dialer(a, trust)

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # takes the connection and never says a word: a handshake that hangs

    async def go() -> list[object]:
        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        member = replace(a.members["other"], address=f"127.0.0.1:{port}")
        first = await dialer._client(member)
        seen: list[object] = [await dialer.prune(), first.is_closed]  # just made: kept
        sending = asyncio.ensure_future(dialer.send(member, "POST", "/swarm/hello", {}))
        await asyncio.sleep(0.3)
        seen += [await dialer.prune(0.0), first.is_closed]  # in use: kept, however short the idle
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError, PeerUnreachable):
            await sending
        seen += [await dialer.prune(0.0), first.is_closed]  # done with: closed
        again = await dialer._client(member)
        seen += [again is not first, await dialer.prune(0.0)]
        server.close()
        await dialer.close()
        return seen

    assert asyncio.run(go()) == [0, False, 0, False, 1, True, True, 1]


def test_a_round_prunes_the_clients_its_last_greetings_left(tmp_path: Path) -> None:
    me = Identity.generate("me")
    membership = Membership(tmp_path, me, name="me", address="100.64.0.2:8791", version="t", clock=time.time)
    pruned: list[float] = []

    class Counting(Dialer):
        async def prune(self, idle_s: float = IDLE_S) -> int:
            pruned.append(idle_s)
            return 0

    rounds = local_rounds(membership, Counting(membership, tls.Trust(me)))
    asyncio.run(rounds.round())
    assert pruned == [IDLE_S]
