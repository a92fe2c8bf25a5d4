"""``POST /swarm/act``: an act another node forwards to this one, the owner of its session.

The route sits behind the signed door, so its sender is a current member
(``request.state.peer``); everything else in the request is that member's word and checked
here before anything acts on it: the document's shape, field by field, and that the session it
names is this node's. A session key with another node's prefix is refused (``not_owner``, 409):
an owner acts on its own sessions and never forwards an act a second time, so a confused or
hostile member cannot make two nodes bounce a prompt between them.

The act is then done by the face it was asked in (``faces``, handed in by the daemon: the API
runs its own route for the verb, the MCP server its own tool), with this node's rules, fences
and validation exactly as for a caller of its own; the answer goes back as that face gave it.
Every act that named one of this node's sessions (or started one) is journalled with who
asked, from where, and through which node (``acted``); one that only reads is not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from roost.actions.remote import FACES, NOT_OWNER, READS, Act, Dispatch, Reply, Through, owner_of
from roost.actions.sessions import resolve
from roost.base.errors import Conflict, RoostError, Unavailable, UsageError
from roost.remote.mesh import listener
from roost.remote.mesh.forwarding import ACT, WAIT_LIMIT_MS
from roost.remote.swarm import canonical, fields
from roost.truth.roster import Roster

log = logging.getLogger("rosterd.swarm")

Acted = Callable[[str, Act, Through, int], None]
"""Told of every act done for another node: the session's key, the act, who, the status."""

MAX_SESSION = 1024
MAX_VERB = 32
MAX_BY = 120
VIA = ("api", "cli", "mcp", "web")
VERB_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz._")


def read(document: object) -> Act:
    """The act a member sent, checked field by field; UsageError (400) naming the first field
    that is not what roost sends."""
    if not isinstance(document, Mapping):
        raise UsageError("an act is a JSON object", field="act")
    wanted = {"session", "face", "verb", "body", "by", "via", "wait_ms"}
    if set(document) != wanted:
        raise UsageError(f"an act holds exactly {', '.join(sorted(wanted))}", field="act")
    session = document["session"]
    if session is not None and fields.text(session, MAX_SESSION) is None:
        raise UsageError(f"session is null or one line of at most {MAX_SESSION} characters", field="session")
    face, verb, via = document["face"], document["verb"], document["via"]
    if face not in FACES:
        raise UsageError(f"face is one of {', '.join(FACES)}", field="face")
    if not isinstance(verb, str) or not 0 < len(verb) <= MAX_VERB or not set(verb) <= VERB_CHARACTERS:
        raise UsageError("verb is a word of a-z, '.' and '_'", field="verb")
    body = document["body"]
    if not isinstance(body, str) or len(body) > canonical.MAX_DOCUMENT:
        raise UsageError("body is the JSON text the caller sent", field="body")
    by = fields.text(document["by"], MAX_BY)
    if by is None:
        raise UsageError(f"by is one line of at most {MAX_BY} characters", field="by")
    if via not in VIA:
        raise UsageError(f"via is one of {', '.join(VIA)}", field="via")
    wait_ms = fields.integer(document["wait_ms"], 0, WAIT_LIMIT_MS)
    if wait_ms is None:
        raise UsageError("wait_ms is an integer of milliseconds", field="wait_ms")
    return Act(session, face, verb, body, by, via, wait_ms / 1000)


class Acting:
    """The owner's side of a proxied act: this node's roster, the faces that act, and the
    journal's ear. The daemon makes it before the faces exist (the swarm listener's routes are
    fixed when the mesh is made, and the faces are made around a door that needs the mesh),
    and fills ``faces`` once they do; an act that comes before is refused as a busy node's."""

    def __init__(self, roster: Roster, acted: Acted | None = None) -> None:
        self.roster = roster
        self.faces: dict[str, Dispatch] = {}
        self.acted = acted

    def route(self) -> Route:
        return listener.route(ACT, self.act)

    async def act(self, request: Request) -> Response:
        sender = listener.peer(request)
        try:
            document = canonical.parse(await request.body())
        except ValueError:
            raise UsageError("the body is not JSON roost sends", field="act") from None
        act = read(document)
        owner = owner_of(act.session) if act.session is not None else None
        if owner is not None and owner != self.roster.node_id:
            raise Conflict(
                f"{act.session} is not a session of this node: an owner acts on its own sessions, "
                "and an act is never forwarded twice",
                code=NOT_OWNER,
            )
        through = Through(sender.node_id, sender.name, act.by, act.via)
        face = self.faces.get(act.face)
        if face is None:
            raise Unavailable("this node is still starting", code="starting")
        reply = await face(act, through, request)
        key = self._key(act, reply)
        if key is not None and self.acted is not None and act.verb not in READS:
            self.acted(key, act, through, reply.status)
        log.info("act %s %s from %s: %d", act.face, act.verb, sender.name, reply.status)
        return Response(reply.body, reply.status, media_type="application/json")

    def _key(self, act: Act, reply: Reply) -> str | None:
        """The key of the session the act was about: the one it named, or the one it started."""
        if act.session is not None:
            try:
                return resolve(self.roster, act.session)
            except RoostError:
                return None
        try:
            record = json.loads(reply.body).get("record")
        except (ValueError, AttributeError):
            return None
        key = record.get("session_key") if isinstance(record, dict) else None
        return key if isinstance(key, str) else None
