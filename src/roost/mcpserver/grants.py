"""What an agent may grant over MCP: never more than a person gave it.

A person speaks through the CLIs, the API and the web app; MCP is an agent's face. So over MCP
a session starts others under its own permission policy or a stricter one, and a caller that
no person gave a policy (an agent in a terminal pane, a process in no session, a token holder
on loopback) is held to the strictest. ``allow_always`` answers every later request of its
kind on the person's behalf: it is a person's answer, refused over MCP unless ``[mcp]
allow_always`` in ``rosterd.toml`` turns it on. ``docs/contracts.md`` ("Who may give what") is
the table of it.
"""

from __future__ import annotations

from roost.actions.door import Door
from roost.errors import Conflict
from roost.mcpserver.caller import Caller

STRICTEST_FIRST = ("attention", "auto")
"""The permission policies, strictest first: ``attention`` leaves every request to a person,
``auto`` allows each once on the person's behalf."""
POLICY_TOO_LOOSE = "policy_too_loose"
ALLOW_ALWAYS_OFF = "allow_always_off"


def granted(door: Door, caller: Caller) -> str:
    """The policy the caller itself runs under: a headless session's own, which a person gave
    it (the runner's launcher claim, which no lower source overwrites); anyone else's is the
    strictest."""
    record = caller.record(door.live.roster)
    if record is None or not door.is_headless(record.session_key):
        return STRICTEST_FIRST[0]
    policy = record.permission_policy
    return policy if policy in STRICTEST_FIRST else STRICTEST_FIRST[0]


def child_policy(wanted: str | None, own: str) -> str:
    """The policy a session the caller starts runs under: the caller's ``own`` unless the call
    names a stricter one. A looser one is refused: only a person gives more than it has."""
    policy = wanted or own
    if STRICTEST_FIRST.index(policy) > STRICTEST_FIRST.index(own):
        raise Conflict(
            f"policy {policy} is looser than the caller's own ({own}); only a person may start "
            "a session under a looser policy, with rosterd start, the API or the web app",
            code=POLICY_TOO_LOOSE,
        )
    return policy


def stricter(one: str | None, other: str) -> str:
    """The stricter of two policies (``one`` None: ``other``): what a fork of a session with
    policy ``one`` runs under when a caller with ``other`` asks for it, so it gets no more than
    either had."""
    if one not in STRICTEST_FIRST:
        return other
    return min(one, other, key=STRICTEST_FIRST.index)


def check_answer(*, allow: bool, always: bool, always_allowed: bool) -> None:
    """Refuse an ``allow_always`` unless the config allows it to MCP; allow once and deny pass."""
    if allow and always and not always_allowed:
        raise Conflict(
            "allow_always is a person's answer and is off for MCP; allow once, or deny "
            "([mcp] allow_always in rosterd.toml turns it on)",
            code=ALLOW_ALWAYS_OFF,
        )
