"""Benchmark headless sessions over the real ACP adapters against the adapters driven directly.

For Claude's adapter (``claude-agent-acp``) and pi's (``pi-acp``), each round times, interleaved:

- **direct**: the adapter started by this script and driven over its stdin and stdout:
  ``initialize``, ``session/new``, a one-word ``session/prompt`` to its answer; then a second
  process of it: ``initialize``, ``session/load`` of that session, a prompt (resume + a turn).
  Once with no MCP server offered, once offered roost's (``rosterd mcp``), as the daemon offers
  it to every session.
- **roost**: ``POST /sessions`` and a one-word prompt waited for idle (start → first turn done);
  the session suspended, then prompted again and waited for idle (resume + a turn).

The daemon runs from this script (``--daemon``), with the runner's launch steps wrapped from
outside to time each (holder start, handshake, ``initialize``, ``session/new`` or
``session/load`` with the options, the prompt written) so the report says where roost's extra
time goes. Nothing leaves the machine: the script runs itself in a network namespace with only
loopback up, the fake model API on 127.0.0.1.

Run: ``.venv/bin/python bench/headless_adapters.py [--rounds N] [--adapters claude,pi]``
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from common import PYTHON, ROOT, Sandbox, end_holders, free_port, in_namespace, python_start, wait_for

sys.path.insert(0, str(ROOT))
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.claudehome import API_KEY, CLAUDE_QUIET, claude_home

BIN = ROOT / ".cache" / "agents" / "node_modules" / ".bin"
PI_KEY = "sk-ant-fake-recorder-key-0123456789"
PI_QUIET = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}
ADAPTERS = {
    # Debian's node 20 for Claude's adapter (its last release that runs there), the node 22
    # scripts/install-test-agents puts beside pi for pi's.
    "claude": ["/usr/bin/node", str(BIN / "claude-agent-acp")],
    "pi": [str(BIN / "node"), str(BIN / "pi-acp")],
}
CALL_TIMEOUT = 120.0
PHASES = "phases.jsonl"
"""Where the daemon run by ``--daemon`` writes each launch step's time, one JSON line a step."""


class Direct:
    """One adapter process driven over JSON-RPC lines, as a minimal ACP client would."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
        )
        self.ids = 0
        self.pending = b""

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and read until its answer; the adapter's own requests are refused."""
        assert self.proc.stdin is not None
        self.ids += 1
        mine = self.ids
        self.send({"jsonrpc": "2.0", "id": mine, "method": method, "params": params})
        deadline = time.monotonic() + CALL_TIMEOUT
        while True:
            message = self.read(deadline, method)
            if "method" in message and "id" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})
            elif message.get("id") == mine:
                if "error" in message:
                    sys.exit(f"bench: {method}: {message['error']}")
                return message.get("result") or {}

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, deadline: float, method: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                sys.exit(f"bench: no answer to {method} within {CALL_TIMEOUT:.0f} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                sys.exit(f"bench: the adapter ended during {method}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line) if line.strip() else {}

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
    "clientInfo": {"name": "bench", "version": "1"},
}


def prompt(session: str, text: str) -> dict[str, Any]:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


def direct(
    argv: list[str], env: dict[str, str], cwd: Path, mcp: list[dict], steps: dict[str, float]
) -> tuple[float, float]:
    """Start → first turn done, and resume + a turn, driving the adapter directly; each step's
    time goes into ``steps``."""

    def step(name: str, began: float) -> float:
        now = time.perf_counter()
        steps[name] = now - began
        return now

    began = start = time.perf_counter()
    first = Direct(argv, env, cwd)
    try:
        first.call("initialize", INITIALIZE)
        began = step("start|spawn, initialize", began)
        session = first.call("session/new", {"cwd": str(cwd), "mcpServers": mcp})["sessionId"]
        began = step("start|session/new", began)
        first.call("session/prompt", prompt(session, "hello"))
        step("start|the turn", began)
        started = time.perf_counter() - start
    finally:
        first.close()
    began = start = time.perf_counter()
    second = Direct(argv, env, cwd)
    try:
        second.call("initialize", INITIALIZE)
        began = step("resume|spawn, initialize", began)
        second.call("session/load", {"sessionId": session, "cwd": str(cwd), "mcpServers": mcp})
        began = step("resume|session/load", began)
        second.call("session/prompt", prompt(session, "again"))
        step("resume|the turn", began)
        resumed = time.perf_counter() - start
    finally:
        second.close()
    return started, resumed


