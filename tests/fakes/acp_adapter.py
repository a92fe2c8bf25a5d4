"""A fake ACP adapter on stdio, for the holder's tests: what a real adapter does at the edges.

It answers ``initialize``, ``session/new`` and ``session/load``; a ``session/prompt``'s text
says what the turn does: ``COUNT N`` streams N message chunks, ``ASK`` asks a permission and
waits for the answer, ``TOOL`` starts a tool (``sleep``) in a process group of its own, as
Claude's Bash tool does, and writes its pid to ``$FAKE_ACP_TOOLS``; ``CRASH`` exits 3 at once.
Every line in and out is appended to ``$FAKE_ACP_LOG`` (``< `` in, ``> `` out), byte for byte.
EOF on stdin ends it, unless ``--stubborn``: then it ignores EOF and SIGTERM alike.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

LOG = os.environ.get("FAKE_ACP_LOG")
TOOLS = os.environ.get("FAKE_ACP_TOOLS")


def log(prefix: bytes, line: bytes) -> None:
    if LOG:
        with open(LOG, "ab") as f:
            f.write(prefix + line)


def send(message: dict) -> None:
    line = json.dumps(message).encode() + b"\n"
    log(b"> ", line)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def chunk(session: str, text: str) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session,
                "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
            },
        }
    )


def read() -> dict | None:
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    log(b"< ", line)
    return json.loads(line)


def prompt(message: dict) -> None:
    params = message["params"]
    session = params["sessionId"]
    text = params["prompt"][0]["text"]
    if text.startswith("COUNT "):
        for n in range(1, int(text.split()[1]) + 1):
            chunk(session, f"chunk {n}")
    elif text == "ASK":
        send(
            {
                "jsonrpc": "2.0",
                "id": "perm-1",
                "method": "session/request_permission",
                "params": {
                    "sessionId": session,
                    "toolCall": {"toolCallId": "t1", "title": "rm -rf build"},
                    "options": [
                        {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
                    ],
                },
            }
        )
        answer = read()
        chunk(session, f"answered {json.dumps((answer or {}).get('result'))}")
    elif text == "TOOL":
        tool = subprocess.Popen(["sleep", "300"], start_new_session=True)
        if TOOLS:
            with open(TOOLS, "a") as f:
                f.write(f"{tool.pid}\n")
    elif text == "CRASH":
        os._exit(3)
    send({"jsonrpc": "2.0", "id": message["id"], "result": {"stopReason": "end_turn"}})


def main() -> None:
    stubborn = "--stubborn" in sys.argv
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        message = read()
        if message is None:
            if stubborn:
                while True:
                    time.sleep(60)
            return
        method = message.get("method")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"protocolVersion": 1, "agentCapabilities": {}},
                }
            )
        elif method == "session/new":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"sessionId": "sess-fake-1"}})
        elif method == "session/load":
            chunk(message["params"]["sessionId"], "history")
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "session/prompt":
            prompt(message)


if __name__ == "__main__":
    main()
