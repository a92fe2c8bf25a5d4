"""Where the swarm listener binds, or why it stays off: one answer for the daemon and ``doctor``.

``[node] listen`` is ``"tailscale"`` (the default: this machine's tailnet address, IPv4
first), ``"off"``, or one address the config check already allowed (loopback or tailnet).
With no Tailscale and no address named the listener stays off, and everything else the
daemon does works as it did without a swarm.
"""

from __future__ import annotations

from dataclasses import dataclass

from roost.remote.mesh import tailscale


@dataclass(frozen=True)
class Place:
    host: str | None
    """The address to bind, or None: the listener is off."""
    port: int
    why: str
    """How the address was chosen, or why there is none, in a person's words."""

    @property
    def address(self) -> str | None:
        """``host:port`` as peers dial it (an IPv6 host in brackets), None when off."""
        if self.host is None:
            return None
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def place(listen: str, port: int, status: tailscale.Status | None = None) -> Place:
    """Where ``[node] listen`` puts the listener; ``status`` is Tailscale's (asked when None)."""
    if listen == "off":
        return Place(None, port, '[node] listen = "off" in the config')
    if listen != "tailscale":
        return Place(listen, port, "[node] listen in the config")
    if status is None:
        if not tailscale.available():
            return Place(
                None,
                port,
                'no `tailscale` on PATH and [node] listen names no address (listen = "100.64.0.7", say)',
            )
        status = tailscale.status()
    if not status.addresses:
        return Place(None, port, "tailscale reports no address for this machine (is it logged in and up?)")
    return Place(status.addresses[0], port, "this machine's Tailscale address")
