"""A fake Gemini API for the real Gemini CLI: ``…:streamGenerateContent?alt=sse``, streamed.

Gemini CLI sends its conversation as ``contents`` (``role`` user or model, ``parts`` of text,
``functionCall`` and ``functionResponse``); the model reads the newest user part: a text is the
prompt, a ``functionResponse`` answers a tool call, whose final text is streamed. Its shell
tool is ``run_shell_command``, which asks by default. Non-streamed ``…:generateContent`` calls
are the CLI's own side questions (who speaks next, which model routes a prompt): they get a
JSON answer that says "the user", not in ``streamed``. ``…:countTokens`` is answered too.

Each answer reports its usage (``ModelAPI.charge``; a side question reports ``side``) as the
Gemini API does in ``usageMetadata``: the prompt count holds the cached part, the thinking
tokens are counted apart from the candidates'.
"""

from __future__ import annotations

import itertools
import json
import time
from http.server import BaseHTTPRequestHandler

from tests.fakes.model_api import Failure, ModelAPI, Request, ToolCall, Usage, send_json, start_stream

_ids = itertools.count(1)
SIDE_JSON = {"next_speaker": "user", "reasoning": "The model finished its turn.", "model_choice": "flash"}
_STATUS = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


def newest(body: dict) -> tuple[str, str]:
    """``("text", prompt)`` or ``("function", call id)`` from the last user turn."""
    turns = [
        turn for turn in body.get("contents") or [] if isinstance(turn, dict) and turn.get("role") == "user"
    ]
    for part in reversed(turns[-1].get("parts") or [] if turns else []):
        if not isinstance(part, dict):
            continue
        if "functionResponse" in part:
            response = part["functionResponse"]
            return "function", str(response.get("id") or response.get("name"))
        text = part.get("text")
        if text and not text.lstrip().startswith("<"):
            return "text", text
    return "text", ""


class GeminiAPI(ModelAPI):
    def __post_init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        super().__post_init__()

    def route(self, handler: BaseHTTPRequestHandler, request: Request) -> None:
        path = request.path.split("?")[0]
        if path.endswith(":countTokens"):
            send_json(handler, 200, {"totalTokens": 100})
        elif path.endswith(":generateContent"):
            used = self.usage(False, _model(path))
            send_json(handler, 200, _answer([{"text": json.dumps(SIDE_JSON)}], used))
        elif path.endswith(":streamGenerateContent"):
            self._stream(handler, request.body, _model(path))
        else:
            self.unknown.append(f"{request.method} {request.path}")
            send_json(handler, 404, {"error": {"code": 404, "message": "no", "status": "NOT_FOUND"}})

    def _stream(self, handler: BaseHTTPRequestHandler, body: dict, model: str) -> None:
        kind, value = newest(body)
        call = self.calls.pop(value, None) if kind == "function" else None
        step = call.after() if call else self.script(value if kind == "text" else "")
        if isinstance(step, Failure):
            error = {
                "code": step.status,
                "message": step.message,
                "status": _STATUS.get(step.status, "UNKNOWN"),
            }
            send_json(handler, step.status, {"error": error})
            return
        if isinstance(step, ToolCall):
            call_id = f"call_fake{next(_ids):04d}"
            name = step.tool or "run_shell_command"
            self.calls[call_id] = step
            self.calls[name] = step  # a response may name the call by the tool alone
            args = step.input or {
                "command": step.command,
                "description": "Run the command the test asked for",
            }
            step.wait()
            parts = [{"functionCall": {"id": call_id, "name": name, "args": args}}]
        else:
            time.sleep(step.delay)
            self.said(step.text)
            parts = [{"text": step.text}]
        used = self.usage(True, model)
        start_stream(handler)
        handler.wfile.write(f"data: {json.dumps(_answer(parts, used))}\n\n".encode())
        handler.wfile.flush()


def _model(path: str) -> str:
    """The model a request names: ``/v1beta/models/<model>:<method>``."""
    return path.rsplit("/", 1)[-1].split(":")[0]


def _answer(parts: list[dict], used: Usage) -> dict:
    prompt = used.input + used.cached_read
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": used.output,
        "totalTokenCount": prompt + used.output + used.thought,
    }
    if used.cached_read:
        usage["cachedContentTokenCount"] = used.cached_read
    if used.thought:
        usage["thoughtsTokenCount"] = used.thought
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": usage,
        "modelVersion": "gemini-fake",
        "responseId": f"resp_fake{next(_ids):04d}",
    }
