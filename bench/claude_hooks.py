"""Benchmark what roost's hooks cost the real Claude Code: its time per hook event, in a turn with
ten tool calls, with HTTP hooks (the daemon's hook port), the command hook (``rosterd-hook``)
and an equivalent shell command hook, against the same turn with no hooks at all.

Beside them, the **floor** of an HTTP hook: the same HTTP hooks posted to a receiver in this
script that answers at once and does nothing. What Claude spends on that is its own cost of an
HTTP hook (its request, its wait, its reading of the answer), which no daemon can undercut.

Claude waits for its hooks before every tool call and after it, so a turn of ten tool calls
fires 21 events it waits on (UserPromptSubmit, ten PreToolUse, ten PostToolUse) before its final
model request. A turn is timed from the Enter that submits it to that final request reaching the
fake model API (which answers at once; the tools read a small file). Each way's cost per event
is its median turn minus the median turn with no hooks, over 21, and is printed as a ratio to
the shell hook's, measured in the same run (aim: the HTTP hook at most 0.1x the shell hook).

Nothing leaves the machine: the bench runs itself in a network namespace with loopback only,
the fake API and the daemon on 127.0.0.1 (Claude looks up outside hosts at start).

Run: ``.venv/bin/python bench/claude_hooks.py [--turns N] [--rounds N]``
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from common import BIN, ROOT, Sandbox, free_port, in_namespace, wait_for

sys.path.insert(0, str(ROOT))
from tests.fakes.anthropic_api import AnthropicAPI
from tests.fakes.claudehome import API_KEY, CLAUDE_QUIET, claude_home
from tests.fakes.model_api import Reply, Step, ToolCall

from roost.services.integrate.claude import http_handler

CLAUDE = ROOT / ".cache" / "agents" / "node_modules" / ".bin" / "claude"
CALLS = 10
EVENTS = 1 + 2 * CALLS
"""Events Claude waits on before its final request: the prompt, and each tool's before and after."""
WAYS = ("none", "shell", "command", "http", "floor")
AIM = 0.1
MARK = "BENCH-TURN"

# The command hook's work for the events of such a turn, in bash, as a shell tool would write
# it: one tmux read of the pane's badge, and a write only when the badge changes.
SHELL_HOOK = r"""
IFS= read -r -d '' payload
[[ $payload =~ \"hook_event_name\"[[:space:]]*:[[:space:]]*\"([^\"]*)\" ]] && name=${BASH_REMATCH[1]}
case $name in
  UserPromptSubmit|PostToolUse|PostToolUseFailure|PreToolUse) want=working ;;
  Stop) want=done ;;
  *) exit 0 ;;
esac
[[ -n $TMUX_PANE ]] || exit 0
state=$(tmux -S "${TMUX%%,*}" display-message -p -t "$TMUX_PANE" '#{@roost-state}')
[[ $state == "$want" || ( $name == PreToolUse && $state == blocked ) ]] && exit 0
tmux -S "${TMUX%%,*}" set-option -p -t "$TMUX_PANE" @roost-state "$want"
exit 0
"""


def ten_reads(readme: Path) -> Callable[[str], Step]:
    """The fake model's script: a prompt with the mark reads ``readme`` ten times, then answers."""

    def script(prompt: str) -> Step:
        if MARK not in prompt:
            return Reply("ok")
        then: str | ToolCall = f"DONE {prompt.strip()}"
        for _ in range(CALLS):
            then = ToolCall("read", then=then, tool="Read", input={"file_path": str(readme)})
        return then  # type: ignore[return-value]

    return script


class Nothing(BaseHTTPRequestHandler):
    """The floor's receiver: reads the event, answers 200 with no body, keeps the connection."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def receiver() -> Iterator[int]:
    """A receiver that answers every POST at once, on a loopback port; its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Nothing)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def settings(box: Sandbox, way: str, floor_port: int) -> None:
    """Claude's settings.json for ``way``: no hooks, the shell hook, HTTP hooks to the floor's
    receiver, or roost's installed as asked."""
    path = Path(box.env["HOME"]) / ".claude" / "settings.json"
    path.write_text(json.dumps({"permissions": {"defaultMode": "default"}}))
    if way in ("shell", "floor"):
        handler = http_handler(f"http://127.0.0.1:{floor_port}/hooks/claude")
        if way == "shell":
            script = box.root / "hook.bash"
            script.write_text(SHELL_HOOK)
            command = f"/bin/bash --norc --noprofile {shlex.quote(str(script))}"
            handler = {"type": "command", "command": command}
        events = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
        hooks = {e: [{"matcher": "", "hooks": [handler]}] for e in events}
        path.write_text(json.dumps({"permissions": {"defaultMode": "default"}, "hooks": hooks}))
    elif way in ("command", "http"):
        flag = "--http" if way == "http" else "--command"
        proc = subprocess.run(
            [str(BIN / "rosterd"), "integrate", "install", "claude", flag],
            env=box.env,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"bench: rosterd integrate install claude {flag}: {proc.stderr.strip()}")


