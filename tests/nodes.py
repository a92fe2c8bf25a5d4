"""Several machines on one: each node in its own network, PID and mount namespace.

The nodes sit on a bridge of their own with addresses in 100.64.0.0/10, as a tailnet's do, so
what a swarm does between machines is done here between namespaces, and nothing leaves this
one (the tests already run in a network namespace of their own, with only loopback). A node's
processes run under ``ip netns exec NODE unshare --pid --fork --mount-proc --kill-child``: the
node sees only its own processes (its daemon's scan finds only its own agents), and ending the
namespace's first process ends every process in it.

Every bridge, veth pair and namespace is named with a per-network prefix and deleted at
teardown whatever happened; ``pytest_sessionfinish`` fails the run if any is left (a name with
:data:`PREFIX` and a tag this test run made), as the leak guard does for processes. Only
this run's tags: namespace names are the machine's, and another run beside this one (another
checkout's suite) has its own nodes up.

Needs root (or the user namespace ``scripts/test`` makes when not run as root).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.signals import signal_if

PREFIX = "rst"
"""Every namespace and link a test makes starts with this (interface names are 15 bytes at most)."""
IP = shutil.which("ip") or "/usr/sbin/ip"
STOP_GRACE = 3.0
"""Seconds a node's process may take to end on SIGTERM before it is killed."""


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IP, *args], capture_output=True, text=True, check=check, timeout=20)


