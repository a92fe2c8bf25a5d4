"""What a headless session's ACP traffic says about it, as the claims the runner sends.

Pure and clock-free: :class:`Traffic` is fed the session's updates in wire form (camelCase
JSON, as the adapter wrote them and the holder's replay buffer keeps them) and answers each
with the :class:`Said` it amounts to, or None when nothing a client sees changed.

- a prompt going out, a message or thought chunk, a tool call or its update: ``active``;
- ``session/request_permission``: ``needs_attention`` with ``pending`` (the tool, a one-line
  summary, the options the adapter offered, under the adapter's own ids);
- the end of the turn (the holder's ``_roost/turn_ended``): the internal ``done`` word (rosterd's
  ``idle``, a pane badge's ✅) with the stop reason as the event, or the internal ``error`` word
  with the error's message, at the time the holder stamped it (the same live and in a replay);
- ``plan`` replaces the plan, ``current_mode_update`` sets mode, a ``config_option_update``
  mode and model (its options of those categories), ``usage_update`` and the prompt's answer
  fill usage (``tokens`` is the last turn's, absent when it reported none),
  ``session_info_update`` a title.

The final assistant message of a turn becomes the recap when recap is on: the message chunks
after the turn's last tool call that share its last ``messageId`` (an adapter's own notes,
Codex's warnings, come as chunks of no message or of another one). Nothing else of the
transcript is kept. A chunk of a running turn is claimed
once per kind in a row, not once per chunk: a long reply is one ``active`` claim, not a
thousand revisions of the record.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from roost.base.text import control
from roost.pane.state import words

DEPTH = 12
"""Levels of an adapter's object (a plan entry, a tool's options) kept; deeper ones are dropped."""
ITEMS = 256
"""Entries of an adapter's list (a plan) kept."""
SUMMARY_LIMIT = 200
"""Characters of a pending request's one-line summary."""
OPTION_LIMITS = {"mode": 64, "model": 200}
"""The config options a record shows, and the characters the claim schema lets each hold."""
RECAP_LIMIT = 65_536
"""Characters of a recap kept; the claim schema's limit for the field."""

ACTIVE_UPDATES = {
    "agent_message_chunk": "message",
    "agent_thought_chunk": "thinking",
    "tool_call": "tool_call",
    "tool_call_update": "tool_call_update",
}
"""Updates that mean the turn is running, and the activity event each one is."""


@dataclass(frozen=True)
class Said:
    """One claim's worth: an activity word (None: fields only), its event, and record fields."""

    activity: str | None = None
    event: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    at: float | None = None
    """When it happened (epoch seconds): the holder's stamp, or the time the runner kept for a
    word of its own; None: as it is claimed."""


