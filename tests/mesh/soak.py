"""A soak of the swarm (issue 34, part 4): real ``rosterd`` daemons in namespaces
(:mod:`tests.nodes`, :mod:`tests.mesh.swarmnodes`) for a while, sessions changing on every
node, links cut and healed at random, one node restarted and one revoked along the way, and
every node's streams checked against what each owner emitted. ``bench/swarm_soak.py`` runs it
for half an hour; ``tests/mesh/test_nodes_soak.py`` for about a minute and a half.

**What is driven.** Each node holds a few sessions (a ``sleep`` in its namespaces, claimed on
its unix socket as a hook claims, ``tests.mesh.unionnodes.process``); every 1 to 3 seconds it
claims a new activity for one of them with ``fields.mode`` set to a token used once
(``soak n3 17``: ``mode`` is a claim field that travels in the record and whose change alone
is a change), and now and then ends one (``ended: exit``) and starts another. Nodes are cut
(``Node.partition``: the link is pulled, not a word to anyone) at random times, some for
longer than the follower's silence (10 s, so the peer is found ``unreachable``), some
shorter, and healed. One node is restarted (its daemon stopped, its namespaces and sessions
gone with it, started again); one is revoked by the first.

**What each owner emitted.** Every node is the only writer of its roster, so the driver
follows each node's own ``GET /changes`` on its unix socket from its start (a ``snapshot``
after the restart included) and keeps, per session, the states it emitted in order. A
*state* is a record's ``(liveness, activity, mode, ended_reason)``: every claim sets a mode
never used before, so a state names one change of one owner.

**The rule: no change lost, duplicated or invented.** When a link is cut the follower does
not get the owner's changes from the cut; on reconnect it gets a fresh frame and derives the
changes it shows against the stale one (``docs/swarm.md``). So, for every observing node X,
owner Y and session of Y, on X's ``GET /swarm/changes`` (followed from its start, and after
every dropped connection from ``?since=`` the last id seen):

- (a) every state X reports is one Y emitted, in Y's order: none invented, none out of order;
- (b) no state is reported twice in a row (a duplicate);
- (c) no state Y emitted is missing between two reports, except across a fresh frame: the
  changes X derives from Y's frame (the unbroken run of Y's records right after X's ``node``
  change saying Y is reachable, each session at most once; or the records of a ``snapshot``)
  may skip what Y emitted while the link was down, and say ended, for a reason not known,
  a session X held live that the frame no longer holds (Y restarted without it, or it ended
  and lingered out while the link was down); every other report is Y's next state, exactly;
- (d) at the end, every cut healed and the claims stopped: X's union holds exactly Y's own
  snapshot (every session, each in the same state) and every running member is reachable;
  the view a client builds from X's ``/swarm/changes`` (its snapshot, then each change)
  holds what X's union holds; and X's ``seq`` counts up by one from frame to frame within a
  feed epoch, never repeating or skipping, across every reconnect with ``?since=`` (the
  driver drops its client streams now and then to prove the replay fills the gap exactly).

The revoked node R: every other node says ``node_left`` for R with ``reason`` ``revoked``,
and after that no record of R on its stream nor, at the end, in its union; R's union holds
only itself. The restarted node Y: every other node says Y is ``unreachable`` after its stop
and ``reachable`` after its start; a client following Y, reconnecting with its old cursor,
gets a ``snapshot`` of a new feed epoch and counts on from that (``docs/swarm.md``, "The
cursor"), on ``/changes`` and ``/swarm/changes`` alike.

**Healed.** A partition is healed when every node that found the cut node ``unreachable``
says it is ``reachable`` again (and the cut node says the same of them); the time to heal is
from ``heal()`` (or the later end of the other side's own cut) to that ``node`` change, and
each is at most :attr:`Settings.heal_within`.

**Bounded.** Each daemon's RSS and open descriptors are sampled every
:attr:`Settings.sample_every` seconds. After a warm-up (the first quarter of a daemon's run,
or until its swarm feed has numbered 4096 changes and so filled its ring of replays,
whichever is later) the samples left are split in quarters: the last quarter's mean RSS may
be at most :attr:`Settings.rss_margin` (a share) or :attr:`Settings.rss_floor` MiB above the
first's, whichever is more, and its mean descriptor count at most :attr:`Settings.fd_margin`
above the first's.

Everything it starts ends with the :class:`~tests.nodes.Network` it was given.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import random
import socket
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from tests.mesh.swarmnodes import SwarmNode
from tests.mesh.unionnodes import client, daemon_pid, process, swarm
from tests.nodes import Network

State = tuple[str, str, str | None, str | None]
"""``(liveness, activity, mode, ended_reason)`` of a record."""
ACTIVITIES = ("working", "idle")
FEED_RING = 4096
"""The swarm feed's ring of replays (``roost.remote.swarm.feed.RING_SIZE``): the warm-up of
the memory rule lasts until it is full."""
SHOWN = 5
"""Failures of one kind a report shows."""
COUNTS = ("reports", "caught_up", "lost", "duplicated", "invented", "out_of_order", "gone")
"""What the checks of one node's swarm stream count."""
SLACK = 15.0
"""Seconds after a cut ends that a link may still be found lost because of it (the
follower's silence, 10 s, and a keep-alive)."""
LINGER = 30.0
"""Seconds an ended session stays in its roster (``roost.truth.roster.hub.LINGER``)."""


