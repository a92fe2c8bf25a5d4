"""What the fake model APIs share: a scripted "model" and a threaded loopback HTTP server.

The real agent CLIs (tier 3) talk to these instead of a provider. The model is a script: it
looks only at the newest user text of a request and answers with a text reply, a shell tool
call that needs permission (then, once the tool's result comes back, a final text), or an
HTTP error. Each wire format (Anthropic Messages, OpenAI Responses) is a subclass that turns
those steps into its own streamed events.

Every request is kept in ``requests`` and every text the model streamed in ``streamed``, so a
test can assert that ``roost read`` prints exactly what the model said. What each answer
reports it used is the test's choice (``charge``, a :class:`Usage` per conversation request),
and every figure reported is kept in ``charged``, so a test can hold what an agent recorded
to what the API said, to the token.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """Answer with this text and end the turn, after ``delay`` seconds of "thinking"."""

    text: str
    delay: float = 0.0


@dataclass(frozen=True)
class ToolCall:
    """Ask to run ``command`` in the agent's shell tool; after its result, answer ``then``.

    ``at_fraction`` holds the call back until the wall clock is that far into a second, so a
    test can open the agent's dialog at a chosen point of the second (timestamps in whole
    seconds are where clocks and file times disagree). ``then_delay`` holds the final answer
    back, so the agent is seen working again after its dialog is answered. ``then`` may be
    another call, for a second dialog right after the first. ``tool`` and ``input`` ask for
    another of the agent's tools (a file write, a question) where its wire format has one.
    """

    command: str
    then: str | ToolCall
    at_fraction: float | None = None
    then_delay: float = 0.0
    tool: str | None = None
    input: dict | None = None

    def after(self) -> Step:
        """What the model does once this call's result comes back."""
        if isinstance(self.then, ToolCall):
            return self.then
        return Reply(self.then, delay=self.then_delay)

    def wait(self) -> None:
        if self.at_fraction is not None:
            time.sleep((self.at_fraction - time.time()) % 1.0)


@dataclass(frozen=True)
class Failure:
    """Refuse the request with this HTTP status and message."""

    status: int
    message: str


Step = Reply | ToolCall | Failure


@dataclass(frozen=True)
class Usage:
    """What one answer reports it used, in the provider's four counts: fresh input, output,
    input read from the prompt cache, and input written to it; and, where the provider counts
    them apart from the output (Gemini), thinking tokens."""

    input: int = 100
    output: int = 10
    cached_read: int = 0
    cached_write: int = 0
    thought: int = 0


@dataclass(frozen=True)
class Charge:
    """One answer's reported usage: ``conversation`` is false for an agent's side call (a
    title), which the agent's own records need not hold."""

    usage: Usage
    conversation: bool
    model: str


QUESTION = {
    "question": "Which colour should the button be?",
    "header": "Colour",
    "multiSelect": False,
    "options": [
        {"label": "Red", "description": "A red button"},
        {"label": "Blue", "description": "A blue button"},
    ],
}
"""What ``ASK`` makes the model ask (Claude's AskUserQuestion input holds a list of these)."""
SLOW_SECONDS = 4.0
SIDE_ANSWER = "Fake title"
RECALL = "RECALL"
"""A prompt holding this is answered with the conversation's earlier prompts (:func:`recalled`),
whatever the script says: a fork, a resume or a handoff shows in its reply which turns it holds."""
Script = Callable[[str], Step]


def recalled(prompts: list[str]) -> str:
    """The answer to a ``RECALL`` prompt: the prompts typed before it in the conversation the
    request carries, oldest first."""
    return "RECALLED: " + " | ".join(prompts)


def reply_for(prompt: str) -> str:
    """A deterministic reply a test can compute too; several lines, so "exactly" means something."""
    digest = hashlib.sha1(prompt.encode()).hexdigest()[:8]
    return f"REPLY:{digest}\n\nsecond line of the answer to {digest}."