@dataclass
class Traffic:
    """One session's state as its ACP stream has told it so far."""

    recap: bool = True
    running: bool = False
    turns: int = 0
    """Turns started: the number of the one running, or of the last one."""
    ended: int = 0
    """The number of the last turn whose end was heard: the recap the record holds is its."""
    pending: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    _chunks: list[str] = field(default_factory=list)
    _message: object = None
    _last_event: str | None = None

    def turn_started(self) -> Said:
        self.running = True
        self.turns += 1
        self._chunks, self._message = [], None
        self._last_event = "prompt"
        return Said(words.ACTIVE, "prompt")

    def update(self, update: dict[str, Any]) -> Said | None:
        """One ``session/update``'s ``update`` object."""
        kind = update.get("sessionUpdate")
        if kind in ACTIVE_UPDATES:
            if kind == "agent_message_chunk" and self.running:
                self._message_chunk(update)
            elif kind == "tool_call":
                self._chunks, self._message = [], None
            event = ACTIVE_UPDATES[kind]
            if not self.running or self.pending is not None or event == self._last_event:
                return None
            self._last_event = event
            return Said(words.ACTIVE, event)
        if kind == "plan":
            entries = update.get("entries")
            return Said(fields={"plan": {"entries": clean(entries) if isinstance(entries, list) else []}})
        if kind == "current_mode_update" and isinstance(update.get("currentModeId"), str):
            return Said(fields={"mode": _line(update["currentModeId"], 64)})
        if kind == "config_option_update":
            options = update.get("configOptions")
            chosen = {name: value for name in OPTION_LIMITS if (value := current_option(options, name))}
            return Said(fields=chosen) if chosen else None
        if kind == "usage_update":
            context = {k: clean(update[k]) for k in ("used", "size", "cost") if k in update}
            if not context:
                return None
            self.usage.update(context)
            return Said(fields={"usage": dict(self.usage)})
        if kind == "session_info_update" and isinstance(update.get("title"), str) and update["title"]:
            return Said(fields={"name": _line(update["title"], 200)})
        return None

    def _message_chunk(self, update: dict[str, Any]) -> None:
        message = update.get("messageId")
        if message is not None and message != self._message:
            self._chunks, self._message = [], message
        self._chunks.append(_text(update.get("content")))

    def asked(self, tool_call: dict[str, Any], options: list[dict[str, Any]]) -> Said:
        """``session/request_permission``: the session waits on a person (or on the policy)."""
        self.pending = {
            "kind": "permission",
            "answerable": True,
            "tool": _tool(tool_call),
            "summary": _summary(tool_call),
            "tool_call_id": _line(tool_call.get("toolCallId"), 200),
            "options": [
                {
                    "id": _line(o.get("optionId"), 200),
                    "name": _line(o.get("name"), 200),
                    "kind": _line(o.get("kind"), 64),
                }
                for o in options[:ITEMS]
            ],
        }
        self._last_event = "permission"
        return Said(words.NEEDS_ATTENTION, "permission", {"pending": self.pending})

    def answered(self) -> Said | None:
        """The pending request was answered (or withdrawn): the turn runs on."""
        if self.pending is None:
            return None
        self.pending = None
        if not self.running:
            return None
        self._last_event = "permission_answered"
        return Said(words.ACTIVE, "permission_answered")

    def turn_ended(self, params: dict[str, Any]) -> Said:
        """The holder's ``_roost/turn_ended``: the prompt's answer, whoever asked it."""
        self.running = False
        self.pending = None
        self._last_event = None
        self.ended = self.turns
        fields: dict[str, Any] = {}
        usage = params.get("usage")
        if isinstance(usage, dict) and usage:
            self.usage["tokens"] = clean(usage)
            fields["usage"] = dict(self.usage)
        elif self.usage.pop("tokens", None) is not None:  # the tokens shown are always this turn's
            fields["usage"] = dict(self.usage) or None
        if self.recap:
            fields["recap"] = clean("".join(self._chunks)[:RECAP_LIMIT]) or None
        self._chunks = []
        at = stamp(params.get("at"))
        error = params.get("error")
        if isinstance(error, dict):
            reason = _line(error.get("message"), 1000) or "the adapter failed the turn"
            return Said(words.ERROR, "prompt_failed", {**fields, "error_reason": reason}, at)
        stop = params.get("stopReason")
        return Said(words.DONE, _line(stop, 64) or "end_turn", fields, at)


def stamp(value: object) -> float | None:
    """A holder's time (epoch seconds) when it is one, else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _text(content: object) -> str:
    if isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _tool(tool_call: dict[str, Any]) -> str | None:
    """The tool's name as the adapter tells it: Claude's adapter in ``_meta``, else the kind."""
    meta = tool_call.get("_meta")
    if isinstance(meta, dict):
        for value in meta.values():
            if isinstance(value, dict) and isinstance(value.get("toolName"), str):
                return _line(value["toolName"], 64)
    return _line(tool_call.get("kind"), 64)


def _summary(tool_call: dict[str, Any]) -> str:
    """One line a person can decide on: the title, else the command the raw input holds."""
    title = tool_call.get("title")
    if isinstance(title, str) and title.strip():
        return _line(title, SUMMARY_LIMIT)
    raw = tool_call.get("rawInput")
    if isinstance(raw, dict):
        for name in ("command", "cmd", "path", "file_path"):
            value = raw.get(name)
            if isinstance(value, str | list) and value:
                text = value if isinstance(value, str) else " ".join(map(str, value))
                return _line(text, SUMMARY_LIMIT)
    return "a tool call"


def current_option(options: object, name: str) -> str | None:
    """The current value of the adapter's config option of category (or id) ``name``: ``mode``,
    ``model``; None when it offers none."""
    if not isinstance(options, list):
        return None
    for option in options:
        if isinstance(option, dict) and (option.get("category") == name or option.get("id") == name):
            value = option.get("currentValue")
            if isinstance(value, str) and value:
                return _line(value, OPTION_LIMITS[name])
    return None


def clean(value: Any, depth: int = 0) -> Any:
    """An adapter's value made writable: text valid Unicode, numbers finite, depth and length
    bounded. The roster refuses a claim it could not publish, and one bad plan entry must not
    cost the session its whole turn's state."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, bool | int) or value is None:
        return value
    if depth >= DEPTH:
        return None
    if isinstance(value, dict):
        return {clean(str(k)): clean(v, depth + 1) for k, v in list(value.items())[:ITEMS]}
    if isinstance(value, list | tuple):
        return [clean(v, depth + 1) for v in value[:ITEMS]]
    return None


def _line(value: object, limit: int) -> str | None:
    """An adapter's word or title as one line: control characters become spaces."""
    if not isinstance(value, str):
        return None
    text = "".join(" " if control(char) else char for char in clean(value)[:limit]).strip()
    return text or None