class Daemon:
    """This script as the daemon (``--daemon``), on the sandbox's unix socket, its standard
    error in ``daemon.log``. One HTTP client for every request: making an httpx client loads a
    TLS context (~17 ms here), which is the client's cost, not the daemon's."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.sock = box.root / "run" / "roost" / "rosterd.sock"
        self.log = box.root / "daemon.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [str(PYTHON), __file__, "--daemon", str(box.root / PHASES)], env=box.env, stderr=log
            )
        self.client = httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.sock)), base_url="http://rosterd", timeout=CALL_TIMEOUT
        )
        wait_for(self.up, 30, "rosterd")

    def up(self) -> bool:
        try:
            return self.client.get("/status").status_code == 200
        except httpx.TransportError:
            return False

    def post(self, path: str, body: dict) -> dict:
        answer = self.client.post(path, json=body)
        if answer.status_code >= 300:
            said = self.log.read_text()[-3000:]
            sys.exit(f"bench: POST {path}: {answer.status_code} {answer.text}\n{said}")
        return answer.json()

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        self.proc.wait(30)


def through_roost(
    daemon: Daemon, harness: str, cwd: Path, env: dict[str, str], steps: dict[str, float]
) -> tuple[float, float]:
    """Start → first turn done, and resume + a turn, through the daemon; the first turn's
    time (its prompt posted to idle) goes into ``steps``."""
    began = time.perf_counter()
    body = {"harness": harness, "cwd": str(cwd), "env": env}
    key = daemon.post("/sessions", body)["record"]["session_key"]
    steps["start|POST /sessions"] = time.perf_counter() - began
    turn = f"/sessions/{key}/prompt"
    prompted = time.perf_counter()
    if not daemon.post(turn, {"text": "hello", "wait": "idle"})["wait"]["reached"]:
        sys.exit("bench: the first turn did not reach idle")
    answered = time.perf_counter()
    steps["start|the turn, posted to idle"] = answered - prompted
    marks = [json.loads(line) for line in (daemon.box.root / PHASES).read_text().splitlines()]
    written = next(m["at"] for m in marks if m["step"] == "prompt written")
    ended = next(m["at"] for m in marks if m["step"] == "turn ended" and m["at"] > written)
    steps["start|  posted to written"] = written - prompted
    steps["start|  written to turn ended"] = ended - written
    steps["start|  turn ended to answered"] = answered - ended
    start = time.perf_counter() - began
    daemon.post(f"/sessions/{key}/suspend", {})
    began = time.perf_counter()
    if not daemon.post(turn, {"text": "again", "wait": "idle"})["wait"]["reached"]:
        sys.exit("bench: the resumed turn did not reach idle")
    resume = time.perf_counter() - began
    daemon.post(f"/sessions/{key}/stop", {})
    return start, resume


WAYS = ("direct", "direct + roost's MCP", "roost")


def one_round(
    daemon: Daemon, harness: str, project: Path, env: dict[str, str], session_env: dict[str, str]
) -> tuple[dict[str, tuple[float, float]], dict[str, dict[str, float]]]:
    """Each way once: its start and resume times, and its steps' times."""
    bridge = {
        "name": "rosterd",
        "command": str(PYTHON),
        "args": ["-m", "roost.faces.cli.rosterd", "mcp", "--socket", str(daemon.sock)],
        "env": [],
    }
    seen: dict[str, dict[str, float]] = {way: {} for way in WAYS}
    timed = {
        "direct": direct(ADAPTERS[harness], env, project, [], seen["direct"]),
        "direct + roost's MCP": direct(ADAPTERS[harness], env, project, [bridge], seen[WAYS[1]]),
    }
    phases = daemon.box.root / PHASES
    phases.unlink(missing_ok=True)
    timed["roost"] = through_roost(daemon, harness, project, session_env, seen["roost"])
    launches = 0
    for line in phases.read_text().splitlines():
        step = json.loads(line)
        launches += step["step"] == "holder start"
        if "s" in step:
            seen["roost"][f"{'start' if launches < 2 else 'resume'}|{step['step']}"] = step["s"]
    return timed, seen


