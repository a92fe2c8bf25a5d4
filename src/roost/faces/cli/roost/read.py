"""``roost read``: the reply an agent recorded for its turn, or, saying so, its screen.

A reply is what the agent said, kept whole; the screen is what its pane draws, furniture
and all. ``read`` prefers the first, falls back to the second only with a notice on stderr,
and never serves a reply as fresher than it is: a pane that is busy or errored gets a
notice that the reply belongs to an earlier turn.

Reading a kept reply is one tmux call and one file, so the verb imports only what that needs:
the renderer, the screen capture and ``re`` are imported by the paths that use them
(``bench/hotpaths.py`` measures why: each costs more than the tmux call does).
"""

from __future__ import annotations

import sys

from roost.base.errors import NotRecorded, TargetGone, UsageError
from roost.faces.cli.output import decode, document, notice
from roost.pane.state import panestate, replies
from roost.pane.state import words as w
from roost.pane.tmux.panes import Pane, server_key
from roost.pane.tmux.server import Server, TmuxError
from roost.pane.tmux.targets import resolve

USAGE = "usage: roost read [--render|-r] [--json] [--turn N] TARGET [LINES]"
DEFAULT_LINES = 40

# tmux 3.4 and 3.5a store control bytes, DEL and invalid UTF-8 in an option as escape text.
_REWRITING_TMUX = ("3.4", "3.5", "3.5a")
_TMUX_ESCAPE = r"\\(?:[0-7]{3}|[0abtnvfr])"


def has_tmux_escapes(text: str) -> bool:
    """Whether ``text`` holds escape text such a tmux writes (``\\001``, ``\\r``, ``\\377``)."""
    import re

    return re.search(_TMUX_ESCAPE, text) is not None


class Request:
    """The command line, parsed."""

    def __init__(self, target: str, lines: int, render: bool, as_json: bool, turn: int | None) -> None:
        self.target = target
        self.lines = lines
        self.render = render
        self.as_json = as_json
        self.turn = turn


class Reply:
    """A recorded reply; ``rewritten`` when tmux may already have changed its bytes."""

    def __init__(self, data: bytes, turn: int | None, rewritten: bool = False) -> None:
        self.data = data
        self.turn = turn
        self.rewritten = rewritten


def _positive(value: str) -> int | None:
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else None


def parse(args: list[str]) -> Request:
    """Flags go in front of the target, and only there: a flag later is a caller's mistake."""
    rest = list(args)
    rendered = as_json = False
    turn: int | None = None
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag in ("--render", "-r"):
            rendered = True
        elif flag == "--json":
            as_json = True
        elif flag == "--turn":
            if turn is not None:
                raise UsageError(f"{USAGE} (--turn given twice)")
            if rest and rest[0] == "":
                from roost.faces.cli.roost.turns import empty

                raise UsageError(f"{USAGE} ({empty('leave out --turn to read its last reply')})")
            value = rest.pop(0) if rest else ""
            turn = _positive(value)
            if turn is None:
                raise UsageError(f"{USAGE} (--turn needs a positive whole number, not '{value}')")
        else:
            raise UsageError(f"{USAGE} (unknown option '{flag}')")
    if not rest or len(rest) > 2:
        raise UsageError(USAGE)
    lines = DEFAULT_LINES
    if len(rest) == 2:
        if rest[1].startswith("-"):
            raise UsageError(f"{USAGE} (flags go before the target; '{rest[1]}' came after it)")
        count = _positive(rest[1])
        if count is None:
            raise UsageError(f"{USAGE} (LINES must be a positive whole number, not '{rest[1]}')")
        lines = count
    if as_json and rendered:
        raise UsageError(f"{USAGE} (--json is for programs and --render for people: pick one)")
    return Request(target=rest[0], lines=lines, render=rendered, as_json=as_json, turn=turn)


def agent_pane(panes: list[Pane]) -> Pane:
    """For a window: its agent pane (the active one if several), else its active pane."""
    agents = [p for p in panes if p.opt(w.STATE)] or panes
    return next((p for p in agents if p.active), agents[0])


def _rewrites_options(server: Server) -> bool:
    try:
        version = server.out("display-message", "-p", "#{version}").strip()
    except TmuxError:
        return False
    return version in _REWRITING_TMUX


def _option_reply(server: Server, pane: Pane) -> Reply | None:
    """The reply kept in the pane option, used when replies are not kept in files."""
    try:
        raw = server.run("show-options", "-p", "-q", "-v", "-t", pane.id, w.REPLY).stdout
    except TmuxError:
        return None
    data = raw[:-1] if raw.endswith(b"\n") else raw
    if not data:
        return None
    text = data.decode(errors="replace")
    rewritten = has_tmux_escapes(text) and _rewrites_options(server)
    return Reply(data, None, rewritten)


def current_reply(server: Server, pane: Pane) -> Reply | None:
    """The reply that is current on the pane, or None when its last turn recorded none.

    Kept turn 0 is a reply given outside any numbered turn: served, with no turn number.
    """
    if not panestate.recording():
        return _option_reply(server, pane)
    turn = w.to_int(pane.opt(w.REPLY_TURN))
    if turn is None:
        return None
    data = replies.reply(pane.server_key, pane.id, turn)
    return Reply(data, turn or None) if data is not None else None


