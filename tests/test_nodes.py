"""The nodes fixture itself (tests/nodes.py): separate machines that reach only each other,
partitions that go silent, and nothing left behind."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.nodes import Network, Node, made

pytestmark = pytest.mark.daemon

SERVE = """
import socket, sys
server = socket.create_server((sys.argv[1], 8791))
print("ready", flush=True)
while True:
    conn, _ = server.accept()
    conn.sendall(b"hello from " + sys.argv[1].encode())
    conn.close()
"""
ASK = """
import socket, sys
try:
    with socket.create_connection((sys.argv[1], 8791), timeout=float(sys.argv[2])) as conn:
        print(conn.recv(100).decode())
except OSError as error:
    print(type(error).__name__)
"""


def serve(node: Node) -> subprocess.Popen[bytes]:
    proc = node.start(sys.executable, "-c", SERVE, node.address, stdout=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    return proc


def ask(node: Node, address: str, timeout: float = 2) -> str:
    return node.run(sys.executable, "-c", ASK, address, str(timeout)).stdout.strip()


def test_nodes_reach_each_other_by_their_addresses_and_see_only_their_own_processes(network: Network) -> None:
    a, b = network.add(), network.add()
    serve(a)
    assert ask(b, a.address) == f"hello from {a.address}"
    assert a.listeners() == [f"{a.address}:8791"]
    assert b.listeners() == []
    seen = b.run("ps", "-eo", "pid=,comm=").stdout.split("\n")
    assert len([line for line in seen if line.strip()]) <= 3, seen  # its shell, ps: nothing of a's


def test_a_partitioned_node_goes_silent_and_comes_back_when_healed(network: Network) -> None:
    a, b = network.add(), network.add()
    serve(a)
    a.partition()
    began = time.monotonic()
    assert ask(b, a.address, timeout=1.5) in ("TimeoutError", "timeout", "OSError")  # no refusal: silence
    assert time.monotonic() - began >= 1.4
    a.heal()
    deadline = time.monotonic() + 15
    while (said := ask(b, a.address)) != f"hello from {a.address}":
        assert time.monotonic() < deadline, said
        time.sleep(0.2)


def test_closing_a_network_deletes_every_namespace_link_and_bridge_and_ends_its_processes() -> None:
    network = Network()
    nodes = [network.add() for _ in range(3)]
    procs = [serve(node) for node in nodes]
    assert len([name for name in made() if network.tag in name]) == 7  # a bridge, 3 veths, 3 namespaces
    network.close()
    assert [name for name in made() if network.tag in name] == []
    assert all(proc.poll() is not None for proc in procs)
