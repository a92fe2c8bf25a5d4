"""Reading an agent's hook event: the few fields roost uses, in the shape adapters send.

Claude Code's payload is the common shape; the other adapters (codex, opencode, copilot, pi)
translate their own events into it before calling ``rosterd-hook``. A harness that cannot
(its hook program is fixed) names its own field names in its manifest's ``[hook.fields]``
table, and ``translate`` renames them; a tool whose dialog says what it asks deeper in its
input than the fields below (Claude's AskUserQuestion) is found through ``[hook.summaries]``.
Per-harness knowledge stays data.

An event is read once, by :func:`read`, into what every part of a hook acts on: the pane's
badge (:mod:`roost.actions.hookstamp`), the claim (:mod:`roost.truth.detect.hookclaims`) and the
gate are each handed that one :class:`Heard`, so they cannot disagree about what the event was
or whether it counts. The command hook (``rosterd-hook``) and the daemon's HTTP hook route
(:mod:`roost.faces.api.hookroute`) read events here alike, so an event means the same whichever way
it arrived.
"""

from __future__ import annotations

from roost.agents import manifest
from roost.base.text import utf8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from roost.agents.model import Hook, Manifest

SUBAGENT_ACTIONS = ("blocked", "tool", "working")
"""What a subagent's event (one with an ``agent_id``) may do: show that a dialog is open, since
the person must answer it whichever agent asked, or that work goes on. It never starts, ends,
interrupts or fails the pane's turn and never publishes a reply: it was not addressed to
whoever waits on this pane, so a turn that delegated and then said nothing itself keeps no
reply. One rule for the badge and the claim alike; ``tool`` posts no claim for any agent, so
the daemon hears a subagent's dialogs and work, as the pane shows them."""

# Fields of a tool's input that say best what a permission dialog asks for, in order.
_SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "url", "pattern", "query", "description")
DIALOG_LIMIT = 200
"""Characters a dialog's reason keeps: the badge cuts every reason there, on one line
(``panestate.set_state``), and the claim posted to the daemon must say what the badge says."""


class Heard:
    """One event as the hook acts on it: the agent's manifest, the event's fields and the
    action the manifest maps it to. A plain class with slots, as :class:`HookEvent` is."""

    __slots__ = ("action", "agent", "event")

    def __init__(self, agent: Manifest, event: HookEvent, action: str) -> None:
        self.agent = agent
        self.event = event
        self.action = action


def read(harness: str, payload: dict) -> Heard | None:
    """The event in ``payload`` as ``harness``'s manifest reads it, or None when the hook does
    nothing with it: no manifest names ``harness``, the manifest ignores the event, or it is a
    subagent's and asks for more than :data:`SUBAGENT_ACTIONS`."""
    agent = manifest.load(harness)
    if agent is None:
        return None
    event = from_hook(payload, agent.hook)
    action = agent.action(event.name, event.notification, event.start)
    if action == "ignore" or (event.agent_id and action not in SUBAGENT_ACTIONS):
        return None
    return Heard(agent, event, action)


def from_hook(payload: dict, hook: Hook) -> HookEvent:
    """The event in ``payload``, read through the agent manifest's ``[hook]`` table."""
    return HookEvent.parse(translate(payload, hook.fields), hook.summaries)


def _dig(value: object, path: list) -> object:
    """What ``path`` (keys of objects, positions in lists) names inside ``value``, or None."""
    for step in path:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and type(step) is int and -len(value) <= step < len(value):
            value = value[step]
        else:
            return None
    return value


def _summary(tool: object, tool_input: object, summaries: dict[str, list]) -> str | None:
    """What a tool's input says it will do: where its manifest says to look, else a known field."""
    path = summaries.get(tool) if isinstance(tool, str) else None
    if isinstance(path, list):
        found = _dig(tool_input, path)
        if isinstance(found, str) and found.strip():
            return found
    if isinstance(tool_input, str):
        return tool_input
    if not isinstance(tool_input, dict):
        return None
    return next(
        (
            str(tool_input[k])
            for k in _SUMMARY_KEYS
            if isinstance(tool_input.get(k), (str, list)) and tool_input[k]
        ),
        None,
    )


def translate(payload: dict, fields: dict[str, str]) -> dict:
    """``payload`` with each host field renamed to its Claude name; Claude's own keys win."""
    if not fields:
        return payload
    renamed = dict(payload)
    for host, claude in fields.items():
        if host in payload and claude not in payload:
            renamed[claude] = payload[host]
    return renamed


class HookEvent:
    """One event's fields, an immutable value.

    Written out rather than a frozen dataclass: importing ``dataclasses`` would cost the hook
    several milliseconds on every event.
    """

    name: str
    session_id: str | None
    cwd: str | None
    transcript: str | None
    notification: str | None
    start: str | None
    message: str | None
    tool: str | None
    tool_summary: str | None
    reply: str | None
    error: str | None
    agent_id: str | None

    def __init__(
        self,
        name: str,
        session_id: str | None,
        cwd: str | None,
        transcript: str | None,
        notification: str | None,
        start: str | None,
        message: str | None,
        tool: str | None,
        tool_summary: str | None,
        reply: str | None,
        error: str | None,
        agent_id: str | None,
    ) -> None:
        values = {
            "name": name,
            "session_id": session_id,
            "cwd": cwd,
            "transcript": transcript,
            "notification": notification,
            "start": start,
            "message": message,
            "tool": tool,
            "tool_summary": tool_summary,
            "reply": reply,
            "error": error,
            "agent_id": agent_id,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(vars(self).values()))

    def __repr__(self) -> str:
        return f"HookEvent({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    @classmethod
    def parse(cls, payload: dict, summaries: dict[str, list] | None = None) -> HookEvent:
        """``payload``'s fields; ``summaries`` maps a tool to where its input says what it asks."""

        def text(key: str) -> str | None:
            value = payload.get(key)
            return value if isinstance(value, str) and value else None

        def exact(key: str) -> str | None:
            """An identity, which is kept as it is or not at all: never one that was not UTF-8."""
            value = text(key)
            return value if value is not None and utf8(value) else None

        summary = _summary(payload.get("tool_name"), payload.get("tool_input"), summaries or {})
        # A failed turn's last assistant message is the error the agent showed (Claude Code
        # sends "error": "unknown" beside "API Error: 400 …"), so it says more than the code.
        reply = payload.get("last_assistant_message")
        shown = reply if isinstance(reply, str) and reply else None
        error = text("error_details") or shown or text("error") or text("reason")
        return cls(
            name=text("hook_event_name") or "",
            session_id=exact("session_id"),
            cwd=exact("cwd"),
            transcript=exact("transcript_path"),
            notification=text("notification_type"),
            start=text("source"),
            message=text("message"),
            tool=text("tool_name"),
            tool_summary=summary,
            reply=payload.get("last_assistant_message")
            if isinstance(payload.get("last_assistant_message"), str)
            else None,
            error=error,
            agent_id=text("agent_id"),
        )

    @property
    def dialog(self) -> str:
        """What a dialog asks for, as the badge's reason: ``Bash: npm test``,
        ``AskUserQuestion: Which colour…?``; on one line, at most :data:`DIALOG_LIMIT` long."""
        if self.tool and self.tool_summary:
            asks = f"{self.tool}: {self.tool_summary}"
        else:
            asks = self.tool or self.message or "permission requested"
        return " ".join(asks.split())[:DIALOG_LIMIT]