def state_of(record: dict[str, Any]) -> State:
    return (record["liveness"], record["activity"], record.get("mode"), record.get("ended_reason"))


def vanished(held: State, said: State) -> bool:
    """Whether ``said`` is how a node tells the end of a session it held as ``held`` that its
    owner's fresh frame no longer holds (it ended and was dropped while the link was down, or
    its owner restarted without it): the same record, ended, for a reason not known."""
    return held[0] != "ended" and said == ("ended", held[1], held[2], None)


def owner_of(session_key: str) -> str:
    return session_key.split(":", 1)[0]


@dataclass
class Settings:
    """What a soak does, and the margins it holds the daemons to."""

    nodes: int = 10
    seconds: float = 1800.0
    seed: int = 34
    sessions: int = 5
    """Sessions each node holds at a time."""
    change_every: tuple[float, float] = (1.0, 3.0)
    """Seconds between one node's claims, drawn evenly from this range."""
    end_share: float = 0.05
    """Share of claims that end a session (another starts in its place)."""
    cut_every: float = 45.0
    """Mean seconds between cuts (exponentially distributed)."""
    long_cut: tuple[float, float] = (12.0, 25.0)
    """Seconds a long cut lasts: past the follower's silence of 10 s."""
    short_cut: tuple[float, float] = (1.0, 6.0)
    long_share: float = 0.5
    restart_at: float = 0.35
    """When the restart happens, as a share of the run."""
    restart_down: float = 12.0
    """Seconds the restarted node's daemon stays stopped."""
    revoke_at: float = 0.6
    drop_every: float = 60.0
    """Mean seconds between dropped client streams (each resumed from ``?since=``)."""
    sample_every: float = 10.0
    heal_within: float = 30.0
    converge_within: float = 120.0
    rss_margin: float = 0.10
    rss_floor: float = 8.0
    fd_margin: float = 8.0


@dataclass(frozen=True)
class Seen:
    """One frame of a client stream, as much of it as the checks read."""

    epoch: int
    seq: int
    event: str
    at: float
    node_id: str | None = None
    key: str | None = None
    state: State | None = None
    peer_state: str | None = None
    reason: str | None = None
    records: tuple[tuple[str, State], ...] = ()
    """A snapshot's records, ``(session_key, state)``."""
    resumed: str | None = None
    """The cursor the connection this is the first frame of was opened with (a reconnect)."""


def _seen(name: str, ident: str, data: dict[str, Any], resumed: str | None) -> Seen:
    epoch, _, seq = ident.partition(":")
    now = time.monotonic()
    record = data.get("record")
    if name == "snapshot":
        listed = data["snapshot"]["records"]
        records = tuple((r["session_key"], state_of(r)) for r in listed)
        return Seen(int(epoch), int(seq), name, now, records=records, resumed=resumed)
    return Seen(
        int(epoch),
        int(seq),
        name,
        now,
        data.get("node_id") or (record or {}).get("node_id"),
        data.get("session_key"),
        state_of(record) if record else None,
        data.get("peer_state"),
        data.get("reason"),
        resumed=resumed,
    )


class Follower:
    """A client following one SSE route of a node's unix socket, from its start, in a thread
    of its own: a connection that ends is opened again from ``?since=`` the last id seen."""

    def __init__(self, node: SwarmNode, path: str) -> None:
        self.node = node
        self.path = path
        self.log: list[Seen] = []
        self.cursor: str | None = None
        self.reconnects = 0
        self._stop = threading.Event()
        self._pause = 0.0
        self._socket: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"{node.name}{path}")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._shut()
        self._thread.join(15)

    def drop(self, pause: float) -> bool:
        """End the connection as a client that went away would, and come back after ``pause``;
        whether there was one to end."""
        if self._socket is None:
            return False
        self._pause = pause
        self._shut()
        return True

    @property
    def head(self) -> int:
        return self.log[-1].seq if self.log else -1

    def _shut(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):
                self._socket.shutdown(socket.SHUT_RDWR)

    def _run(self) -> None:
        while not self._stop.is_set():
            resumed = self.cursor
            target = self.path if resumed is None else f"{self.path}?since={resumed}"
            try:
                transport = httpx.HTTPTransport(uds=str(self.node.socket))
                timeout = httpx.Timeout(10, read=60)
                with (
                    httpx.Client(transport=transport, base_url="http://rosterd", timeout=timeout) as talk,
                    talk.stream("GET", target) as answer,
                ):
                    self._socket = answer.extensions["network_stream"].get_extra_info("socket")
                    if answer.status_code == 200:
                        self._read(answer, resumed)
            except (httpx.HTTPError, OSError, RuntimeError, ValueError):
                pass
            self._socket = None
            if self._stop.is_set():
                return
            self.reconnects += 1
            pause, self._pause = max(0.2, self._pause), 0.0
            self._stop.wait(pause)

    def _read(self, answer: httpx.Response, resumed: str | None) -> None:
        fields: dict[str, str] = {}
        for line in answer.iter_lines():
            if line == "":
                if "event" in fields and "id" in fields:
                    found = _seen(
                        fields["event"], fields["id"], json.loads(fields.get("data", "{}")), resumed
                    )
                    resumed = None
                    self.log.append(found)
                    self.cursor = fields["id"]
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value


