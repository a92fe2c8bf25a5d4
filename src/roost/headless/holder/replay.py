"""The holder's memory: what a daemon that connects later needs of the traffic it did not see.

The holder looks at each line it relays only to keep:

- the last ``keep`` notifications from the adapter (a daemon that restarted mid-turn replays
  them to rebuild the session's state), each with the time it passed (the replay's ``times``),
  so a rebuilt record says when the session last did something, not when the daemon came back;
- the adapter's requests nobody has answered yet (a permission asked while no daemon was
  connected is still waiting for its answer), each with when it came (``pending_times``);
- the session id, from the answer to ``session/new`` (or the id ``session/load`` names);
- where each turn stands. A turn's end is the answer to its ``session/prompt``, and that
  answer goes to the connection that asked: a daemon that restarted mid-turn would never see
  it. So a ``_roost/turn_started`` is noted in the buffer when a prompt passes, and a
  ``_roost/turn_ended`` with the stop reason, the usage or the error when its answer does, to
  be sent to whichever daemon is connected then. Both carry ``at``, the time they were noted,
  so a turn's end reads the same time live and after a restart.

Pure bookkeeping over parsed messages: which connection gets a line is the relay's business.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any


class Replay:
    """What the holder keeps of the session's traffic; ``told`` is called whenever it learns
    the session id (the state file says it)."""

    def __init__(self, keep: int, told: Callable[[], None]) -> None:
        self.notifications: deque[tuple[float, Any]] = deque(maxlen=keep)
        """The last notifications, each with when it passed (epoch seconds)."""
        self.pending: dict[str, Any] = {}
        self._pending_at: dict[str, float] = {}
        """When each of ``pending`` came from the adapter."""
        self.session_id: str | None = None
        self.turns = 0
        self._told = told
        self._asked: dict[str, str] = {}  # client request id -> method, for session/new and load
        self._prompts: dict[str, int] = {}  # client request id of a running prompt -> its turn

    @property
    def turn_running(self) -> bool:
        return bool(self._prompts)

    def from_adapter(self, message: dict[str, Any]) -> bytes | None:
        """Remember what a later daemon needs of one of the adapter's messages; the holder's own
        line to send after it (a turn's end), if any."""
        if "method" in message:
            if "id" in message:
                self.pending[key(message["id"])] = message
                self._pending_at[key(message["id"])] = time.time()
            else:
                self.notifications.append((time.time(), message))
            return None
        if "id" not in message:
            return None
        turn = self._prompts.pop(key(message["id"]), None)
        ended = self._turn_ended(turn, message) if turn is not None else None
        method = self._asked.pop(key(message["id"]), None)
        result = message.get("result")
        if method == "session/new" and isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            self.session_id = result["sessionId"]
            self._told()
        return ended

    def from_client(self, message: dict[str, Any]) -> None:
        """Remember what a later daemon needs of one of the daemon's messages to the adapter."""
        method = message.get("method")
        if "id" in message and method == "session/prompt":
            self.turns += 1
            self._prompts[key(message["id"])] = self.turns
            self._note("_roost/turn_started", {"turn": self.turns})
        elif "id" in message and method in ("session/new", "session/load"):
            self._asked[key(message["id"])] = method
            params = message.get("params")
            if (
                method == "session/load"
                and isinstance(params, dict)
                and isinstance(params.get("sessionId"), str)
            ):
                self.session_id = params["sessionId"]
                self._told()
        elif method is None and "id" in message:
            self.pending.pop(key(message["id"]), None)  # the answer to one of the adapter's requests
            self._pending_at.pop(key(message["id"]), None)

    def document(self, state: dict[str, Any]) -> dict[str, Any]:
        """The answer to ``_roost/replay``, with the holder's ``state``."""
        return {
            "notifications": [message for _, message in self.notifications],
            "times": [at for at, _ in self.notifications],
            "pending": list(self.pending.values()),
            "pending_times": [self._pending_at[request] for request in self.pending],
            "state": state,
        }

    def _turn_ended(self, turn: int, answer: dict[str, Any]) -> bytes:
        result = answer.get("result")
        result = result if isinstance(result, dict) else {}
        params = {
            "turn": turn,
            "stopReason": result.get("stopReason"),
            "usage": result.get("usage"),
            "error": answer.get("error"),
        }
        return self._note("_roost/turn_ended", params)

    def _note(self, method: str, params: dict[str, Any]) -> bytes:
        """A notification of the holder's own, stamped ``at`` and kept for replay like the
        adapter's."""
        at = time.time()
        message = {"jsonrpc": "2.0", "method": method, "params": {**params, "at": at}}
        self.notifications.append((at, message))
        return json.dumps(message).encode() + b"\n"


def key(request_id: object) -> str:
    """A JSON-RPC id as a dict key: ``1`` and ``"1"`` are different ids."""
    return json.dumps(request_id)
