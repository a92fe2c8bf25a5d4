"""A fake ACP adapter on stdio: what a real adapter does at the edges, on cue.

It answers ``initialize``, ``session/new``, ``session/load``, ``session/fork`` (offered unless
``$FAKE_ACP_NO_FORK`` is set) and ``session/set_mode``; a ``session/prompt``'s text says what the
turn does:

- ``COUNT N`` streams N message chunks;
- ``ASK [COMMAND]`` asks a permission to run COMMAND in Bash (``rm -rf build`` when none is
  given; options ``allow`` / ``reject``) and reports the answer;
- ``PERMIT`` asks as Claude's adapter does (``allow_always`` / ``allow`` / ``reject``): an
  allowed tool runs, a rejected one ends the turn ``end_turn`` with nothing run;
- ``PLAN`` sends a plan, a mode change, a usage update and a title, then replies;
- ``SPEND X`` costs X dollars: a usage update carries the process's cumulative cost, then it replies;
- ``SLOW S`` replies after S seconds, or ends ``cancelled`` when ``session/cancel`` comes first;
- ``FAIL`` answers the prompt with an error, as an adapter whose model API failed;
- ``TOOL`` starts a tool (``sleep``) in a process group of its own, as Claude's Bash tool
  does, and writes its pid to ``$FAKE_ACP_TOOLS``;
- ``CRASH`` exits 3 at once;
- ``HISTORY`` replies with how many turns the session had before this one, and the last prompt;
- ``CONFIG`` replies with the model and effort its config options hold now;
- ``ENV NAME…`` replies with each variable of its environment as ``NAME=value`` (``-`` unset);
- ``WHERE`` replies with the folder its session was opened in (``cwd: …``);
- ``MCP TOOL {ARGS}`` starts the stdio MCP server named ``rosterd`` that ``session/new`` (or
  ``session/load``) offered, as a harness does (its child, so below the holder), calls TOOL with
  the JSON ARGS through the official SDK's client and replies with the result as JSON
  (``{"is_error": …, "result": …}``); ``MCP SERVERS`` replies with the servers offered;
- anything else is answered ``echo: <text>``.

With ``$FAKE_ACP_STATE`` (a folder) each session gets its own id and its history is kept there,
so ``session/load`` in a new process replays it (user and agent message chunks) before
answering, and ``session/fork`` copies it to a new session id (replaying it, as OpenCode's
adapter does); without it the one session is ``sess-fake-1`` and nothing is kept. Every line in and
out is appended to ``$FAKE_ACP_LOG`` (``< `` in, ``> `` out), byte for byte; ``session/load``
waits ``$FAKE_ACP_LOAD_DELAY`` seconds first, when set (a long history). EOF on stdin ends
it, unless ``--stubborn``: then it ignores EOF and SIGTERM alike.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid

LOG = os.environ.get("FAKE_ACP_LOG")
TOOLS = os.environ.get("FAKE_ACP_TOOLS")
STATE = os.environ.get("FAKE_ACP_STATE")
CONFIG = {"model": "fake-small", "effort": "medium"}
"""The session's config options (``session/set_config_option`` changes them), unless
``$FAKE_ACP_BARE`` says the adapter offers none."""
SPENT = [0.0]
"""Dollars this process has spent, as a ``usage_update``'s cumulative cost counts them."""
backlog: list[dict] = []
servers: dict[str, list[dict]] = {}
"""The MCP servers each session was offered, by session id."""
folders: dict[str, str] = {}
"""The folder each session was opened in, by session id."""
"""Lines read while waiting for something else (a cancel during a slow turn)."""


def log(prefix: bytes, line: bytes) -> None:
    if LOG:
        with open(LOG, "ab") as f:
            f.write(prefix + line)


