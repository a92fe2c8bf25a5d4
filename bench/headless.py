"""Benchmark headless sessions: start to first turn, resume, and the daemon's rebuild of 20.

A daemon runs the fake ACP adapter (tests/fakes/acp_adapter.py) as harness ``fake``, so what
is timed is roost's own part: the holder, the relay, the SDK, the claims. Each round times,
beside a bare ``python -c pass`` start in the same round (a holder is a Python start, and so
is the fake adapter):

- **start → first turn done**: ``POST /sessions``, then a one-word prompt waited for idle;
- **resume + turn**: a suspended session prompted (a new holder, ``session/load``, the turn),
  beside a turn of a live session;
- **rebuild of 20**: 20 live headless sessions; the daemon killed with SIGKILL and started
  again, its ``/status`` saying how long the headless part of its rebuild took.

Everything it starts it ends; the real adapters' numbers come from the agent tier
(``tests/agents/test_headless_acp.py`` prints them in its timings).

Run: ``.venv/bin/python bench/headless.py [--runs N]``
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import time

import httpx
from common import PYTHON, ROOT, Sandbox, end_holders, free_port, python_start, show, wait_for

ADAPTER = ROOT / "tests" / "fakes" / "acp_adapter.py"
SESSIONS = 20


class Daemon:
    """The daemon, and one HTTP client for all of a run's requests: making an httpx client
    loads a TLS context (~17 ms here), the client's cost and not the daemon's. Its pooled
    connection dies with a killed daemon, so a restart makes a new one."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.sock = box.root / "run" / "roost" / "rosterd.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.client = self._client()

    def start(self) -> dict:
        self.proc = subprocess.Popen(
            [str(PYTHON), "-m", "roost.daemon"], env=self.box.env, stderr=subprocess.DEVNULL
        )
        answer: dict = {}

        def up() -> bool:
            try:
                answer.update(self.client.get("/status").json())
            except (httpx.TransportError, ValueError):
                return False
            return True

        wait_for(up, what="rosterd to answer")
        return answer

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.client.close()
        self.client = self._client()

    def _client(self) -> httpx.Client:
        return httpx.Client(
            transport=httpx.HTTPTransport(uds=str(self.sock)), base_url="http://rosterd", timeout=60
        )

    def post(self, path: str, body: dict) -> dict:
        answer = self.client.post(path, json=body)
        if answer.status_code >= 300:
            sys.exit(f"bench: POST {path}: {answer.status_code} {answer.text}")
        return answer.json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"headless sessions over the fake ACP adapter ({args.runs} rounds)")
    with Sandbox() as box:
        config = box.root / "config" / "roost"
        config.mkdir(parents=True)
        (config / "rosterd.toml").write_text(
            f"[node]\nloopback_port = {free_port()}\nhook_port = 0\n"
            f'[harness.fake]\nadapter = "{PYTHON} {ADAPTER}"\n'
        )
        (box.root / "fake-acp").mkdir()
        box.env["FAKE_ACP_STATE"] = str(box.root / "fake-acp")
        daemon = Daemon(box)
        daemon.start()
        cwd = str(box.root)
        try:
            starts, resumes, turns, rebuilds, bare = [], [], [], [], []
            for _ in range(args.runs):
                bare.append(python_start())
                began = time.perf_counter()
                key = daemon.post("/sessions", {"harness": "fake", "cwd": cwd})["record"]["session_key"]
                turn = f"/sessions/{key}/prompt"
                daemon.post(turn, {"text": "hello", "wait": "idle"})
                starts.append(time.perf_counter() - began)
                began = time.perf_counter()
                daemon.post(turn, {"text": "again", "wait": "idle"})
                turns.append(time.perf_counter() - began)
                daemon.post(f"/sessions/{key}/suspend", {})
                began = time.perf_counter()
                daemon.post(turn, {"text": "back", "wait": "idle"})
                resumes.append(time.perf_counter() - began)
                daemon.post(f"/sessions/{key}/stop", {})
            for _ in range(SESSIONS):
                daemon.post("/sessions", {"harness": "fake", "cwd": cwd})
            for _ in range(args.runs):
                bare.append(python_start())
                daemon.kill()
                rebuilt = daemon.start()["rebuild"]["headless"]
                if rebuilt["sessions"] != SESSIONS:
                    sys.exit(f"bench: rebuilt {rebuilt['sessions']} headless sessions, not {SESSIONS}")
                rebuilds.append(rebuilt["ms"] / 1000)
            show("start to first turn done", starts, bare)
            show("a turn, live", turns, bare)
            show("resume + a turn (suspended)", resumes, bare)
            show(f"rebuild of {SESSIONS} headless", rebuilds, bare)
            print(
                f"  resume overhead: {statistics.median(resumes) / statistics.median(turns):.1f}x a live turn"
            )
        finally:
            daemon.client.close()
            if daemon.proc is not None and daemon.proc.poll() is None:
                daemon.proc.terminate()
                daemon.proc.wait()
            end_holders(box)


if __name__ == "__main__":
    main()
