"""What the API is built around, passed in explicitly: no route reaches for a global."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from roost.api.logins import Logins
from roost.roster.live import Live
from roost.roster.times import Clock
from roost.tmux.server import Server
from roost.tmux.topology import Topology

if TYPE_CHECKING:
    from roost.actions.permission import Permissions
    from roost.agents.mcpconfig import StdioServer
    from roost.ledger.journal import Journal
    from roost.ledger.usage import Usage
    from roost.notify.service import Notifier
    from roost.notify.webhooks import Webhooks
    from roost.runner.runner import Runner
    from roost.tmux.tap import Taps

KEEPALIVE = 15.0
"""Seconds between SSE comments on a quiet stream, so a dead client is noticed and dropped."""


@dataclass(frozen=True)
class Services:
    """The live roster, the loopback token, the clock, and what ``/status`` reports about the
    daemon (``facts``: its listeners, how long the rebuild took). ``tmux`` is the roost tmux
    server the daemon scans: its panes are the interactive sessions that input is written to."""

    live: Live
    token: str
    clock: Clock
    started_at: float
    max_streams: int = 64
    keepalive: float = KEEPALIVE
    facts: Mapping[str, Any] = field(default_factory=dict)
    tmux: Server | None = None
    logins: Logins = field(default_factory=Logins)
    """The web face's login tokens and session cookies (see :mod:`roost.api.logins`)."""
    push: Notifier | None = None
    """Web Push notifications (see :mod:`roost.notify.service`); None where they are not run."""
    taps: Taps | None = None
    """The panes' output pipes shared by browser terminals (see :mod:`roost.tmux.tap`); None:
    each terminal reads ``%output`` from its own control client."""
    topology: Topology = field(default_factory=Topology)
    """Bumped when tmux's panes, windows or sessions change; ``/changes?terminals=1`` follows it."""
    runner: Runner | None = None
    """Headless sessions (see :mod:`roost.runner.runner`); None where none are run."""
    permissions: Permissions | None = None
    """Answers pending requests of both lanes, and the gates holding pane requests open
    (see :mod:`roost.actions.permission`); None where nothing may be answered."""
    webhooks: Webhooks | None = None
    """Webhook deliveries (see :mod:`roost.notify.webhooks`); None where they are not run."""
    journal: Journal | None = None
    """Session starts, ends, suspends, resumes and permission answers (see
    :mod:`roost.ledger.journal`): a route that answers a permission calls ``journal.answered``.
    None where no ledger is kept."""
    usage: Usage | None = None
    """Token usage and cost per turn (see :mod:`roost.ledger.usage`); None where none is kept."""
    mcp: StdioServer | None = None
    """rosterd's MCP server as a harness starts it: the launcher tells each CLI of it."""


def of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services