def run_daemon(phases: str) -> None:
    """The daemon, with the runner's launch steps timed into ``phases`` (one JSON line each)."""
    import functools
    import inspect

    from roost.daemon.__main__ import main as daemon_main
    from roost.headless.runner import holders, launch, link, traffic

    def timed(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                now = time.perf_counter()
                with open(phases, "a") as out:
                    out.write(json.dumps({"step": label, "s": now - began, "at": now}) + "\n")

        assert inspect.iscoroutinefunction(original), name
        setattr(owner, name, wrapper)

    def noted(owner: Any, name: str, label: str) -> None:
        """When a plain method is called, on the clock every process here shares."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with open(phases, "a") as out:
                out.write(json.dumps({"step": label, "at": time.perf_counter()}) + "\n")
            return original(*args, **kwargs)

        setattr(owner, name, wrapper)

    noted(traffic.Traffic, "turn_ended", "turn ended")
    timed(holders, "start", "holder start")
    timed(launch, "shake", "handshake")
    timed(link.Link, "initialize", "initialize")
    timed(launch, "open_session", "session/new or load, options")
    timed(link.Link, "prompt", "prompt written")
    sys.argv = ["rosterd"]
    sys.exit(daemon_main())


def sandbox(box: Sandbox, api: AnthropicAPI, adapters: list[str]) -> tuple[Path, dict[str, dict[str, str]]]:
    """The project, each harness's home set up for the fake API, the daemon's settings; each
    harness's session environment."""
    project = (box.root / "project").resolve()
    project.mkdir()
    home = Path(box.env["HOME"])
    claude_home(home, project)
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"anthropic": {"baseUrl": api.url}}}))
    (agent / "settings.json").write_text(
        json.dumps({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"})
    )
    config = Path(box.env["XDG_CONFIG_HOME"]) / "roost"
    config.mkdir(parents=True)
    tables = [f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n[runner]\nidle_timeout_s = 600\n"]
    for harness in adapters:
        extra = "extension = false\n" if harness == "pi" else ""
        tables.append(f'[harness.{harness}]\nadapter = "{" ".join(ADAPTERS[harness])}"\n{extra}')
    (config / "rosterd.toml").write_text("".join(tables))
    box.env.pop("IS_SANDBOX", None)  # Claude Code as root refuses any other value
    envs = {
        "claude": {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET},
        "pi": {"PATH": f"{BIN}:{box.env['PATH']}", "ANTHROPIC_API_KEY": PI_KEY, **PI_QUIET},
    }
    return project, envs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds timed, after one warm-up")
    parser.add_argument("--adapters", default="claude,pi")
    parser.add_argument("--daemon", metavar="PHASES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.daemon:
        run_daemon(args.daemon)
        return
    adapters = args.adapters.split(",")
    for harness in adapters:
        if harness not in ADAPTERS or not Path(ADAPTERS[harness][1]).exists():
            sys.exit(f"bench: no adapter for {harness!r}: run scripts/bootstrap --bench")
    in_namespace()
    samples: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, list[float]] = defaultdict(list)
    bare: list[float] = []
    with Sandbox() as box:
        api = AnthropicAPI()
        project, envs = sandbox(box, api, adapters)
        daemon = Daemon(box)
        try:
            for round in range(args.rounds + 1):
                for harness in adapters:
                    env = envs[harness]
                    timed, seen = one_round(daemon, harness, project, {**box.env, **env}, env)
                    if not round:
                        continue  # warm-up: caches, the daemon's first imports
                    for way, (start, resume) in timed.items():
                        samples[f"{harness}|start|{way}"].append(start)
                        samples[f"{harness}|resume|{way}"].append(resume)
                    for way, taken in seen.items():
                        for name, seconds in taken.items():
                            what, label = name.split("|")
                            steps[f"{harness}|{what}|{way}|{label}"].append(seconds)
                if round:
                    bare.append(python_start())
        finally:
            daemon.stop()
            end_holders(box)
            api.close()
    report(adapters, samples, steps, bare)


def report(
    adapters: list[str], samples: dict[str, list[float]], steps: dict[str, list[float]], bare: list[float]
) -> None:
    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:7.0f} ms"

    print(f"headless sessions over the real adapters, median of {len(bare)} rounds")
    print(f"  python -c pass {ms(bare)}")
    aims = {"start": 1.0, "resume": 0.5}
    for harness in adapters:
        for what, label in (("start", "start → first turn done"), ("resume", "resume + a turn")):
            base = statistics.median(samples[f"{harness}|{what}|direct"])
            print(f"{harness}-acp, {label}:")
            for way in WAYS:
                values = samples[f"{harness}|{what}|{way}"]
                print(f"  {way:22} {ms(values)}  {statistics.median(values) / base:5.2f}x direct")
            roost = statistics.median(samples[f"{harness}|{what}|roost"])
            verdict = "met" if roost < aims[what] else "NOT met"
            print(f"  aim: under {aims[what]:.1f} s: {verdict}")
            for way in WAYS[1:]:
                print(f"  {way}, its steps:")
                for key, values in steps.items():
                    if key.startswith(f"{harness}|{what}|{way}|"):
                        print(f"    {key.split('|')[3]:30} {ms(values)}")


if __name__ == "__main__":
    main()
