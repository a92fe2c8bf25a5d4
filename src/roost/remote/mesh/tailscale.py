"""What Tailscale says about this machine and its peers, from ``tailscale status --json``.

Tailscale is the engine underneath the swarm (WireGuard, machine identity, discovery); roost
only asks it two things: this node's tailnet address (where the swarm listener binds when
``[node] listen = "tailscale"``) and which peers are online (whom a round may greet). Without
a ``tailscale`` program on PATH, both answers are empty and the swarm runs on
``[swarm] static_peers`` and its members' addresses alone.

The document is read defensively: it is another program's, its fields vary by version, and
only ``Self.TailscaleIPs`` and ``Peer.*.{Online, TailscaleIPs}`` are used.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import shutil
import subprocess
from dataclasses import dataclass

TIMEOUT = 5.0
"""Seconds ``tailscale status`` may take; a wedged tailscaled must not hold the daemon."""
PROGRAM = "tailscale"


@dataclass(frozen=True)
class Status:
    addresses: tuple[str, ...]
    """This machine's tailnet addresses, IPv4 first."""
    peers: tuple[str, ...]
    """One address (IPv4 first) of each peer that is online."""


def available() -> bool:
    """Whether a ``tailscale`` program is on PATH."""
    return shutil.which(PROGRAM) is not None


def _ips(value: object) -> tuple[str, ...]:
    found = []
    for text in value if isinstance(value, list) else []:
        try:
            found.append(ipaddress.ip_address(text))
        except (TypeError, ValueError):
            continue
    return tuple(str(ip) for ip in sorted(found, key=lambda ip: ip.version))


def parse(document: object) -> Status:
    """The addresses in a ``tailscale status --json`` document; empty for anything else."""
    if not isinstance(document, dict):
        return Status((), ())
    own = document.get("Self")
    addresses = _ips(own.get("TailscaleIPs")) if isinstance(own, dict) else ()
    table = document.get("Peer")
    peers = []
    for peer in table.values() if isinstance(table, dict) else ():
        if isinstance(peer, dict) and peer.get("Online") is True:
            ips = _ips(peer.get("TailscaleIPs"))
            if ips:
                peers.append(ips[0])
    return Status(addresses, tuple(peers))


def _decode(output: bytes) -> Status:
    try:
        return parse(json.loads(output))
    except ValueError:
        return Status((), ())


def status() -> Status:
    """Tailscale's view now, waiting at most :data:`TIMEOUT` (for the daemon's start)."""
    program = shutil.which(PROGRAM)
    if program is None:
        return Status((), ())
    try:
        done = subprocess.run(
            [program, "status", "--json"], capture_output=True, timeout=TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return Status((), ())
    return _decode(done.stdout) if done.returncode == 0 else Status((), ())


async def status_async() -> Status:
    """:func:`status` without blocking the event loop (every round asks)."""
    program = shutil.which(PROGRAM)
    if program is None:
        return Status((), ())
    try:
        proc = await asyncio.create_subprocess_exec(
            program, "status", "--json", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:
        return Status((), ())
    try:
        output, _ = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return Status((), ())
    return _decode(output) if proc.returncode == 0 else Status((), ())
