"""Permission requests held open by a harness's gate, waiting for an answer from anywhere.

A gate is a hook that a harness runs before it asks the person (Claude Code's
``PermissionRequest``) and that may decide for them. ``rosterd-hook --gate`` posts the request
to the daemon and waits; the daemon publishes it as the session's pending request and holds it
here until one of these happens, whichever is first:

- someone answers it (the API, the CLI, MCP, the web app): the answer becomes the hook's
  decision, and the harness runs or refuses the tool;
- the person answers the dialog in the terminal: the harness ends the hook, its request to the
  daemon hangs up, and the hold is dropped;
- the session moves on without it (the roster shows another request, or no wait at all);
- ``gate_timeout_s`` passes: the hook exits without deciding and the dialog, drawn all along,
  is the person's to answer.

Only the last three are silent: a gate never decides on its own, so a Roost that is down or
slow leaves the agent exactly as it would be without one. One hold per session: a new request
of the same session withdraws the one before it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Decision:
    """What the hook is told: one of :data:`roost.truth.roster.pending.ANSWERS`, and a reason for a
    rejection."""

    answer: str
    reason: str | None = None


@dataclass(eq=False)
class Hold:
    """One request a gate holds open: the session, the request's id, whether "always" is on
    offer, and the future its decision arrives on."""

    key: str
    request_id: str
    always: bool
    decided: asyncio.Future[Decision | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def settle(self, decision: Decision | None) -> bool:
        """Give the hook its decision (None: none, fall back to the dialog); False when it has one."""
        if self.decided.done():
            return False
        self.decided.set_result(decision)
        return True


class Gates:
    """Every request held open on this node, at most one per session."""

    def __init__(self) -> None:
        self._held: dict[str, Hold] = {}

    def hold(self, key: str, request_id: str, *, always: bool) -> Hold:
        """Hold a new request of ``key``; one it held before is withdrawn."""
        earlier = self._held.get(key)
        if earlier is not None:
            earlier.settle(None)
        made = Hold(key, request_id, always)
        self._held[key] = made
        return made

    def holding(self, key: str) -> Hold | None:
        """The request ``key``'s gate holds open now, if any."""
        found = self._held.get(key)
        return found if found is not None and not found.decided.done() else None

    def release(self, hold: Hold) -> None:
        """The hold is over (decided, hung up, withdrawn, timed out): forget it."""
        hold.settle(None)
        if self._held.get(hold.key) is hold:
            del self._held[hold.key]

    def __len__(self) -> int:
        return sum(1 for hold in self._held.values() if not hold.decided.done())
