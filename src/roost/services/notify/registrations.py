"""The registered webhooks, kept in ``webhooks.json`` beside the daemon's other secrets.

A registration is one of the few things that must survive a restart: a client that registered
once expects its changes after the daemon comes back. The file holds each receiver's token, so
it is private (0600, written whole through :mod:`roost.base.files`), and one readable by others or
owned by someone else is refused, not repaired, as the daemon's secrets are. Nothing about a
delivery is kept: what was sent, failed or dropped is counted in memory only.

At most :data:`MOST` webhooks exist at once, so one misbehaving client cannot make the daemon
send each change a thousand times.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.base import cjson, files, paths
from roost.base.errors import SetupError, TargetGone, TooMany, UsageError
from roost.services.notify import destinations
from roost.services.notify.destinations import Destination
from roost.truth.roster.changes import SWARM_EVENTS
from roost.truth.roster.times import to_wire

FILENAME = "webhooks.json"
SCHEMA = "rosterd.webhooks.v1"
MOST = 64
"""Webhooks that may exist at once; registering one more is refused (429) until one is deleted."""
TOKEN_SHORTEST = 16
TOKEN_LONGEST = 512
TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")
"""A bearer token as RFC 6750 spells one (``b64token``): it goes into a header as it is."""


@dataclass(frozen=True)
class Webhook:
    """One registration. ``events`` empty means every kind of change, those added later too."""

    id: str
    destination: Destination
    events: tuple[str, ...]
    token: str
    created_at: float

    @property
    def url(self) -> str:
        return self.destination.url

    def wants(self, event: str) -> bool:
        return not self.events or event in self.events

    def public(self) -> dict[str, Any]:
        """What the API shows of it: everything but the token."""
        shown = {"id": self.id, "url": self.url, "events": list(self.events)}
        return {**shown, "created_at": to_wire(self.created_at)}

    def stored(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.url,
            "events": list(self.events),
            "token": self.token,
            "created_at": self.created_at,
        }


def new(destination: Destination, events: tuple[str, ...], token: str, now: float) -> Webhook:
    """A webhook with a fresh id."""
    return Webhook(secrets.token_hex(8), destination, events, token, now)


class Registrations:
    """The webhooks, read from ``path`` once and written back whole on every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._hooks: dict[str, Webhook] = {hook.id: hook for hook in _load(path)}

    @classmethod
    def beside(cls, directory: Path) -> Registrations:
        """The webhooks kept in ``directory``, the daemon's config directory."""
        return cls(directory / FILENAME)

    def all(self) -> list[Webhook]:
        """Every webhook, oldest first."""
        return list(self._hooks.values())

    def add(self, hook: Webhook) -> None:
        if len(self._hooks) >= MOST:
            raise TooMany(f"{MOST} webhooks are registered already; delete one first", limit=MOST)
        self._hooks[hook.id] = hook
        try:
            self._save()
        except BaseException:
            del self._hooks[hook.id]
            raise

    def remove(self, ident: str) -> Webhook:
        """Forget the webhook ``ident`` and return it; :class:`TargetGone` (404) when there is none."""
        hook = self._hooks.get(ident)
        if hook is None:
            raise TargetGone("no such webhook")
        del self._hooks[ident]
        try:
            self._save()
        except BaseException:
            self._hooks[ident] = hook
            raise
        return hook

    def _save(self) -> None:
        paths.private_mkdir(self.path.parent)
        doc = {"schema": SCHEMA, "webhooks": [hook.stored() for hook in self._hooks.values()]}
        files.replace(self.path, cjson.document(doc), durable=True)


def _load(path: Path) -> list[Webhook]:
    try:
        info = path.stat()
    except FileNotFoundError:
        return []
    except OSError as error:
        raise SetupError(f"cannot read {path}: {error}") from None
    problem = files.unsafe(path, info)
    if problem:
        raise SetupError(problem)
    try:
        doc = json.loads(path.read_text())
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"its schema is not {SCHEMA}")
        return [_webhook(entry) for entry in doc["webhooks"]]
    except (ValueError, KeyError, TypeError, AttributeError, UsageError) as error:
        why = error.message if isinstance(error, UsageError) else error
        raise SetupError(f"{path} is not a list of webhooks ({why}); fix or remove it") from None


def _webhook(entry: dict[str, Any]) -> Webhook:
    """One stored entry, held to the rules a registration was (a file edited by hand included)."""
    ident, url, events, token, created = (
        entry["id"],
        entry["url"],
        entry["events"],
        entry["token"],
        entry["created_at"],
    )
    if not isinstance(ident, str) or not re.fullmatch(r"[0-9a-f]{16}", ident):
        raise ValueError("an id is not 16 hex digits")
    if not isinstance(url, str) or len(url) > destinations.LONGEST:
        raise ValueError(f"webhook {ident}'s url is not text of at most {destinations.LONGEST} characters")
    if not isinstance(events, list) or not all(isinstance(e, str) and e in SWARM_EVENTS for e in events):
        raise ValueError(f"webhook {ident}'s events are not change kinds")
    if not isinstance(token, str) or not _token_ok(token):
        raise ValueError(f"webhook {ident}'s token is not a bearer token")
    if not isinstance(created, int | float) or isinstance(created, bool):
        raise ValueError(f"webhook {ident}'s created_at is not a time")
    return Webhook(ident, destinations.parse(url), tuple(events), token, float(created))


def _token_ok(token: str) -> bool:
    return TOKEN_SHORTEST <= len(token) <= TOKEN_LONGEST and TOKEN.fullmatch(token) is not None