def send(message: dict) -> None:
    line = json.dumps(message).encode() + b"\n"
    log(b"> ", line)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def update(session: str, body: dict) -> None:
    send({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": body}})


def chunk(session: str, text: str, kind: str = "agent_message_chunk") -> None:
    update(session, {"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def read(timeout: float | None = None) -> dict | None:
    """The next message; None at EOF, or ``{}`` when ``timeout`` passed first."""
    if backlog:
        return backlog.pop(0)
    if timeout is not None:
        ready, _, _ = select.select([sys.stdin.buffer], [], [], timeout)
        if not ready:
            return {}
    line = sys.stdin.buffer.readline()
    if not line:
        return None
    log(b"< ", line)
    return json.loads(line)


def history_file(session: str) -> str | None:
    return os.path.join(STATE, f"{session}.json") if STATE else None


def history(session: str) -> list[list[str]]:
    path = history_file(session)
    if path and os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    return []


def remember(session: str, prompt_text: str, reply: str) -> None:
    path = history_file(session)
    if path:
        past = history(session)
        with open(path, "w") as f:
            json.dump([*past, [prompt_text, reply]], f)


def config_options() -> list[dict]:
    if os.environ.get("FAKE_ACP_BARE"):
        return []
    choices = {"model": ("fake-small", "fake-large"), "effort": ("low", "medium", "high")}
    category = {"model": "model", "effort": "thought_level"}
    return [
        {
            "id": name,
            "name": name.title(),
            "category": category[name],
            "type": "select",
            "currentValue": CONFIG[name],
            "options": [{"value": value, "name": value} for value in choices[name]],
        }
        for name in ("model", "effort")
    ]


def ask(session: str, options: list[dict], command: str = "rm -rf build") -> dict:
    send(
        {
            "jsonrpc": "2.0",
            "id": "perm-1",
            "method": "session/request_permission",
            "params": {
                "sessionId": session,
                "toolCall": {
                    "toolCallId": "t1",
                    "title": command,
                    "kind": "execute",
                    "rawInput": {"command": command},
                    "_meta": {"claudeCode": {"toolName": "Bash"}},
                },
                "options": options,
            },
        }
    )
    while True:
        answer = read()
        if answer is None or answer.get("id") == "perm-1":
            return answer or {}
        backlog.append(answer)


def call_mcp(offered: list[dict], tool: str, arguments: dict) -> str:
    """Call ``tool`` on the offered ``rosterd`` server, as a harness would: start its command."""
    import asyncio

    from mcp import Client, StdioServerParameters

    entry = next(server for server in offered if server.get("name") == "rosterd")
    env = {item["name"]: item["value"] for item in entry.get("env") or []}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**os.environ, **env})

    async def go() -> str:
        async with Client(params, mode="legacy") as client:
            result = await client.call_tool(tool, arguments)
        return json.dumps({"is_error": result.is_error, "result": result.structured_content})

    return asyncio.run(go())


def turn(message: dict) -> tuple[str, str, dict]:
    """Play one prompt: (the reply's text, the stop reason, extra fields of the answer)."""
    params = message["params"]
    session = params["sessionId"]
    text = params["prompt"][0]["text"]
    reply = f"echo: {text}"
    stop = "end_turn"
    if text.startswith("COUNT "):
        for n in range(1, int(text.split()[1]) + 1):
            chunk(session, f"chunk {n}")
        return "", stop, {}
    if text == "ASK" or text.startswith("ASK "):
        answer = ask(
            session,
            [
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
            text[4:] or "rm -rf build",
        )
        chunk(session, f"answered {json.dumps(answer.get('result'))}")
        return "", stop, {}
    elif text == "PERMIT":
        update(
            session,
            {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "rm -rf build", "status": "pending"},
        )
        answer = ask(
            session,
            [
                {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
            ],
        )
        outcome = (answer.get("result") or {}).get("outcome") or {}
        chosen = outcome.get("optionId") if outcome.get("outcome") == "selected" else None
        status = "completed" if chosen in ("allow", "allow_always") else "failed"
        update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": status})
        reply = f"tool {status} ({chosen})"
    elif text == "PLAN":
        update(
            session,
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "read the tests", "priority": "high", "status": "completed"},
                    {"content": "fix the relay", "priority": "medium", "status": "in_progress"},
                ],
            },
        )
        update(session, {"sessionUpdate": "current_mode_update", "currentModeId": "plan"})
        update(session, {"sessionUpdate": "usage_update", "used": 1200, "size": 200000})
        update(session, {"sessionUpdate": "session_info_update", "title": "fixing the relay"})
        reply = "planned"
    elif text.startswith("SPEND "):
        SPENT[0] += float(text.split()[1])
        cost = {"amount": round(SPENT[0], 6), "currency": "USD"}
        update(session, {"sessionUpdate": "usage_update", "used": 300, "size": 200000, "cost": cost})
        reply = "spent"
    elif text.startswith("SLOW "):
        chunk(session, "working")
        deadline = time.monotonic() + float(text.split()[1])
        while (left := deadline - time.monotonic()) > 0:
            other = read(left)
            if other is None:
                sys.exit(0)
            if other.get("method") == "session/cancel":
                return "", "cancelled", {}
            if other:
                backlog.append(other)
        reply = "slow done"
    elif text == "FAIL":
        return "", "", {"error": {"code": -32603, "message": "the model API is overloaded (529)"}}
    elif text == "TOOL":
        tool = subprocess.Popen(["sleep", "300"], start_new_session=True)
        if TOOLS:
            with open(TOOLS, "a") as f:
                f.write(f"{tool.pid}\n")
        reply = ""
    elif text == "CRASH":
        os._exit(3)
    elif text == "MCP SERVERS":
        reply = json.dumps(servers.get(session, []))
    elif text.startswith("MCP "):
        reply = call_mcp(servers.get(session, []), text.split(" ", 2)[1], json.loads(text.split(" ", 2)[2]))
    elif text.startswith("ENV "):
        reply = " ".join(f"{name}={os.environ.get(name, '-')}" for name in text.split()[1:])
    elif text == "WHERE":
        reply = f"cwd: {folders.get(session)}"
    elif text == "CONFIG":
        reply = f"model={CONFIG['model']} effort={CONFIG['effort']}"
    elif text == "HISTORY":
        past = history(session)
        reply = f"history: {len(past)} turns; last: {past[-1][0] if past else None}"
    if reply:
        chunk(session, reply)
    remember(session, text, reply)
    return reply, stop, {"usage": {"inputTokens": 3, "outputTokens": 5, "totalTokens": 8}}


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
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {
                            "loadSession": True,
                            **(
                                {}
                                if os.environ.get("FAKE_ACP_NO_FORK")
                                else {"sessionCapabilities": {"fork": {}}}
                            ),
                        },
                        "agentInfo": {
                            "name": "fake-acp",
                            "version": os.environ.get("FAKE_ACP_VERSION", "1.0.0"),
                        },
                    },
                }
            )
        elif method == "session/new":
            session = f"sess-{uuid.uuid4().hex[:12]}" if STATE else "sess-fake-1"
            servers[session] = message["params"].get("mcpServers") or []
            folders[session] = message["params"].get("cwd", "")
            result = {
                "sessionId": session,
                "modes": {"currentModeId": "default", "availableModes": []},
                "configOptions": config_options(),
            }
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "session/load":
            session = message["params"]["sessionId"]
            servers[session] = message["params"].get("mcpServers") or []
            folders[session] = message["params"].get("cwd", "")
            past = history(session) if STATE else [["", "history"]]
            time.sleep(float(os.environ.get("FAKE_ACP_LOAD_DELAY", "0")))
            for prompt_text, reply in past:
                if prompt_text:
                    chunk(session, prompt_text, "user_message_chunk")
                chunk(session, reply)
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"configOptions": config_options()}})
        elif method == "session/fork":
            source = message["params"]["sessionId"]
            session = f"sess-{uuid.uuid4().hex[:12]}" if STATE else "sess-fake-2"
            servers[session] = message["params"].get("mcpServers") or []
            folders[session] = message["params"].get("cwd", "")
            past = history(source)
            for prompt_text, reply in past:
                chunk(session, prompt_text, "user_message_chunk")
                chunk(session, reply)
            path = history_file(session)
            if path:
                with open(path, "w") as f:
                    json.dump(past, f)
            result = {"sessionId": session, "configOptions": config_options()}
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "session/set_config_option":
            CONFIG[message["params"]["configId"]] = message["params"]["value"]
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"configOptions": config_options()}})
        elif method == "session/set_mode":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        elif method == "session/prompt":
            _, stop, extra = turn(message)
            if "error" in extra:
                send({"jsonrpc": "2.0", "id": message["id"], "error": extra["error"]})
            else:
                send({"jsonrpc": "2.0", "id": message["id"], "result": {"stopReason": stop, **extra}})


if __name__ == "__main__":
    main()
