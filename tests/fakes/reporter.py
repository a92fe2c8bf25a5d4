"""A fake agent with its own integration: it reports to rosterd's reports socket *as itself*.

The daemon believes a report only from the pane's agent process, so the test cannot send
reports on the agent's behalf; it asks this process to, over a control socket. Run it in a pane
as a known agent (``env ROOST_AGENT=pi python reporter.py --control PATH``). It reads where to
report and which session it is from ``ROOST_REPORTS`` and ``ROOST_SESSION_ID``, as a real
integration would.

Control protocol: one JSON object per control connection, answered with one JSON object.

- ``{"op": "env"}`` -> ``{"pid", "session", "reports"}`` (its pid and the two variables);
- ``{"op": "send", "lines": [TEXT, ...]}`` -> ``{"replies": [...]}``: the lines, each followed by
  a newline, written on one connection; the replies are every line the daemon wrote back
  before it closed the connection or went quiet;
- ``{"op": "send", "lines": [...], "child": true}``: the same, sent by a child process of this
  one (which inherited its environment), to show that only the agent itself is believed.

With ``--send`` it is that child: lines on stdin, replies on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys

QUIET = 2.0  # seconds without a reply after which the daemon has said all it will


def send(lines: list[str]) -> list[str]:
    """Write the lines on one connection to the reports socket; every reply line, in order."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(QUIET)
        conn.connect(os.environ["ROOST_REPORTS"])
        conn.sendall(b"".join(line.encode() + b"\n" for line in lines))
        conn.shutdown(socket.SHUT_WR)
        data = b""
        try:
            while chunk := conn.recv(65536):
                data += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return [json.loads(line) for line in data.decode().splitlines() if line]


def answer(request: dict) -> dict:
    if request.get("op") == "env":
        return {
            "pid": os.getpid(),
            "session": os.environ.get("ROOST_SESSION_ID"),
            "reports": os.environ.get("ROOST_REPORTS"),
        }
    lines = request["lines"]
    if request.get("child"):
        proc = subprocess.run(
            [sys.executable, __file__, "--send"],
            input=json.dumps(lines).encode(),
            capture_output=True,
            check=True,
        )
        return {"replies": json.loads(proc.stdout)}
    return {"replies": send(lines)}


def serve(control: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(f"{control}.tmp")
        listener.listen()
        os.rename(f"{control}.tmp", control)  # it appears only once it takes connections
        while True:
            conn, _ = listener.accept()
            with conn, conn.makefile("rwb") as stream:
                request = json.loads(stream.readline())
                stream.write(json.dumps(answer(request)).encode() + b"\n")
                stream.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--control", help="the unix socket a test drives this agent through")
    parser.add_argument("--send", action="store_true", help="send stdin's lines, print the replies")
    args = parser.parse_args()
    if args.send:
        print(json.dumps(send(json.loads(sys.stdin.read()))))
        return
    serve(args.control)


if __name__ == "__main__":
    main()
