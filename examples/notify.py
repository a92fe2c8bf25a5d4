"""Be told, once, when any agent anywhere in the swarm needs you: a webhook, and the stream to catch up.

A notifier built only on rosterd's contract, as the specification sketches it: it registers a
webhook with one node (every kind of change, so the stream's `seq`s arrive one after another and
a gap shows a dropped delivery), prints a line for a person on each `attention` (a session, on
whichever machine, waits on someone), and when a delivery is missing, or after it started,
catches up with `GET /swarm/changes?since=` the last seq it saw. Each change is told at most
once: it is keyed by its seq within the stream's epoch. It removes its webhook when it is
stopped (Ctrl-C, or SIGTERM).

Usage (the daemon's socket, and a free port on this machine for the webhook to call):
    python notify.py $XDG_RUNTIME_DIR/roost/rosterd.sock 9123
"""

import json
import secrets
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

api = httpx.Client(transport=httpx.HTTPTransport(uds=sys.argv[1]), base_url="http://rosterd", timeout=30)
token = secrets.token_urlsafe(32)
lock = threading.Lock()
union = api.get("/swarm/snapshot").json()
seen = {"epoch": union["status_epoch"], "seq": union["seq"]}  # the stream's place when we began


def tell(change: dict) -> None:
    """One line for a person per change that asks for one; the rest only move the cursor."""
    if change["event"] == "attention":
        record, pending = change["record"], change["record"].get("pending") or {}
        what = pending.get("summary") or pending.get("tool") or "input"
        print(
            f"{change['node']}: {record.get('name') or change['session_key']} needs input: {what}", flush=True
        )


def take(change: dict) -> None:
    """A change in the stream's order, taken once; a gap before it is filled from the stream."""
    with lock:
        if change["status_epoch"] != seen["epoch"]:  # the node restarted: its numbering did too
            seen.update(epoch=change["status_epoch"], seq=0)
        if change["seq"] <= seen["seq"]:
            return  # already told (delivered after a catch-up that had it)
        if change["seq"] > seen["seq"] + 1:
            catch_up(change["seq"])
        if change["seq"] == seen["seq"] + 1:
            tell(change)
            seen["seq"] = change["seq"]


def catch_up(until: int) -> None:
    """Every change after the last one seen and before ``until``, from the stream itself."""
    since = f"{seen['epoch']}:{seen['seq']}"
    with api.stream("GET", f"/swarm/changes?since={since}", timeout=None) as stream:
        for line in stream.iter_lines():
            if not line.startswith("data:"):
                continue
            change = json.loads(line[5:])
            if change["event"] == "snapshot":  # the node can no longer give them: start over
                seen.update(epoch=change["status_epoch"], seq=change["seq"])
            elif change["seq"] == seen["seq"] + 1:
                tell(change)
                seen["seq"] = change["seq"]
            if seen["seq"] >= until - 1:
                return


class Hook(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        ours = self.headers.get("authorization") == f"Bearer {token}"
        self.send_response(204 if ours else 401)
        self.end_headers()
        if ours:
            take(json.loads(body)["data"])

    def log_message(self, *_: object) -> None:
        pass  # a person reads the notifications, not an access log


signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a service manager's stop, like Ctrl-C
server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Hook)
hook = api.post("/hooks", json={"url": f"http://127.0.0.1:{sys.argv[2]}/", "token": token}).json()
print(f"listening for every node's changes through webhook {hook['id']}", flush=True)
try:
    server.serve_forever()
except (KeyboardInterrupt, SystemExit):
    pass
finally:
    api.delete(f"/hooks/{hook['id']}")
