"""What the API is built around, passed in explicitly: no route reaches for a global."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from roost.actions.sessions import Door
from roost.faces.api.logins import Logins
from roost.truth.roster.live import Live
from roost.truth.roster.times import Clock

if TYPE_CHECKING:
    from roost.agents.mcpconfig import StdioServer
    from roost.remote.mesh.node import Mesh
    from roost.services.ledger.journal import Journal
    from roost.services.ledger.usage import Usage
    from roost.services.notify.notifier import Notifier
    from roost.services.notify.webhooks import Webhooks

KEEPALIVE = 15.0
"""Seconds between SSE comments on a quiet stream, so a dead client is noticed and dropped."""


@dataclass(frozen=True)
class Context:
    """The door every route acts through (the live roster, the clock, and what acts on
    sessions: :mod:`roost.actions.sessions`), the loopback token, and what ``/status`` reports
    about the daemon (``facts``: its listeners, how long the rebuild took)."""

    door: Door
    token: str
    started_at: float
    max_streams: int = 64
    keepalive: float = KEEPALIVE
    facts: Mapping[str, Any] = field(default_factory=dict)
    logins: Logins = field(default_factory=Logins)
    """The web face's login tokens and session cookies (see :mod:`roost.faces.api.logins`)."""
    push: Notifier | None = None
    """Web Push notifications (see :mod:`roost.services.notify.notifier`); None where they are not run."""
    webhooks: Webhooks | None = None
    """Webhook deliveries (see :mod:`roost.services.notify.webhooks`); None where they are not run."""
    journal: Journal | None = None
    """Session starts, ends, suspends, resumes and permission answers (see
    :mod:`roost.services.ledger.journal`): a route that answers a permission calls ``journal.answered``.
    None where no ledger is kept."""
    usage: Usage | None = None
    """Token usage and cost per turn (see :mod:`roost.services.ledger.usage`); None where none is kept."""
    mcp: StdioServer | None = None
    """rosterd's MCP server as a harness starts it: the launcher tells each CLI of it."""
    swarm: Mesh | None = None
    """This node on the swarm (see :mod:`roost.remote.mesh.node`), for the operator's ``/swarm/*``
    routes; None where no swarm is run."""

    @property
    def live(self) -> Live:
        return self.door.live

    @property
    def clock(self) -> Clock:
        return self.door.clock


def of(request: Request) -> Context:
    context: Context = request.app.state.context
    return context
