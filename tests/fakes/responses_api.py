"""A fake OpenAI Responses API for the real Codex CLI: ``POST /v1/responses``, streamed.

Codex sends its whole conversation as ``input`` items and adds its own context as user
messages (environment, AGENTS.md, permissions) whose text starts with ``<``; the model reads
the newest user text that is not one of those. A request whose last item is a
``function_call_output`` answers a tool call: its final text is streamed. The shell tool is
``exec_command``; ``sandbox_permissions = "require_escalated"`` is what makes codex ask.
Requests without ``tools`` are codex's side calls (a title for the thread): they get a short
fixed answer that is not in ``streamed``. A prompt holding ``RECALL`` is answered with the
prompts typed before it (:func:`tests.fakes.model_api.recalled`).
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


def typed(body: dict) -> list[str]:
    """Every user-typed text of a request, oldest first (not codex's own context)."""
    items = body.get("input")
    if isinstance(items, str):
        return [items]
    found = []
    for item in items or []:
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        parts = [{"text": content}] if isinstance(content, str) else content or []
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else None
            if text and not text.lstrip().startswith("<"):
                found.append(text)
    return found


def newest_text(body: dict) -> str:
    """The newest user-typed text of a request: what the scripted model answers."""
    texts = typed(body)
    return texts[-1] if texts else ""


def _answered_call(body: dict) -> str | None:
    """The call id a trailing ``function_call_output`` answers, if the request ends with one."""
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return None
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return str(last.get("call_id"))
    return None


def _message(text: str) -> dict:
    return {
        "type": "message",
        "id": f"msg_fake{next(_ids):04d}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


class ResponsesAPI(ModelAPI):
    """The Responses API, enough of it for Codex to hold a conversation."""

    def __post_init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        super().__post_init__()

    def route(self, handler: BaseHTTPRequestHandler, request: Request) -> None:
        path = request.path.split("?")[0]
        if request.method == "POST" and path.endswith("/responses"):
            self._responses(handler, request.body)
        elif request.method == "GET" and path.endswith("/models"):
            send_json(handler, 200, {"object": "list", "data": [], "models": []})
        else:
            self.unknown.append(f"{request.method} {request.path}")
            send_json(handler, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def _responses(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        if not body.get("tools"):
            self._stream(handler, body, _message(SIDE_ANSWER), 0.0)
            return
        answered = _answered_call(body)
        call = self.calls.get(answered) if answered else None
        step = call.after() if call else self.script(newest_text(body))
        if not call and RECALL in newest_text(body):
            step = Reply(recalled(typed(body)[:-1]))
        if isinstance(step, Failure):
            error = {"type": "invalid_request_error", "code": "invalid_request", "message": step.message}
            send_json(handler, step.status, {"error": error})
            return
        if isinstance(step, ToolCall):
            step.wait()
            call_id = f"call_fake{next(_ids):04d}"
            self.calls[call_id] = step
            arguments = {
                "cmd": step.command,
                "sandbox_permissions": "require_escalated",
                "justification": "The test asked for this command",
            }
            item = {
                "type": "function_call",
                "id": f"fc_fake{next(_ids):04d}",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        else:
            self.said(step.text)
            item = _message(step.text)
        self._stream(handler, body, item, step.delay if isinstance(step, Reply) else 0.0)

    def _stream(self, handler: BaseHTTPRequestHandler, body: dict, item: dict, delay: float) -> None:
        response = {
            "id": f"resp_fake{next(_ids):04d}",
            "object": "response",
            "status": "in_progress",
            "model": body.get("model") or "gpt-fake",
            "output": [],
        }
        start_stream(handler)
        seq = itertools.count()

        def event(kind: str, **data: object) -> None:
            send_event(handler, kind, {"type": kind, "sequence_number": next(seq), **data})

        event("response.created", response=response)
        event("response.in_progress", response=response)
        time.sleep(delay)
        if item["type"] == "message":
            text = item["content"][0]["text"]
            at = {"item_id": item["id"], "output_index": 0, "content_index": 0}
            event(
                "response.output_item.added",
                output_index=0,
                item={**item, "status": "in_progress", "content": []},
            )
            event(
                "response.content_part.added",
                **at,
                part={"type": "output_text", "text": "", "annotations": []},
            )
            event("response.output_text.delta", **at, delta=text)
            event("response.output_text.done", **at, text=text)
            event("response.content_part.done", **at, part=item["content"][0])
        else:
            event("response.output_item.added", output_index=0, item={**item, "arguments": ""})
        event("response.output_item.done", output_index=0, item=item)
        used = self.usage(bool(body.get("tools")), response["model"])
        usage = {  # the Responses API counts cached input inside input_tokens
            "input_tokens": used.input + used.cached_read,
            "input_tokens_details": {"cached_tokens": used.cached_read},
            "output_tokens": used.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": used.input + used.cached_read + used.output,
        }
        done = {**response, "status": "completed", "output": [item], "usage": usage}
        event("response.completed", response=done)