@dataclass
class Held:
    """One session a node's claimer drives."""

    key: str
    body: dict[str, int]


class Claimer:
    """Claims on one node's socket in a thread of its own: a new activity and mode for one of
    its sessions every so often, and now and then an end and a new session."""

    def __init__(self, node: SwarmNode, settings: Settings, rng: random.Random, until: float) -> None:
        self.node = node
        self.settings = settings
        self.rng = rng
        self.until = until
        self.held: list[Held] = []
        self.claims = 0
        self.refused = 0
        self.ended = 0
        self.started = 0
        self._count = 0
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._idle = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"claims {node.name}")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)

    def pause(self) -> None:
        """Stop claiming and wait until no claim is under way."""
        self._idle.clear()
        self._paused.set()
        self._idle.wait(60)

    def resume(self, fresh: bool) -> None:
        """Claim again; ``fresh``: the node's sessions are gone (it restarted), start new ones."""
        if fresh:
            self.held = []
        self._paused.clear()

    def _token(self) -> str:
        self._count += 1
        return f"soak {self.node.name} {self._count}"

    def _claim(self, talk: httpx.Client, body: dict[str, Any]) -> dict[str, Any] | None:
        self.claims += 1
        answer = talk.post("/claim", json=body)
        if answer.status_code != 200 or not answer.json().get("accepted"):
            self.refused += 1
            return None
        return dict(answer.json())

    def _new(self, talk: httpx.Client) -> None:
        body = process(self.node, 7200)
        found = self._claim(talk, {**body, "activity": "working", "fields": {"mode": self._token()}})
        if found is not None:
            self.held.append(Held(found["session_key"], body))
            self.started += 1

    def _step(self, talk: httpx.Client) -> None:
        for _ in range(self.settings.sessions - len(self.held)):
            self._new(talk)
        if not self.held:
            return
        one = self.rng.choice(self.held)
        ending = time.monotonic() < self.until - LINGER - 10 and self.rng.random() < self.settings.end_share
        if ending:
            self.held.remove(one)
            if self._claim(talk, {"session_key": one.key, "ended": "exit"}) is not None:
                self.ended += 1
            return
        activity = self.rng.choice(ACTIVITIES)
        body = {"session_key": one.key, "activity": activity, "fields": {"mode": self._token()}}
        if self._claim(talk, body) is None:  # its session ended on the node's own word
            self.held.remove(one)

    def _run(self) -> None:
        low, high = self.settings.change_every
        while not self._stop.wait(self.rng.uniform(low, high)):
            if self._paused.is_set():
                self._idle.set()
                continue
            try:
                with client(self.node) as talk:
                    self._step(talk)
            except (httpx.HTTPError, OSError, AssertionError, ValueError):
                self.refused += 1
            if self._paused.is_set():
                self._idle.set()
        self._idle.set()


@dataclass
class Sample:
    at: float
    rss: float
    """MiB."""
    fds: int


@dataclass
class Report:
    """What a soak measured and every check that failed (none, when it passed)."""

    settings: Settings
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.lines.append(line)

    def fail(self, line: str) -> None:
        self.failures.append(line)

    def text(self) -> str:
        """Every line measured, then the verdict: the first few failures of each kind (what a
        failure says before its first colon), and how many there were."""
        if not self.failures:
            return "\n".join([*self.lines, "checks: all passed"])
        kinds: dict[str, list[str]] = defaultdict(list)
        for line in self.failures:
            kinds[line.split(":", 1)[0]].append(line)
        verdict = [f"FAILED: {len(self.failures)} checks"]
        for listed in kinds.values():
            verdict += listed[:SHOWN]
            if len(listed) > SHOWN:
                verdict.append(f"  ... and {len(listed) - SHOWN} more of these")
        return "\n".join([*self.lines, *verdict])


@dataclass
class Down:
    """A time a node was off the network: a cut, or its daemon's restart."""

    name: str
    kind: str
    start: float
    end: float | None = None


