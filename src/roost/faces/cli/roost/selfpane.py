"""Verbs an agent runs about its own pane: ``whoami``, ``state``, ``reply``, ``identify``.

Outside roost (no pane of this server) ``state``, ``reply`` and ``identify`` do nothing and
exit 0, so an adapter can call them unconditionally; ``whoami`` exits 1.
"""

from __future__ import annotations

import sys

from roost.base.errors import Conflict, InvalidValue, UsageError
from roost.base.text import utf8, well_formed
from roost.faces.cli.output import document
from roost.pane.state import panestate
from roost.pane.state import words as w
from roost.pane.tmux.server import Server

SESSION_ID = r"[A-Za-z0-9._:-]{1,128}"
HARNESS = r"[a-z0-9_-]{1,32}"


def _own_pane(server: Server):
    pane_id = server.current_pane()
    return panestate.read(server, pane_id) if pane_id else None


def whoami(args: list[str]) -> int:
    as_json = args == ["--json"]
    if args and not as_json:
        raise UsageError("usage: roost whoami [--json]")
    server = Server.from_env()
    pane_id = server.current_pane()
    if not pane_id or panestate.read(server, pane_id) is None:
        raise Conflict("not inside a roost pane")
    if as_json:
        document("whoami", pane=pane_id)
    else:
        print(pane_id)
    return 0


def state(args: list[str]) -> int:
    if not args:
        raise UsageError("usage: roost state working|blocked|done|idle|error [--json]")
    requested = args[0]
    as_json = "--json" in args[1:]
    server = Server.from_env()
    pane = _own_pane(server)
    recorded_state = None
    if pane is not None:
        word = w.normalise(requested)
        reason = " ".join(a for a in args[1:] if a != "--json")
        if word == w.DONE:
            panestate.finish_turn(server, pane)
        elif word == w.ERROR:
            panestate.fail_turn(server, pane, reason or "the agent reported an error")
        else:
            panestate.set_state(server, pane, word, reason)
        after = panestate.read(server, pane.id)
        recorded_state = after.opt(w.STATE) if after else None
        recorded = recorded_state == word
    else:
        recorded = False
    if as_json:
        document(
            "state",
            requested=well_formed(requested),
            state=recorded_state if recorded else None,
            pane=pane.id if pane else None,
            recorded=recorded,
        )
    return 0


def reply(args: list[str]) -> int:
    server = Server.from_env()
    pane = _own_pane(server)
    if pane is not None:
        # stdin is read only inside roost: outside, a terminal on stdin would hang a no-op.
        # An argument that is not UTF-8 is kept as the bytes it was, as stdin is: read --json
        # then shows U+FFFD and says lossy, and plain read gives the bytes back.
        text = " ".join(args) if args and args != ["-"] else None
        data = text.encode(errors="surrogateescape") if text is not None else sys.stdin.buffer.read()
        panestate.record_reply(server, pane, data)
    return 0


def _refuse(message: str) -> InvalidValue:
    return InvalidValue(message)


def _check_path(flag: str, value: str) -> None:
    """A path is kept exactly or refused: one that is not UTF-8 could only be kept changed."""
    if not utf8(value):
        raise _refuse(f"{flag} must be valid UTF-8")
    if not value.startswith("/") or "\n" in value or "\r" in value or len(value.encode()) > 1024:
        raise _refuse(f"{flag} must be an absolute path on one line, at most 1024 bytes")


def identify(args: list[str]) -> int:
    values: dict[str, str] = {}
    it = iter(args)
    for flag in it:
        if flag not in ("--session", "--cwd", "--harness", "--transcript"):
            raise _refuse(f"unknown option '{flag}'")
        value = next(it, None)
        if value is None:
            raise _refuse(f"{flag} needs a value")
        values[flag] = value
    missing = [f for f in ("--session", "--cwd", "--harness") if f not in values]
    if missing:
        raise _refuse(f"missing {', '.join(missing)}")
    import re  # only identify's checks need it: state and reply, run on an agent's every turn, do not

    if not re.fullmatch(SESSION_ID, values["--session"]):
        raise _refuse("--session must be 1-128 letters, digits, '.', '_', ':' or '-'")
    if not re.fullmatch(HARNESS, values["--harness"]):
        raise _refuse("--harness must be 1-32 lower-case letters, digits, '_' or '-'")
    _check_path("--cwd", values["--cwd"])
    if "--transcript" in values:
        _check_path("--transcript", values["--transcript"])
    server = Server.from_env()
    pane = _own_pane(server)
    if pane is not None:
        panestate.identify(
            server,
            pane,
            values["--session"],
            values["--cwd"],
            values["--harness"],
            values.get("--transcript"),
        )
    return 0


def seen(args: list[str]) -> int:
    """Internal: the focus hook calls this when a person looks at a pane."""
    if len(args) == 1:
        server = Server.from_env()
        pane = panestate.read(server, args[0])
        if pane is not None:
            panestate.mark_seen(server, pane)
    return 0


def run(verb: str, args: list[str]) -> int:
    handler = {
        "whoami": whoami,
        "state": state,
        "reply": reply,
        "identify": identify,
        "_seen": seen,
    }
    return handler[verb](args)