def turns(box: Sandbox, api: AnthropicAPI, project: Path, way: str, count: int, round: int) -> list[float]:
    """Start Claude in a window of its own, run ``count`` marked turns, end it; each turn's time."""
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": API_KEY, **CLAUDE_QUIET}
    command = shlex.join(["exec", "env", *(f"{k}={v}" for k, v in env.items()), str(CLAUDE)])
    pane = box.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", str(project), "-t", "main:", command)
    pane = pane.strip()

    def screen() -> str:
        return box.tmux("capture-pane", "-p", "-t", pane)

    wait_for(lambda: "? for shortcuts" in screen(), 60, f"Claude's prompt ({way})")
    taken = []
    for n in range(count + 1):  # the first turn warms Claude up, and is not counted
        prompt = f"{MARK} {way} {round}.{n}"  # unique: a turn ends when its own answer is asked for
        box.tmux("send-keys", "-t", pane, "-l", prompt)
        time.sleep(0.3)  # typed, not pasted: Claude takes a fast burst of keys as a paste
        began = time.monotonic()
        box.tmux("send-keys", "-t", pane, "Enter")
        done = f"DONE {prompt}"
        while not any(done in text for text in api.streamed):
            if time.monotonic() - began > 120:
                sys.exit(f"bench: Claude's turn {prompt!r} did not end\n{screen()}")
            time.sleep(0.002)
        if n:
            taken.append(time.monotonic() - began)
        wait_for(
            lambda text=done: "? for shortcuts" in screen() and text in screen(), 60, "the turn on screen"
        )
        time.sleep(0.5)  # its Stop hook, and Claude settling, before the next prompt
    box.tmux("kill-pane", "-t", pane)
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5, help="turns per way and round, after a warm-up")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every way, the order rotated")
    args = parser.parse_args()
    if not CLAUDE.exists():
        sys.exit(f"bench: {CLAUDE} is missing: run scripts/bootstrap --bench")
    in_namespace()
    with Sandbox() as box, receiver() as floor_port:
        project = box.root / "project"
        project.mkdir()
        readme = project / "README"
        readme.write_text("a small file the model reads\n")
        claude_home(Path(box.env["HOME"]), project)
        hook_port = free_port()
        config = Path(box.env["XDG_CONFIG_HOME"]) / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(
            f"[node]\nloopback_port = {free_port()}\nhook_port = {hook_port}\n"
        )
        box.start("sleep 100000")
        box.tmux("set-environment", "-g", "XDG_RUNTIME_DIR", box.env["XDG_RUNTIME_DIR"])
        daemon = subprocess.Popen([str(BIN / "rosterd"), "daemon"], env=box.env, stderr=subprocess.DEVNULL)
        api = AnthropicAPI(script=ten_reads(readme))
        try:
            wait_for(
                lambda: (Path(box.env["XDG_RUNTIME_DIR"]) / "roost" / "rosterd.sock").exists(), 30, "rosterd"
            )
            samples: dict[str, list[float]] = {way: [] for way in WAYS}
            for round in range(args.rounds):
                for way in WAYS[round % len(WAYS) :] + WAYS[: round % len(WAYS)]:
                    settings(box, way, floor_port)
                    samples[way] += turns(box, api, project, way, args.turns, round)
        finally:
            api.close()
            daemon.terminate()
            daemon.wait(20)
    report(samples)


def report(samples: dict[str, list[float]]) -> None:
    medians = {way: statistics.median(values) for way, values in samples.items()}
    runs = len(samples["none"])
    print(f"Claude Code, a turn of {CALLS} tool calls ({EVENTS} hook events it waits on), median of {runs}:")
    for way in WAYS:
        print(
            f"  {way:8} turn {medians[way] * 1000:7.1f} ms   runs "
            + " ".join(f"{v * 1000:.0f}" for v in samples[way])
        )
    per = {way: max(0.0, (medians[way] - medians["none"]) / EVENTS) for way in WAYS if way != "none"}
    shell = per["shell"] or 1e-9
    print("Per hook event (its turn minus the turn with no hooks, over the events):")
    for way, cost in per.items():
        print(f"  {way:8} {cost * 1000:6.2f} ms   {cost / shell:5.2f}x the shell hook")
    verdict = "meets" if per["http"] <= AIM * shell else "misses"
    print(f"HTTP hook {per['http'] / shell:.2f}x the shell hook: {verdict} the aim of {AIM}x")
    print(
        f"HTTP hook {per['http'] / (per['floor'] or 1e-9):.2f}x its floor "
        f"(Claude's own cost of an HTTP hook, {per['floor'] / shell:.2f}x the shell hook)"
    )


if __name__ == "__main__":
    main()