def default_script(prompt: str) -> Step:
    """The words a test puts in its prompt choose the step.

    ``FAIL`` -> a 400; ``TOOL`` -> ``touch x``, which needs permission (with ``AT.35``, asked
    for 0.35 s into a second; with ``TWICE``, a second command ``touch y`` asked right after the
    first ran; with ``LONG``, ``sleep 3 && touch x``, which runs a while once approved);
    ``SLOW`` -> a reply that takes a few seconds (long enough to see the agent working; after a
    tool call, the answer that follows the tool's result is the one held back); ``WRITE`` ->
    a write of a long file (a dialog with a long diff, where the agent has such a tool);
    ``ASK`` -> a question for the person (where the agent has such a tool); anything else ->
    a reply.
    """
    if "FAIL" in prompt:
        return Failure(400, "the fake model API refuses prompts containing FAIL")
    if "WRITE" in prompt:
        body = "".join(f"line {n} of a long file the model writes\n" for n in range(1, 121))
        return ToolCall(
            "write notes.txt",
            then=f"WROTE:{reply_for(prompt)}",
            tool="Write",
            input={"file_path": "notes.txt", "content": body},
        )
    if "ASK" in prompt:
        return ToolCall(
            "ask which colour",
            then=f"ANSWERED:{reply_for(prompt)}",
            tool="AskUserQuestion",
            input={"questions": [QUESTION]},
        )
    if "TOOL" in prompt:
        at = re.search(r"\bAT(\.[0-9]+)", prompt)
        then: str | ToolCall = f"TOOL-DONE:{reply_for(prompt)}"
        if "TWICE" in prompt:
            then = ToolCall("touch y", then=then)
        return ToolCall(
            "sleep 3 && touch x" if "LONG" in prompt else "touch x",
            then=then,
            at_fraction=float(at[1]) if at else None,
            then_delay=SLOW_SECONDS if "SLOW" in prompt else 0.0,
        )
    return Reply(reply_for(prompt), delay=SLOW_SECONDS if "SLOW" in prompt else 0.0)


@dataclass
class Request:
    method: str
    path: str
    body: dict


@dataclass
class ModelAPI:
    """A loopback server on a random port; ``url`` is its base, ``close()`` stops it. ``host``
    may name another local address (a test bridge's, for agents on nodes in namespaces)."""

    script: Script = default_script
    requests: list[Request] = field(default_factory=list)
    streamed: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    host: str = "127.0.0.1"
    charge: Callable[[int], Usage] = lambda _n: Usage()
    """The usage the ``n``-th conversation answer (from 0) reports; side calls report ``side``."""
    side: Usage = Usage(input=20, output=5)
    charged: list[Charge] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((self.host, 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def record(self, request: Request) -> None:
        with self.lock:
            self.requests.append(request)

    def usage(self, conversation: bool, model: str) -> Usage:
        """What the next answer reports it used, kept in ``charged``."""
        with self.lock:
            count = sum(1 for charge in self.charged if charge.conversation)
            usage = self.charge(count) if conversation else self.side
            self.charged.append(Charge(usage, conversation, model))
            return usage

    def conversation_usage(self) -> list[Usage]:
        with self.lock:
            return [charge.usage for charge in self.charged if charge.conversation]

    def said(self, text: str) -> None:
        with self.lock:
            self.streamed.append(text)

    def route(self, handler: BaseHTTPRequestHandler, request: Request) -> None:
        """Answer one request; subclasses speak their wire format here."""
        raise NotImplementedError

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                request = Request(self.command, self.path, body if isinstance(body, dict) else {})
                api.record(request)
                api.route(self, request)

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def send_json(handler: BaseHTTPRequestHandler, status: int, document: object) -> None:
    data = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def start_stream(handler: BaseHTTPRequestHandler) -> None:
    """Server-sent events; the connection closes after the last event."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True


def send_event(handler: BaseHTTPRequestHandler, name: str, data: dict) -> None:
    handler.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    handler.wfile.flush()
