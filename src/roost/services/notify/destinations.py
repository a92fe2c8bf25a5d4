"""Where a webhook may point: loopback and the tailnet, nowhere else.

A webhook makes the daemon send a request, with a token the caller chose, wherever its URL says;
left open, any local process could point it at the LAN or the internet. So a URL is accepted
only when it is ``http`` or ``https`` with no user or password, and its host is

- an address on loopback (``127.0.0.0/8``, ``::1``) or Tailscale's tailnet (``100.64.0.0/10``,
  ``fd7a:115c:a1e0::/48``), written as an address; or
- the name ``localhost``, or a Tailscale MagicDNS name (``*.ts.net``), when *every* address it
  resolves to is one of those.

A name is allowed at all because a tailnet peer's HTTPS certificate (``tailscale cert``) is
issued for its ``ts.net`` name, not its address. It is resolved when the webhook is registered
and again before every delivery, and the delivery connects to an address just checked (the name
goes only into ``Host`` and TLS's server name), so a name that starts resolving elsewhere later
(DNS rebinding, a ``ts.net`` name opened to the internet by Funnel) is refused, never followed.
Every other name is refused without being looked up: which of them resolve where is not ours
to vouch for.

:func:`parse` is the part that needs no resolver (the request body's model calls it), and
the last thing it checks is the URL's shape as one pattern (:mod:`roost.services.notify.urlshape`, which
the OpenAPI document states); :func:`addresses` is the part that does (registration and every
delivery call it).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from roost.base.errors import UsageError
from roost.services.notify.urlshape import SHAPE

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``(host, port)`` to the addresses it resolves to, as text; raises OSError when it does not."""

NETWORKS = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
    ipaddress.ip_network("100.64.0.0/10"),
    ipaddress.ip_network("fd7a:115c:a1e0::/48"),
)
"""Loopback, and the ranges Tailscale gives tailnet nodes."""
WHERE = "loopback (127.0.0.0/8, ::1, localhost) or the tailnet (100.64.0.0/10, fd7a:115c:a1e0::/48, *.ts.net)"
SCHEMES = ("http", "https")
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
TAILNET_NAME = re.compile(rf"(?:{_LABEL}\.)+ts\.net")
LOCALHOST = "localhost"
LONGEST = 2048
"""The most characters a webhook's URL may hold."""
_TEXT = re.compile(r"[\x21-\x7e]+")
"""What a URL is written in: visible ASCII, no spaces (a host in another script is refused too)."""


def refused(message: str) -> UsageError:
    """A 400 about the body's ``url``."""
    return UsageError(f"url {message}", field="url")


@dataclass(frozen=True)
class Destination:
    """A URL the rule accepted: its parts, and whether its host is a name to resolve."""

    url: str
    scheme: str
    host: str
    """The address or name, lower case, without brackets or a trailing dot."""
    port: int
    path: str
    query: str

    @property
    def named(self) -> bool:
        return _literal(self.host) is None

    @property
    def authority(self) -> str:
        """What ``Host`` says: the name (or address) and any port the URL gave."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return shown if self.port == default else f"{shown}:{self.port}"

    def at(self, address: str) -> str:
        """This URL with its host replaced by ``address`` (to connect to exactly that)."""
        shown = f"[{address}]" if ":" in address else address
        return urlunsplit((self.scheme, f"{shown}:{self.port}", self.path or "/", self.query, ""))


def allowed(address: Address) -> bool:
    """Whether ``address`` is on loopback or the tailnet (an IPv4-mapped IPv6 address as its IPv4)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in NETWORKS)


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def parse(url: str) -> Destination:
    """``url`` as a destination, or :class:`UsageError` saying what the rule refuses in it."""
    if len(url) > LONGEST:
        raise refused(f"is too long: {len(url)} characters, at most {LONGEST}")
    if not _TEXT.fullmatch(url):
        raise refused("may hold only visible ASCII characters: no spaces, control or non-ASCII characters")
    try:  # urlsplit refuses some URLs itself (an unclosed IPv6 bracket) with ValueError
        parts = urlsplit(url)
        hostname, port = parts.hostname, parts.port
    except ValueError:
        raise refused("is not a URL with a valid host and port") from None
    if parts.scheme not in SCHEMES:
        raise refused(f"must be http or https, not {parts.scheme or 'a URL without a scheme'}")
    if "@" in parts.netloc:
        raise refused("may not hold a user or password: the receiver's secret goes in token")
    if not hostname:
        raise refused("names no host")
    if port == 0:
        raise refused("names port 0")
    host = hostname.removesuffix(".")
    literal = _literal(host)
    if literal is not None:
        if "%" in host or not allowed(literal):
            raise refused(f"points to {host}, which is not on {WHERE}")
    elif host != LOCALHOST and not TAILNET_NAME.fullmatch(host):
        raise refused(f"names the host {host}, which is not on {WHERE}")
    if not SHAPE.fullmatch(url):
        raise refused(
            "is not scheme://HOST[:PORT] then a path: HOST an address (IPv6 in brackets, "
            "nothing beside them), localhost or a ts.net name"
        )
    default = 443 if parts.scheme == "https" else 80
    return Destination(url, parts.scheme, host, port or default, parts.path, parts.query)


async def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, by the system's resolver, off the event loop."""
    found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(sockaddr[0]) for *_, sockaddr in found]


async def addresses(destination: Destination, resolver: Resolver = resolve) -> list[str]:
    """The addresses to connect to, in the resolver's order; for a name, each one checked, and
    :class:`UsageError` when it resolves to none or to any that is not allowed."""
    if not destination.named:
        return [destination.host]
    try:
        found = list(dict.fromkeys(await resolver(destination.host, destination.port)))
    except OSError:
        found = []
    if not found:
        raise refused(f"names the host {destination.host}, which does not resolve")
    outside = [address for address in found if not _checked(address)]
    if outside:
        raise refused(f"names the host {destination.host}, which resolves to {outside[0]}: not on {WHERE}")
    return found


def _checked(address: str) -> bool:
    literal = _literal(address)
    return literal is not None and "%" not in address and allowed(literal)
