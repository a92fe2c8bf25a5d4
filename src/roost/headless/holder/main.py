"""``rosterd-holder --key KEY --harness H --cwd DIR [--name L] [--policy P] -- ADAPTER [ARGS…]``

Started by the daemon's runner in a session of its own (``start_new_session``), with its output
on /dev/null; it runs until ``_roost/stop``, SIGTERM or the adapter's end. Its socket and state
file are ``holders/KEY.sock`` and ``holders/KEY.json`` in the runtime directory. Exit codes: 0
stopped, 1 the adapter ended by itself (the state file says how), 2 refused to start (a bad
argument, or a live holder with that key).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import socket
import sys

from roost.base import paths
from roost.headless.holder import spawn
from roost.headless.holder.statefile import Session

KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
POLICIES = ("auto", "attention")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rosterd-holder", description="Keep one headless session's ACP adapter."
    )
    parser.add_argument("--key", required=True)
    parser.add_argument("--harness", required=True)
    parser.add_argument("--cwd", required=True)
    parser.add_argument("--name")
    parser.add_argument("--policy", choices=POLICIES, default="attention")
    parser.add_argument("--keep", type=int, default=256, help="notifications kept for replay")
    parser.add_argument("--stderr", help="a file (made 0600) for the adapter's standard error")
    parser.add_argument("adapter", nargs=argparse.REMAINDER)
    return parser


def _alive(path: str) -> bool:
    """Whether a holder answers on ``path`` (a socket left by a dead one does not)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    adapter = args.adapter[1:] if args.adapter[:1] == ["--"] else args.adapter
    if not KEY.fullmatch(args.key):
        parser.exit(2, "rosterd-holder: --key must be 1 to 64 letters, digits, '-' or '_'\n")
    if not adapter:
        parser.exit(2, "rosterd-holder: no adapter command after --\n")
    if not 1 <= args.keep <= 100_000:
        parser.exit(2, "rosterd-holder: --keep must be from 1 to 100000\n")
    paths.holders_dir().mkdir(mode=0o700, exist_ok=True)
    sock = paths.holder_socket(args.key)
    if _alive(str(sock)):
        parser.exit(2, f"rosterd-holder: a holder for {args.key} is running already\n")
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    session = Session(
        args.key, args.harness, args.cwd, adapter, name=args.name, policy=args.policy, stderr=args.stderr
    )
    noted = spawn.hold_signals()
    try:
        popen = spawn.spawn(session)  # first: it starts while the loop's modules load
    except OSError as error:
        print(f"rosterd-holder: {error}", file=sys.stderr)
        return 2
    import asyncio

    from roost.headless.holder.relay import Holder

    holder = Holder(session, sock, paths.holder_state(args.key), popen, keep=args.keep, noted=noted)
    try:
        return asyncio.run(holder.run())
    except OSError as error:  # the socket would not bind
        print(f"rosterd-holder: {error}", file=sys.stderr)
        popen.kill()
        popen.wait()
        return 2
