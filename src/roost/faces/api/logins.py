"""Logging a browser in: one-time login links, and the session cookie one is traded for.

A browser cannot present the loopback bearer token, and must never be handed it: the token
would end up in its history and in every page's reach. So the daemon prints a login link
instead, ``/login?token=…``; opening it trades the token, once, for a session cookie
(HttpOnly: no script reads it; SameSite=Strict: no other site's page makes the browser send it).

- A login token lives only in this process, hashed, and works once. A daemon restart prints
  a new link; the old one is dead.
- A session cookie is signed with a key derived from the loopback token, so a browser stays
  logged in across daemon restarts, and a new ``loopback.token`` logs every browser out.
- Cookies are per port (``roost_session_<port>``): browsers share cookies between ports of one
  host, and two daemons on 127.0.0.1 must not overwrite each other's.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable

LIFETIME = 30 * 24 * 3600
"""Seconds a session cookie is good for: a month, then open a new login link."""
OUTSTANDING = 16
"""Unused login tokens kept at most; minting another forgets the oldest."""
_VERSION = "v1"
_LABEL = b"roost web session v1"


def cookie_name(port: int) -> str:
    return f"roost_session_{port}"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Logins:
    """Issues and redeems login tokens; signs and checks session cookies.

    ``secret`` is the loopback token (None: a random key, so cookies die with the process,
    which is what an app built in a test wants).
    """

    def __init__(
        self, secret: str | None = None, clock: Callable[[], float] = time.time, lifetime: int = LIFETIME
    ) -> None:
        seed = secret.encode() if secret is not None else secrets.token_bytes(32)
        self._key = hmac.new(seed, _LABEL, hashlib.sha256).digest()
        self._clock = clock
        self.lifetime = lifetime
        self._tokens: OrderedDict[str, None] = OrderedDict()

    def issue(self) -> str:
        """A new one-time login token."""
        token = secrets.token_urlsafe(24)
        self._tokens[_digest(token)] = None
        while len(self._tokens) > OUTSTANDING:
            self._tokens.popitem(last=False)
        return token

    def link(self, origin: str) -> str:
        """A login link on ``origin`` (``http://127.0.0.1:PORT``) with a fresh token."""
        return f"{origin}/login?token={self.issue()}"

    def redeem(self, token: str) -> bool:
        """Whether ``token`` was issued and unused; it is used up either way."""
        return self._tokens.pop(_digest(token), False) is None

    def cookie(self) -> str:
        """A new session cookie value: version, expiry, a nonce, and their signature."""
        body = f"{_VERSION}.{int(self._clock()) + self.lifetime}.{secrets.token_urlsafe(12)}"
        return f"{body}.{self._sign(body)}"

    def valid(self, value: str | None) -> bool:
        """Whether a cookie value is one this key signed and has not expired."""
        if not value:
            return False
        body, _, mac = value.rpartition(".")
        version, _, rest = body.partition(".")
        expires, _, _nonce = rest.partition(".")
        if version != _VERSION or not expires.isdigit():
            return False
        return hmac.compare_digest(mac, self._sign(body)) and int(expires) > self._clock()

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()
