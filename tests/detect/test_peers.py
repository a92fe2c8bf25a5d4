"""Who is at the other end of a socket, in the kernel's word (:mod:`roost.truth.detect.peers`): a TCP
connection on loopback is traced to the one process that holds its other end."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import pytest

from roost.agents.manifest import load_all
from roost.base import procfs
from roost.pane.tmux.server import Server
from roost.truth.detect import procs
from roost.truth.detect.attest import Attestor, Unproven
from roost.truth.detect.identify import Names
from roost.truth.detect.peers import tcp_peer
from roost.truth.roster import ProcessId
from tests.conftest import Roost

CLIENT = 'exec 3<>"/dev/tcp/127.0.0.1/$1" && {} echo connected && read -r _'
"""A client in bash (any user can run it): connects, says so, holds on until its stdin ends."""


@contextmanager
def connected(also: str = "", **popen: object) -> Iterator[tuple[subprocess.Popen[str], socket.socket]]:
    """A child process connected to a listener of this one, and this end of the connection;
    ``also`` runs in the child (in its own process group, ended with it) once it is connected."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(20)
        child = subprocess.Popen(
            ["/bin/bash", "-c", CLIENT.format(also), "client", str(listener.getsockname()[1])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
            **popen,  # type: ignore[call-overload]
        )
        try:
            assert child.stdout is not None and child.stdout.readline() == "connected\n"
            accepted, _ = listener.accept()
            with accepted:
                yield child, accepted
        finally:
            with suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait(10)


def of(sock: socket.socket, among: list[int] | None = None) -> object:
    """:func:`tcp_peer` of an accepted socket, by its two addresses."""
    return tcp_peer(sock.getsockname(), sock.getpeername(), among)


def test_the_connecting_process_is_named() -> None:
    with connected() as (child, accepted):
        assert of(accepted) == procs.identity(child.pid)
        assert of(accepted, among=[child.pid]) == procs.identity(child.pid)


def test_a_process_outside_the_search_is_not_found() -> None:
    with connected() as (_, accepted):
        assert of(accepted, among=[os.getpid()]) == "no process visible to this daemon holds the connection"


def test_a_connection_whose_other_end_closed_names_nobody() -> None:
    with connected() as (child, accepted):
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(10)
        assert isinstance(of(accepted), str)


def test_a_socket_two_processes_hold_names_neither() -> None:
    """A connection inherited across a fork (the client's background job holds it too): no one
    process can be said to have sent what comes over it."""
    with connected("sleep 600 &") as (child, accepted):
        # ``&`` sends the connect to a background subshell, which holds the connection and starts
        # sleep as a child that inherits it; until that exec is done, the child's descriptors
        # cannot be read and only the subshell would be seen holding it.
        deadline = time.monotonic() + 10
        while not any((st := procfs.stat(pid)) and st.name == b"sleep" for pid in descendants(child.pid)):
            assert time.monotonic() < deadline, "the background job never ran sleep"
            time.sleep(0.01)
        assert of(accepted) == "several processes hold the connection"


def descendants(pid: int) -> list[int]:
    found, parents = [], [pid]
    while parents:
        parent = parents.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as listed:
                children = [int(child) for child in listed.read().split()]
        except OSError:
            continue
        found += children
        parents += children
    return found


@pytest.mark.skipif(os.getuid() != 0, reason="starting a process as another user needs root")
def test_another_users_process_is_refused() -> None:
    with connected(user=65534, group=65534) as (_, accepted):
        assert of(accepted) == "the poster runs as uid 65534, not as this daemon's user"


def test_a_unix_socket_is_not_tcp() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert of(left) == "the connection is not TCP on loopback"


@contextmanager
def listening() -> Iterator[socket.socket]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(20)
        yield listener


def connect_from_pane(
    roost: Roost, listener: socket.socket, name: str, agent: str = ""
) -> tuple[str, socket.socket]:
    """A pane whose program (named ``agent`` by ``ROOST_AGENT`` when given) connects to
    ``listener`` and waits; the pane and this end of its connection."""
    port = listener.getsockname()[1]
    program = f"exec 3<>/dev/tcp/127.0.0.1/{port} && read -r _"
    prefix = f"env ROOST_AGENT={agent} " if agent else ""
    pane = roost.start(f"{prefix}bash -c {shlex.quote(program)}", session=name)
    accepted, _ = listener.accept()
    return pane, accepted


def test_an_agent_posting_from_its_own_pane_is_proven_and_no_other_pane_is(roost: Roost) -> None:
    """The HTTP hook's attestation: the kernel names the poster, and it must be the agent of
    the pane its ``X-Pane`` header names."""
    attestor = Attestor(Server(roost.socket), Names(load_all().values()))
    with listening() as listener:
        agent_pane, from_agent = connect_from_pane(roost, listener, "agent", agent="pi")
        shell_pane, from_shell = connect_from_pane(roost, listener, "shell")
        with from_agent, from_shell:
            poster = of(from_agent)
            assert isinstance(poster, ProcessId)
            proof = attestor.prove_in_pane(agent_pane, poster)
            assert (proof.pane_id, proof.process, proof.harness) == (agent_pane, poster, "pi")
            with pytest.raises(Unproven, match=f"is not in the process tree of pane {shell_pane}"):
                attestor.prove_in_pane(shell_pane, poster)  # the agent, naming another pane
            stranger = of(from_shell)
            assert isinstance(stranger, ProcessId)
            with pytest.raises(Unproven, match="is not a known agent"):
                attestor.prove_in_pane(shell_pane, stranger)  # no agent behind the post
            with pytest.raises(Unproven, match=f"is not in the process tree of pane {agent_pane}"):
                attestor.prove_in_pane(agent_pane, stranger)  # a pane not its own
            for bad in ("%999999", "%1;kill-server", "1", ""):
                with pytest.raises(Unproven):
                    attestor.prove_in_pane(bad, poster)