class Soak:
    """One soak on ``network``: :meth:`run` makes the nodes, drives them, checks and reports."""

    def __init__(
        self, network: Network, root: Path, settings: Settings, progress: Callable[[str], None] | None = None
    ) -> None:
        self.network = network
        self.progress = progress
        self.root = root
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.nodes: list[SwarmNode] = []
        self.ids: dict[str, str] = {}
        """Node name to node id."""
        self.owners: dict[str, Follower] = {}
        self.observers: dict[str, Follower] = {}
        self.claimers: dict[str, Claimer] = {}
        self.samples: dict[tuple[str, int], list[Sample]] = defaultdict(list)
        self.runs: dict[str, int] = defaultdict(int)
        self.downs: list[Down] = []
        self.cut: dict[str, Down] = {}
        self.drops = 0
        self.revoked: str | None = None
        self.revoked_at: float | None = None
        self.restarted: str | None = None
        self.restart: tuple[float, float] | None = None
        """When the restarted node's daemon was stopped and when it answered again."""
        self.epochs: dict[str, tuple[int, int]] = {}
        """The restarted node's feed epochs, before and after."""
        self.final: dict[str, dict[str, Any]] = {}
        """Each node's union once converged."""
        self.began = 0.0
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    # -- running ----------------------------------------------------------------------

    def run(self) -> Report:
        report = Report(self.settings)
        made = time.monotonic()
        self.nodes = swarm(self.network, self.root, self.settings.nodes)
        self.ids = {node.name: node.identity().node_id for node in self.nodes}
        for node in self.nodes:
            node.wait_for(
                lambda node=node: (
                    all(r["peer_state"] != "unreachable" for r in self._rows(node))
                    and len(self._rows(node)) == len(self.nodes)
                ),
                f"{node.name} hears every node",
                120,
            )
        report.say(
            f"swarm of {len(self.nodes)} real daemons up and linked in {time.monotonic() - made:.0f} s"
        )
        try:
            self._drive()
            self._converge(report)
        finally:
            for claimer in self.claimers.values():
                claimer.stop()
            for follower in [*self.owners.values(), *self.observers.values()]:
                follower.stop()
            for thread in self.threads:
                thread.join(120)
        self._check(report)
        return report

    def _say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(f"{time.monotonic() - self.began:7.1f} s  {line}")

    def _rows(self, node: SwarmNode) -> list[dict[str, Any]]:
        return list(node.get("/swarm/snapshot").json()["nodes"])

    def _node(self, name: str) -> SwarmNode:
        return next(node for node in self.nodes if node.name == name)

    def _drive(self) -> None:
        settings = self.settings
        for node in self.nodes:
            self.owners[node.name] = Follower(node, "/changes")
            self.observers[node.name] = Follower(node, "/swarm/changes")
        for follower in [*self.owners.values(), *self.observers.values()]:
            follower.start()
        for node in self.nodes:
            wanted = lambda node=node: self.owners[node.name].log and self.observers[node.name].log  # noqa: E731
            node.wait_for(wanted, f"{node.name}'s streams open", 30)
        self.began = time.monotonic()
        until = self.began + settings.seconds
        for node in self.nodes:
            seed = self.rng.random()
            self.claimers[node.name] = Claimer(node, settings, random.Random(seed), until)
            self.claimers[node.name].start()
        sampler = threading.Thread(target=self._sample, args=(until,), daemon=True, name="sampler")
        sampler.start()
        self.threads.append(sampler)
        others = [node.name for node in self.nodes[1:]]
        restarted, revoked = self.rng.sample(others, 2)
        plan: list[tuple[float, str, str]] = [
            (self.began + settings.seconds * settings.restart_at, "restart", restarted),
            (self.began + settings.seconds * settings.revoke_at, "revoke", revoked),
            (until, "end", ""),
        ]
        moment = self.began
        while (moment := moment + self.rng.expovariate(1 / settings.cut_every)) < until - 5:
            plan.append((moment, "cut", ""))
        moment = self.began
        while (moment := moment + self.rng.expovariate(1 / settings.drop_every)) < until - 5:
            plan.append((moment, "drop", self.rng.choice([node.name for node in self.nodes])))
        heapq.heapify(plan)
        while plan:
            moment, what, name = heapq.heappop(plan)
            time.sleep(max(0.0, moment - time.monotonic()))
            if what == "cut":
                heal = self._cut()
                if heal is not None:
                    heapq.heappush(plan, (time.monotonic() + heal[1], "heal", heal[0]))
            elif what == "heal":
                self._heal(name)
            elif what == "drop":
                self.drops += self.observers[name].drop(self.rng.uniform(0.5, 3.0))
            elif what == "restart":
                self._background(self._restart, restarted)
            elif what == "revoke":
                self._background(self._revoke, revoked)
            elif what == "end":  # the cuts under way are healed when they were to be
                for claimer in self.claimers.values():
                    claimer.stop()
        for thread in self.threads:
            if thread is not sampler:
                thread.join(180)

    def _background(self, work: Any, name: str) -> None:
        thread = threading.Thread(target=work, args=(name,), daemon=True, name=f"{work.__name__} {name}")
        thread.start()
        self.threads.append(thread)

    def _cut(self) -> tuple[str, float] | None:
        """Pull one node's cable, for a long or a short while; its name and how long."""
        with self.lock:
            busy = {*self.cut, self.revoked, self.restarted if self.restart is None else None}
            free = [node.name for node in self.nodes if node.name not in busy]
            if not free or len(self.cut) >= 2:
                return None
            name = self.rng.choice(free)
            made = sum(1 for down in self.downs if down.kind == "cut")
            long = made == 0 or (made > 1 and self.rng.random() < self.settings.long_share)
            low, high = self.settings.long_cut if long else self.settings.short_cut
            self._node(name).node.partition()
            self.cut[name] = Down(name, "cut", time.monotonic())
            self.downs.append(self.cut[name])
        seconds = self.rng.uniform(low, high)
        self._say(f"cut {name} for {seconds:.1f} s")
        return name, seconds

    def _heal(self, name: str) -> None:
        with self.lock:
            down = self.cut.pop(name, None)
            if down is not None:
                self._node(name).node.heal()
                down.end = time.monotonic()
                self._say(f"healed {name}")

    def _restart(self, name: str) -> None:
        """Stop a node's daemon (its sessions end with its namespaces) and start it again."""
        node = self._node(name)
        with self.lock:
            self.restarted = name
        while name in self.cut:
            time.sleep(0.2)
        claimer = self.claimers[name]
        claimer.pause()
        owner = self.owners[name]
        head = node.get("/snapshot").json()["seq"]
        node.wait_for(lambda: owner.head >= head, f"{name}'s own changes all read", 30)
        before = self.observers[name].log[-1].epoch
        stopped = time.monotonic()
        down = Down(name, "restart", stopped)
        self.downs.append(down)
        node.stop()
        self.runs[name] += 1
        time.sleep(self.settings.restart_down)
        node.start()
        down.end = time.monotonic()
        self._say(f"restarted {name}: down {down.end - stopped:.1f} s")
        self.restart = (stopped, down.end)
        claimer.resume(fresh=True)
        observer = self.observers[name]
        node.wait_for(lambda: observer.log[-1].epoch != before, f"{name}'s client follows its new epoch", 60)
        self.epochs[name] = (before, observer.log[-1].epoch)

    def _revoke(self, name: str) -> None:
        """The first node revokes ``name``, neither of them cut at the time (the revoked node is
        told at once; a member cut then learns at a round after its heal)."""
        with self.lock:
            self.revoked = name
        while name in self.cut or self.nodes[0].name in self.cut:
            time.sleep(0.2)
        self.revoked_at = time.monotonic()
        self.nodes[0].ok("revoke", self.ids[name])
        self._say(f"revoked {name} ({time.monotonic() - self.revoked_at:.1f} s)")

    def _sample(self, until: float) -> None:
        while time.monotonic() < until:
            for node in self.nodes:
                with contextlib.suppress(psutil.Error, AssertionError, ValueError, OSError):
                    daemon = psutil.Process(daemon_pid(node))
                    at = time.monotonic()
                    self.samples[(node.name, self.runs[node.name])].append(
                        Sample(at, daemon.memory_info().rss / 2**20, daemon.num_fds())
                    )
            time.sleep(self.settings.sample_every)

    # -- the end: everything healed, the claims stopped ---------------------------------

    def _running(self) -> list[SwarmNode]:
        return [node for node in self.nodes if node.name != self.revoked]

    def _converge(self, report: Report) -> None:
        """Wait until every running node's union is every owner's own snapshot, every member
        reachable, and every client has read up to what its node has numbered."""
        began = time.monotonic()
        deadline = began + self.settings.converge_within
        differences: list[str] = []
        while time.monotonic() < deadline:
            differences = self._differences()
            if not differences:
                break
            time.sleep(1.0)
        for problem in differences:
            report.fail(f"(d) not converged after {self.settings.converge_within:.0f} s: {problem}")
        report.say(f"converged {time.monotonic() - began:.1f} s after the last claim and heal")
        for node in self.nodes:
            union = node.get("/swarm/snapshot").json()
            self.final[node.name] = union
            for follower, head in (
                (self.observers[node.name], union["seq"]),
                (self.owners[node.name], node.get("/snapshot").json()["seq"]),
            ):
                deadline = time.monotonic() + 30
                while follower.head < head and time.monotonic() < deadline:
                    time.sleep(0.1)
                if follower.head < head:
                    report.fail(f"{follower.path} of {node.name} did not read up to seq {head}")

    def _differences(self) -> list[str]:
        own = {node.name: node.get("/snapshot").json() for node in self.nodes}
        found = []
        for node in self.nodes:
            union = node.get("/swarm/snapshot").json()
            if node.name == self.revoked:
                others = [row["node"] for row in union["nodes"] if row["node"] != node.name]
                if others:
                    found.append(f"{node.name}, revoked, still holds {others}")
                continue
            rows = {row["node"]: row["peer_state"] for row in union["nodes"]}
            for other in self._running():
                if other is not node and rows.get(other.name) != "reachable":
                    found.append(f"{node.name} has {other.name} {rows.get(other.name)}")
            if self.revoked in rows:
                found.append(f"{node.name} still has the revoked {self.revoked}")
            for other in self.nodes:
                node_id = self.ids[other.name]
                held = {r["session_key"]: state_of(r) for r in union["records"] if r["node_id"] == node_id}
                if other.name == self.revoked and other is not node:
                    if held:
                        found.append(f"{node.name}'s union holds {len(held)} records of revoked {other.name}")
                    continue
                truth = {r["session_key"]: state_of(r) for r in own[other.name]["records"]}
                if held != truth:
                    extra = sorted(held.keys() - truth.keys())
                    missing = sorted(truth.keys() - held.keys())
                    wrong = sorted(k for k in held.keys() & truth.keys() if held[k] != truth[k])
                    found.append(
                        f"{node.name}'s union of {other.name}: {len(extra)} extra "
                        f"({', '.join(f'{k} {held[k]}' for k in extra[:3])}), {len(missing)} missing, "
                        f"{len(wrong)} in another state"
                    )
        return found

    # -- the checks ---------------------------------------------------------------------

    def _emitted(self) -> dict[str, list[State]]:
        """What each owner emitted, per session, in order (its ``/changes`` and snapshots)."""
        emitted: dict[str, list[State]] = defaultdict(list)
        for follower in self.owners.values():
            for seen in follower.log:
                if seen.event == "snapshot":
                    for key, state in seen.records:
                        if not emitted[key] or emitted[key][-1] != state:
                            emitted[key].append(state)
                elif seen.key is not None and seen.state is not None:
                    emitted[seen.key].append(seen.state)
        return emitted

    def _check(self, report: Report) -> None:
        settings = self.settings
        emitted = self._emitted()
        names = {node_id: name for name, node_id in self.ids.items()}
        report.say(
            f"ran {settings.seconds / 60:.1f} min, seed {settings.seed}: a claim every "
            f"{settings.change_every[0]:g}-{settings.change_every[1]:g} s per node over {settings.sessions} "
            f"sessions, {settings.end_share:.0%} of them ends; a cut every ~{settings.cut_every:g} s"
        )
        for node in self.nodes:
            claimer = self.claimers[node.name]
            changes = sum(1 for seen in self.owners[node.name].log if seen.key is not None)
            report.say(
                f"  {node.name}: emitted {changes} changes ({claimer.claims} claims, "
                f"{claimer.refused} refused, {claimer.started} sessions started, {claimer.ended} ended)"
            )
        self._check_owners(report)
        totals = dict.fromkeys(COUNTS, 0)
        for node in self.nodes:
            counts = self._check_observer(report, node, emitted, names)
            for name, value in counts.items():
                totals[name] += value
        report.say(
            f"swarm streams: {totals['reports']} session changes seen across the nodes, "
            f"{totals['caught_up']} of them derived from a fresh frame; lost {totals['lost']}, "
            f"duplicated {totals['duplicated']}, invented {totals['invented']}, "
            f"out of order {totals['out_of_order']}; {totals['gone']} said ended when a fresh frame no "
            "longer held them"
        )
        replays = sum(1 for f in self.observers.values() for seen in f.log if seen.resumed is not None)
        report.say(f"client streams dropped {self.drops} times; {replays} reconnects resumed from ?since=")
        self._check_heals(report)
        self._check_revoked(report)
        self._check_restarted(report)
        self._check_growth(report)

    def _check_owners(self, report: Report) -> None:
        """Each owner's own ``/changes``: consecutive seqs, a snapshot only on a new epoch."""
        for name, follower in self.owners.items():
            self._check_numbers(report, f"{name}'s /changes", follower.log)

    def _check_numbers(self, report: Report, what: str, log: list[Seen]) -> None:
        epoch, last = None, None
        for seen in log:
            if seen.event == "snapshot":
                if epoch is not None and seen.epoch == epoch:
                    report.fail(
                        f"(d) {what}: a snapshot within epoch {epoch} at seq {seen.seq}: the replay lost"
                    )
                epoch, last = seen.epoch, seen.seq
                continue
            if seen.epoch != epoch:
                report.fail(f"(d) {what}: epoch {seen.epoch} began with no snapshot")
            elif last is not None and seen.seq != last + 1:
                gap = "repeated" if seen.seq <= last else f"skipped {seen.seq - last - 1}"
                resumed = f" (resumed from {seen.resumed})" if seen.resumed else ""
                report.fail(f"(d) {what}: seq {last} then {seen.seq}: {gap}{resumed}")
            epoch, last = seen.epoch, seen.seq

    def _check_observer(
        self, report: Report, node: SwarmNode, emitted: dict[str, list[State]], names: dict[str, str]
    ) -> dict[str, int]:
        """Rules (a) to (d) for every session X's ``/swarm/changes`` reported."""
        counts = dict.fromkeys(COUNTS, 0)
        log = self.observers[node.name].log
        what = f"{node.name}'s /swarm/changes"
        self._check_numbers(report, what, log)
        at: dict[str, int] = {}
        """Each session's place in what its owner emitted, as far as this stream has told it."""
        view: dict[str, State] = {}
        """The union as a client of this stream holds it."""
        epoch: int | None = None
        burst: str | None = None
        """The node whose fresh frame's changes are coming now: the unbroken run of its
        records right after its ``node`` change, each session once."""
        burst_keys: set[str] = set()
        """The sessions the run has told of (a second change of one is a live one)."""
        gone: set[str] = set()

        def report_one(key: str, state: State, fresh: bool, seq: int) -> None:
            counts["reports"] += 1
            counts["caught_up"] += fresh
            listed = emitted.get(key, [])
            place = at.get(key, -1)
            owner = names.get(owner_of(key), owner_of(key))
            where = f"{what} seq {seq}: {owner}'s {key.split(':', 1)[1]} {state}"
            later = next((i for i in range(place + 1, len(listed)) if listed[i] == state), None)
            if later is None and fresh and place >= 0 and vanished(listed[place], state):
                counts["gone"] += 1  # its owner's fresh frame no longer held it: said ended
                return
            if later is None:
                if place >= 0 and listed[place] == state:
                    if not fresh:
                        counts["duplicated"] += 1
                        report.fail(f"(b) {where}: reported twice in a row")
                elif state in listed[: max(place, 0)]:
                    counts["out_of_order"] += 1
                    report.fail(f"(a) {where}: out of order (after {listed[place]})")
                else:
                    counts["invented"] += 1
                    report.fail(f"(a) {where}: never emitted by its owner")
                return
            if later != place + 1 and not fresh:
                counts["lost"] += later - place - 1
                report.fail(f"(c) {where}: {later - place - 1} change(s) before it missing on a live link")
            at[key] = later

        for seen in log:
            if seen.event == "snapshot":
                if seen.epoch != epoch:
                    at.clear()
                epoch, burst = seen.epoch, None
                view = dict(seen.records)
                for key, state in seen.records:
                    report_one(key, state, True, seen.seq)
                continue
            if seen.event == "node" and seen.peer_state == "reachable":
                burst, burst_keys = seen.node_id, set()
                continue
            if seen.event == "node_left":
                burst = None
                gone.add(seen.node_id or "")
                if seen.node_id == self.ids.get(self.revoked or "") and seen.reason != "revoked":
                    report.fail(f"{what}: {self.revoked} left for {seen.reason}, not revoked")
                for key in [key for key in view if owner_of(key) == seen.node_id]:
                    del view[key]
                continue
            if seen.key is None or seen.state is None:
                burst = None
                continue
            owner = owner_of(seen.key)
            if owner != burst or seen.key in burst_keys:
                burst = None
            burst_keys.add(seen.key)
            if owner in gone:
                report.fail(f"{what} seq {seen.seq}: a record of {names.get(owner)} after it left the union")
            view[seen.key] = seen.state
            report_one(seen.key, seen.state, burst is not None, seen.seq)
        report.say(
            f"  {node.name} saw {counts['reports']} session changes ({counts['caught_up']} from fresh "
            f"frames), {sum(1 for seen in log if seen.event == 'node')} node changes, "
            f"{self.observers[node.name].reconnects} reconnects"
        )
        final = self.final.get(node.name)
        if final is not None:
            union = {r["session_key"]: state_of(r) for r in final["records"]}
            for key in sorted(view.keys() | union.keys()):
                if view.get(key) == union.get(key):
                    continue
                owner = names.get(owner_of(key), owner_of(key))
                if key not in union and view[key][0] == "ended":
                    continue  # an ended session leaves the union after its linger, with no change
                report.fail(
                    f"(d) {what}: a client holds {owner}'s {key.split(':', 1)[1]} as {view.get(key)}, "
                    f"the union as {union.get(key)}"
                )
        return counts

    def _check_heals(self, report: Report) -> None:
        """Every link lost in a cut came back; how long each took from its heal."""
        cuts = [down for down in self.downs if down.kind == "cut"]
        lost_in: set[int] = set()
        heals: list[float] = []
        slowest = ""
        unexplained = []
        for observer_name, follower in self.observers.items():
            lost_at: dict[str, float] = {}
            for seen in follower.log:
                if seen.event != "node" or seen.node_id is None:
                    continue
                other = next((n for n, i in self.ids.items() if i == seen.node_id), None)
                if other is None:
                    continue
                if seen.peer_state == "unreachable":
                    lost_at[other] = seen.at
                    continue
                if other not in lost_at:
                    continue
                lost = lost_at.pop(other)
                # Every time either end was off the network while the link was gone: the link
                # can come back only once both are on it again (a second cut may follow the first).
                causes = [
                    down
                    for down in self.downs
                    if down.name in (other, observer_name)
                    and down.start < seen.at
                    and (down.end or seen.at) >= lost - SLACK
                ]
                if not [down for down in causes if down.start <= lost + 0.5]:
                    unexplained.append(f"{observer_name} lost {other} for {seen.at - lost:.1f} s")
                    continue
                last = max(causes, key=lambda down: down.end or 0.0)
                for down in causes:
                    if down.kind == "cut" and down.start <= lost + 0.5:
                        lost_in.add(id(down))
                if last.kind == "cut":
                    took = max(0.0, seen.at - (last.end or seen.at))
                    heals.append(took)
                    if took >= max(heals):
                        slowest = f"{observer_name} heard {other} again {took:.1f} s after {last.name}'s heal"
        long = sum(1 for down in cuts if down.end is not None and down.end - down.start > 10)
        longest = max(heals, default=0.0)
        report.say(
            f"partitions: {len(cuts)} cuts ({long} longer than 10 s), all healed "
            f"{'yes' if all(d.end is not None for d in cuts) else 'NO'}; {len(lost_in)} of them lost a link; "
            f"{len(heals)} links back, longest {longest:.1f} s after its heal, median "
            f"{statistics.median(heals) if heals else 0.0:.1f} s"
        )
        if slowest:
            report.say(f"  the slowest: {slowest}")
        if longest > self.settings.heal_within:
            report.fail(
                f"a link came back {longest:.1f} s after its heal (at most {self.settings.heal_within:g})"
            )
        if unexplained:
            report.say(
                f"  links lost with no cut nor restart to explain it: {len(unexplained)}: {unexplained[:5]}"
            )

    def _check_revoked(self, report: Report) -> None:
        name = self.revoked
        if name is None:
            report.fail("no node was revoked")
            return
        node_id = self.ids[name]
        told = []
        for node in self._running():
            left = [
                s for s in self.observers[node.name].log if s.event == "node_left" and s.node_id == node_id
            ]
            if not left:
                report.fail(f"{node.name}'s stream never said {name} left")
            else:
                told.append(left[0].at - (self.revoked_at or left[0].at))
        report.say(
            f"revoked {name}: every other node said node_left (revoked) within {max(told, default=0):.1f} s "
            f"of the revoke; no record of it after, on any stream or union"
        )

    def _check_restarted(self, report: Report) -> None:
        name = self.restarted
        if name is None or self.restart is None:
            report.fail("no node was restarted")
            return
        stopped, started = self.restart
        node_id = self.ids[name]
        for node in self._running():
            if node.name == name:
                continue
            said = [
                (s.peer_state, s.at)
                for s in self.observers[node.name].log
                if s.event == "node" and s.node_id == node_id and s.at >= stopped
            ]
            lost = next((at for state, at in said if state == "unreachable"), None)
            back = next((at for state, at in said if state == "reachable" and lost and at > lost), None)
            if lost is None or back is None:
                report.fail(f"{node.name} did not see the restarted {name} lost and back: {said[:4]}")
        before, after = self.epochs.get(name, (0, 0))
        if before == after:
            report.fail(f"{name}'s client did not get a new feed epoch after its restart")
        owner = [s.epoch for s in self.owners[name].log if s.event == "snapshot"]
        if len(set(owner)) < 2:
            report.fail(f"{name}'s /changes client did not get a snapshot of a new epoch after its restart")
        report.say(
            f"restarted {name}: down {started - stopped:.1f} s; its peers saw it unreachable and back; "
            f"its clients reconnected to a new epoch ({before} -> {after}) and followed on from its snapshot"
        )

    def _check_growth(self, report: Report) -> None:
        settings = self.settings
        report.say(
            "memory and descriptors per daemon (after warm-up: first quarter -> last quarter of the samples; "
            f"bounded: RSS at most +{settings.rss_margin:.0%} or +{settings.rss_floor:g} MiB, "
            f"descriptors at most +{settings.fd_margin:g})"
        )
        for (name, run), samples in sorted(self.samples.items()):
            if len(samples) < 8:
                report.say(f"  {name} (run {run + 1}): {len(samples)} samples, too few to judge")
                continue
            start, end = samples[0].at, samples[-1].at
            warm = start + (end - start) / 4
            log = self.observers[name].log
            full = next((s.at for s in log if s.seq >= FEED_RING and s.epoch == log[-1].epoch), None)
            if full is not None and run == self.runs[name]:
                warm = max(warm, full)
            kept = [s for s in samples if s.at >= warm]
            if len(kept) < 8:
                kept = samples[len(samples) // 2 :]
            quarter = max(1, len(kept) // 4)
            first, last = kept[:quarter], kept[-quarter:]
            rss = (statistics.mean(s.rss for s in first), statistics.mean(s.rss for s in last))
            fds = (statistics.mean(s.fds for s in first), statistics.mean(s.fds for s in last))
            peak = max(s.rss for s in samples)
            report.say(
                f"  {name}{' (after its restart)' if run else ''}: RSS {rss[0]:.1f} -> {rss[1]:.1f} MiB "
                f"(peak {peak:.1f}), descriptors {fds[0]:.1f} -> {fds[1]:.1f}, {len(samples)} samples"
            )
            allowed = max(rss[0] * settings.rss_margin, settings.rss_floor)
            if rss[1] - rss[0] > allowed:
                report.fail(f"{name}'s RSS grew {rss[1] - rss[0]:.1f} MiB (at most {allowed:.1f})")
            if fds[1] - fds[0] > settings.fd_margin:
                report.fail(
                    f"{name}'s descriptors grew {fds[1] - fds[0]:.1f} (at most {settings.fd_margin:g})"
                )
