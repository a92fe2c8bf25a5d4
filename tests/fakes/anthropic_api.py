"""A fake Anthropic Messages API for the real Claude Code CLI: ``POST /v1/messages``, streamed.

Claude Code merges consecutive user messages and adds its own ``<system-reminder>`` blocks,
so the model reads only the newest block of the last user message that is not one of those:
a text is the prompt; a ``tool_result`` answers a tool call, whose final text is streamed.
Requests that are not the conversation (Claude's side calls, e.g. for a title) carry no
``tools`` and get a short fixed answer that is not in ``streamed``. A prompt holding ``RECALL``
is answered with the prompts typed before it (:func:`tests.fakes.model_api.recalled`). Usage is
reported as the API reports it: the input counts and one output token in ``message_start``,
every count of the whole message in ``message_delta``.
"""

from __future__ import annotations

import itertools
import json
import time
from http.server import BaseHTTPRequestHandler

from tests.fakes.model_api import (
    RECALL,
    SIDE_ANSWER,
    Failure,
    ModelAPI,
    Reply,
    Request,
    ToolCall,
    recalled,
    send_event,
    send_json,
    start_stream,
)

_ids = itertools.count(1)


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _said_by_claude(block: dict) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).lstrip().startswith("<system-reminder>")


def typed(body: dict) -> list[str]:
    """Every text the person typed in the conversation, oldest first (not Claude's reminders)."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return [
        block["text"]
        for message in users
        for block in _blocks(message)
        if block.get("type") == "text" and block.get("text") and not _said_by_claude(block)
    ]


def newest(body: dict) -> tuple[str, str]:
    """What the model answers: ``("text", prompt)`` or ``("tool_result", tool_use_id)``.

    The newest block of the last user message decides, so a prompt typed after a declined
    tool call (merged into the message that carries the refusal) is answered as a prompt.
    """
    messages = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    for block in reversed(_blocks(messages[-1]) if messages else []):
        if block.get("type") == "tool_result":
            return "tool_result", str(block.get("tool_use_id"))
        if block.get("type") == "text" and block.get("text") and not _said_by_claude(block):
            return "text", block["text"]
    return "text", ""


class AnthropicAPI(ModelAPI):
    """The Messages API, enough of it for Claude Code 2.1.x to hold a conversation."""

    def __post_init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        super().__post_init__()

    def route(self, handler: BaseHTTPRequestHandler, request: Request) -> None:
        path = request.path.split("?")[0]
        if request.method == "POST" and path == "/v1/messages":
            self._messages(handler, request.body)
        elif request.method == "POST" and path == "/v1/messages/count_tokens":
            send_json(handler, 200, {"input_tokens": 100})
        elif path == "/api/hello":
            send_json(handler, 200, {})  # Claude's connectivity check at startup
        else:
            self.unknown.append(f"{request.method} {request.path}")
            send_json(handler, 404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

    def _messages(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        if not body.get("tools"):
            self._stream(handler, body, [{"type": "text", "text": SIDE_ANSWER}], "end_turn")
            return
        kind, value = newest(body)
        call = self.calls.get(value) if kind == "tool_result" else None
        step = call.after() if call else self.script(value if kind == "text" else "")
        if kind == "text" and RECALL in value:
            step = Reply(recalled(typed(body)[:-1]))
        if isinstance(step, Failure):
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": step.message}}
            send_json(handler, step.status, error)
        elif isinstance(step, ToolCall):
            tool_id = f"toolu_fake{next(_ids):04d}"
            self.calls[tool_id] = step
            block = {
                "type": "tool_use",
                "id": tool_id,
                "name": step.tool or "Bash",
                "input": step.input
                or {"command": step.command, "description": "Run the command the test asked for"},
            }
            step.wait()
            self._stream(handler, body, [block], "tool_use")
        else:
            self.said(step.text)
            self._stream(handler, body, [{"type": "text", "text": step.text}], "end_turn", step.delay)

    def _stream(
        self, handler: BaseHTTPRequestHandler, body: dict, blocks: list[dict], stop: str, delay: float = 0.0
    ) -> None:
        model = body.get("model") or "claude-fake"
        used = self.usage(bool(body.get("tools")), model)
        usage = {
            "input_tokens": used.input,
            "cache_creation_input_tokens": used.cached_write,
            "cache_read_input_tokens": used.cached_read,
            "output_tokens": used.output,
        }
        message = {
            "id": f"msg_fake{next(_ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": min(1, used.output)},  # as the API starts a stream
        }
        if not body.get("stream"):
            send_json(handler, 200, {**message, "content": blocks, "stop_reason": stop, "usage": usage})
            return
        start_stream(handler)
        send_event(handler, "message_start", {"type": "message_start", "message": message})
        if delay:
            send_event(handler, "ping", {"type": "ping"})
            time.sleep(delay)
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                opening = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opening = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            for kind, data in (
                ("content_block_start", {"content_block": opening}),
                ("content_block_delta", {"delta": delta}),
                ("content_block_stop", {}),
            ):
                send_event(handler, kind, {"type": kind, "index": index, **data})
        send_event(
            handler,
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage,  # the whole message's counts, as the API ends a stream
            },
        )
        send_event(handler, "message_stop", {"type": "message_stop"})