def turn_reply(request: Request, pane: Pane, turn: int) -> Reply:
    """``--turn N``: that kept turn's reply, or a clear refusal when there is none."""
    if not panestate.recording():
        raise NotRecorded(
            f"replies are not recorded (ROOST_RECORD_DIR is empty), so there is no turn {turn} "
            f"to read on '{request.target}'"
        )
    data = replies.reply(pane.server_key, pane.id, turn)
    if data is None:
        raise NotRecorded(f"no kept reply for turn {turn} of '{request.target}' ({pane.id})")
    return Reply(data, turn)


def _stale(request: Request, state: str | None, reason: str | None) -> bool:
    """Say on stderr when the reply predates the pane's current turn; True when it does."""
    if state not in w.BUSY and state != w.ERROR:
        return False
    if state in w.BUSY:
        notice("read", f"'{request.target}' {w.BEING[state]} — this reply is from an earlier turn.")
    else:
        why = f": {reason}" if reason else ""
        notice(
            "read",
            f"'{request.target}' is in error state{why} — that turn published no reply, "
            "so this one is from an earlier turn.",
        )
    return True


def _write(data: bytes) -> None:
    """The reply as it was kept, byte for byte: nothing added, not even a last newline."""
    out = sys.stdout.buffer
    out.write(data)
    out.flush()


def _write_lines(data: bytes) -> None:
    """What is printed for a person (a render) or from a screen: it ends a line, so the shell's
    prompt never starts in the middle of the last one."""
    _write(data if not data or data.endswith(b"\n") else data + b"\n")


def _print_reply(request: Request, reply: Reply) -> None:
    if not request.render:
        _write(reply.data)
        return
    from roost.base import markdown

    rendered = markdown.render(reply.data)
    if rendered.output is None:
        notice("read", f"--render: {rendered.problem}; printing the reply unrendered.")
        _write_lines(reply.data)
    else:
        _write_lines(rendered.output)


def _fallback(server: Server, request: Request, pane: Pane, state: str | None, reason: str | None) -> bytes:
    from roost.pane.tmux import capture

    data = capture.last_lines(capture.capture(server, pane.id, dead=pane.dead), request.lines)
    notice("read", f"no recorded reply for '{request.target}' — showing the pane's screen instead.")
    if state == w.ERROR:
        notice("read", f"'{request.target}' is in error state" + (f": {reason}" if reason else "."))
    if request.render:
        notice(
            "read",
            "--render: the screen is not rendered — a markdown renderer deletes characters "
            "from terminal output, so it is printed as it is.",
        )
    return data


def _document(
    request: Request,
    pane_id: str,
    key: str,
    state: str | None,
    reason: str | None,
    source: str,
    data: bytes,
    *,
    turn: int | None = None,
    stale: bool = False,
    rewritten: bool = False,
) -> None:
    text, lossy = decode(data)
    document(
        "read",
        target=request.target,
        pane=pane_id,
        source=source,
        state=state,
        stale=stale,
        error_reason=reason,
        turn=turn,
        text=text.rstrip("\n"),
        lossy=lossy or rewritten,
        sent_by=replies.sender(key, pane_id, turn) if turn is not None else None,
    )


def _closed_pane(server: Server, request: Request) -> int:
    """A ``%N`` that has closed still has its kept replies: ``close`` deletes none of them."""
    key = server_key(server) if request.target.startswith("%") else None
    turn = request.turn or (replies.current(key, request.target) if key else None)
    data = replies.reply(key, request.target, turn) if key and turn is not None else None
    if data is None:
        raise TargetGone(f"can't find pane '{request.target}'")
    assert key is not None
    if request.as_json:
        _document(request, request.target, key, None, None, "reply", data, turn=turn or None)
    else:
        _print_reply(request, Reply(data, turn or None))
    return 0


def run(verb: str, args: list[str]) -> int:
    request = parse(args)
    server = Server.from_env()
    try:
        resolved = resolve(server, request.target, w.PANE_OPTIONS)
    except TargetGone:
        return _closed_pane(server, request)
    pane = agent_pane(resolved.panes)
    panestate.clear_if_declined(server, pane)
    state = pane.opt(w.STATE)
    reason = pane.opt(w.REASON) if state == w.ERROR else None
    if request.turn is not None:
        reply = turn_reply(request, pane, request.turn)
    else:
        reply = current_reply(server, pane)
    if reply is None:
        data = _fallback(server, request, pane, state, reason)
        if request.as_json:
            _document(request, pane.id, pane.server_key, state, reason, "screen", data)
        else:
            _write_lines(data)
        return 0
    stale = _stale(request, state, reason)
    if request.as_json:
        _document(
            request,
            pane.id,
            pane.server_key,
            state,
            reason,
            "reply",
            reply.data,
            turn=reply.turn,
            stale=stale,
            rewritten=reply.rewritten,
        )
    else:
        _print_reply(request, reply)
    return 0