@dataclass
class Node:
    """One machine: its namespace, its address on the bridge and the host end of its link."""

    namespace: str
    address: str
    link: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def argv(self, *argv: str) -> list[str]:
        """``argv`` as it runs inside the node: its network, its process table, its /proc."""
        return [IP, "netns", "exec", self.namespace, "unshare", "--pid", "--fork", "--mount-proc",
                "--kill-child", *argv]  # fmt: skip

    def start(self, *argv: str, **popen: object) -> subprocess.Popen[bytes]:
        """A long-running process in the node, ended at teardown with everything it started."""
        proc = subprocess.Popen(self.argv(*argv), **popen)  # type: ignore[call-overload]
        self.procs.append(proc)
        return proc

    def run(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        """A short command in the node (a process table of its own too), to completion."""
        return subprocess.run(self.argv(*argv), capture_output=True, text=True, timeout=timeout)

    def partition(self) -> None:
        """The cable is pulled: the node's link goes down without a word to anyone."""
        ip("link", "set", self.link, "down")

    def heal(self) -> None:
        ip("link", "set", self.link, "up")

    def listeners(self) -> list[str]:
        """Every TCP socket listening in the node, as ``ss`` prints its local address."""
        done = subprocess.run([IP, "netns", "exec", self.namespace, "ss", "-Htln"],
                              capture_output=True, text=True, timeout=20, check=True)  # fmt: skip
        return [line.split()[3] for line in done.stdout.splitlines() if line.strip()]

    def stop(self) -> None:
        """SIGTERM to each namespace's first process (``unshare`` itself ignores SIGTERM while
        it waits for it), so a daemon ends as it would on a machine; its namespace ends with it.
        A first process with no handler of its own ignores SIGTERM (it is its namespace's init),
        so after :data:`STOP_GRACE` it is killed."""
        self.terminate()
        self.wait()

    def end(self, proc: subprocess.Popen[bytes]) -> int:
        """End one of the node's processes as :meth:`stop` ends them all; its exit status."""
        self._signal(proc, signal.SIGTERM)
        try:
            return proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            self._signal(proc, signal.SIGKILL)
            return proc.wait(10)

    def terminate(self) -> None:
        for proc in self.procs:
            self._signal(proc, signal.SIGTERM)

    def wait(self) -> None:
        for proc in self.procs:
            try:
                proc.wait(STOP_GRACE)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait(10)

    @staticmethod
    def _signal(proc: subprocess.Popen[bytes], signum: int) -> None:
        if proc.poll() is None:  # unreaped, ``proc.pid`` is still ours; a child may be gone by now
            for pid in _children(proc.pid) or [proc.pid]:
                signal_if(pid, signum, lambda pid=pid: pid == proc.pid or pid in _children(proc.pid))


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as listed:
            return [int(child) for child in listed.read().split()]
    except OSError:
        return []


SUBNETS = range(64, 250)
"""The third octet of each network's 100.64.X.0/24: one a test process takes is free of every
other bridge in this network namespace, which parallel workers share."""


@contextlib.contextmanager
def _subnets() -> Iterator[set[int]]:
    """The subnets bridges here use now, held under a lock across workers until the caller
    has put its own address on its bridge (two bridges on one /24 would make the host's route
    to a node's address a coin toss)."""
    with open(os.path.join(tempfile.gettempdir(), "roost-test-subnets.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        listed = ip("-o", "-4", "addr", "show", check=False).stdout.split()
        taken = {int(word.split(".")[2]) for word in listed if word.startswith("100.64.") and "/" in word}
        yield taken


class Network:
    """A bridge and the nodes on it; everything it made is gone after :meth:`close`."""

    def __init__(self, subnet: int | None = None) -> None:
        self.tag = secrets.token_hex(3)
        TAGS.add(self.tag)
        self.bridge = f"{PREFIX}b{self.tag}"
        self.nodes: list[Node] = []
        with _subnets() as taken:
            self.subnet = subnet if subnet is not None else min(set(SUBNETS) - taken)
            ip("link", "add", self.bridge, "type", "bridge")
            ip("addr", "add", f"100.64.{self.subnet}.1/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    def add(self) -> Node:
        """A new node, up, with the next address on the bridge."""
        n = len(self.nodes) + 1
        node = Node(f"{PREFIX}n{self.tag}-{n}", f"100.64.{self.subnet}.{n + 1}", f"{PREFIX}v{self.tag}{n}")
        self.nodes.append(node)
        ip("netns", "add", node.namespace)
        ip("link", "add", node.link, "type", "veth", "peer", "name", "eth0", "netns", node.namespace)
        ip("link", "set", node.link, "master", self.bridge)
        ip("link", "set", node.link, "up")
        ip("-n", node.namespace, "addr", "add", f"{node.address}/24", "dev", "eth0")
        ip("-n", node.namespace, "link", "set", "eth0", "up")
        ip("-n", node.namespace, "link", "set", "lo", "up")
        return node

    def close(self) -> None:
        for node in self.nodes:  # every node told at once, so they end together
            with contextlib.suppress(Exception):
                node.terminate()
        for node in self.nodes:
            with contextlib.suppress(Exception):
                node.wait()
            ip("link", "del", node.link, check=False)
            ip("netns", "del", node.namespace, check=False)
        ip("link", "del", self.bridge, check=False)
        left = made()
        assert not [name for name in left if self.tag in name], f"left behind: {left}"


TAGS: set[str] = set()
"""The tag of every network this test run made (per process: each worker checks its own)."""


def made() -> list[str]:
    """Every namespace and link on this machine that this test run made (by :data:`PREFIX`
    and its :data:`TAGS`)."""
    spaces = ip("netns", "list", check=False).stdout.split()
    links = [
        line.split(":")[1].strip().split("@")[0] for line in ip("-o", "link", check=False).stdout.splitlines()
    ]
    return sorted(
        name for name in [*spaces, *links] if name.startswith(PREFIX) and any(tag in name for tag in TAGS)
    )


@pytest.fixture
def network() -> Iterator[Network]:
    """A bridge for this test's nodes (``network.add()``), all deleted at teardown."""
    found = Network()
    try:
        yield found
    finally:
        found.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A namespace, veth or bridge that outlived its test fails the run, as a process would."""
    left = made()
    if left:
        for name in left:
            ip("netns", "del", name, check=False)
            ip("link", "del", name, check=False)
        print(f"\nnetwork objects left behind by the tests (now deleted): {', '.join(left)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
