"""Reading panes and sessions in one tmux round trip each.

A listing asks for tmux's own fields plus whichever ``@options`` the caller names, so the
state layer can read every badge on the server with a single ``list-panes -a``.
"""

from __future__ import annotations

import os

from roost.pane.tmux.server import SEP, THEN, Server, TmuxError, environment, fields

_BASE = (
    *(
        f"#{{{name}}}"
        for name in (
            "pane_id",
            "pane_pid",
            "pane_dead",
            "pane_current_command",
            "pane_width",
            "pane_active",
            "pane_index",
            "window_id",
            "window_index",
            "window_name",
            "window_panes",
            "session_name",
            "session_windows",
            "pane_tty",
        )
    ),
    "#{start_time}-#{pid}",
)


class _Value:
    """Equality and repr from the attributes, as a dataclass would give them.

    Pane and Session are written out rather than dataclasses: importing ``dataclasses``
    costs several milliseconds, which the hook (one pane read per event) cannot spare.
    """

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if other.__class__ is self.__class__ else NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


class Pane(_Value):
    def __init__(
        self,
        id: str,
        pid: int,
        dead: bool,
        command: str,
        width: int,
        active: bool,
        index: int,
        window_id: str,
        window_index: int,
        window_name: str,
        window_panes: int,
        session: str,
        session_windows: int,
        tty: str,
        server_key: str,
        options: dict[str, str] | None = None,
    ) -> None:
        self.id = id
        self.pid = pid
        self.dead = dead
        self.command = command
        self.width = width
        self.active = active
        self.index = index
        self.window_id = window_id
        self.window_index = window_index
        self.window_name = window_name
        self.window_panes = window_panes
        self.session = session
        self.session_windows = session_windows
        self.tty = tty
        self.server_key = server_key
        self.options: dict[str, str] = {} if options is None else options

    def opt(self, name: str) -> str | None:
        """A user option's value, or None when unset or empty."""
        return self.options.get(name) or None


def _format(options: tuple[str, ...]) -> str:
    return SEP.join([*_BASE, *(f"#{{{o}}}" for o in options)])


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0


def _parse(line: str, options: tuple[str, ...]) -> Pane:
    values = fields(line, len(_BASE) + len(options))
    base, extra = values[: len(_BASE)], values[len(_BASE) :]
    return Pane(
        id=base[0],
        pid=_int(base[1]),
        dead=base[2] == "1",
        command=base[3],
        width=_int(base[4]),
        active=base[5] == "1",
        index=_int(base[6]),
        window_id=base[7],
        window_index=_int(base[8]),
        window_name=base[9],
        window_panes=_int(base[10]),
        session=base[11],
        session_windows=_int(base[12]),
        tty=base[13],
        server_key=base[14],
        options=dict(zip(options, extra, strict=False)),
    )


def list_panes(server: Server, options: tuple[str, ...] = (), target: str | None = None) -> list[Pane]:
    """Every pane on the server, or those of one target (a window or session)."""
    scope = ["-t", target] if target else ["-a"]
    if target and target.startswith("%"):
        scope = ["-t", target]
    try:
        out = server.out("list-panes", *scope, "-F", _format(options))
    except TmuxError:
        return []
    return [_parse(line, options) for line in out.splitlines() if line]


async def list_all_within(server: Server, seconds: float, options: tuple[str, ...] = ()) -> list[Pane]:
    """Every pane on the server, from the event loop; TimeoutError when tmux has not answered
    within ``seconds`` (a stopped server accepts the connection, then never replies), and the
    tmux client that was waiting is killed rather than left behind.

    The output goes to a memory file, not a pipe: a tmux client hands its stdout to the server,
    so a pipe would not end while a stopped server holds it, even after the client is gone."""
    import asyncio  # here, not at the top: the hook reads panes too and must not pay for asyncio

    with open(os.memfd_create("tmux-list-panes"), "w+b") as out:
        proc = await asyncio.create_subprocess_exec(
            *server.argv("list-panes", "-a", "-F", _format(options)),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.DEVNULL,
            env=environment(),
        )
        try:
            status = await asyncio.wait_for(proc.wait(), seconds)
        except BaseException:
            if proc.returncode is None:
                proc.kill()
                await asyncio.shield(proc.wait())
            raise
        text = os.pread(out.fileno(), os.fstat(out.fileno()).st_size, 0).decode(errors="replace")
    if status:
        return []
    return [_parse(line, options) for line in text.splitlines() if line]


def pane(server: Server, pane_id: str, options: tuple[str, ...] = ()) -> Pane | None:
    """One pane by its ``%N``, or None when it is gone."""
    try:
        out = server.out("display-message", "-p", "-t", pane_id, _format(options))
    except TmuxError:
        return None
    line = out.splitlines()[0] if out else ""
    found = _parse(line, options)
    return found if found.id == pane_id else None


DAEMON_TERM = "roost-daemon"
"""The terminal name the daemon's own control clients give tmux (``ControlClient.TERM``)."""
CLIENTS_FORMAT = SEP.join(["#{client_session}", "#{client_termname}"])
"""One ``list-clients`` line: which session a client is attached to, and its terminal."""


def people(lines: list[str]) -> dict[str, int]:
    """Clients per session, from ``list-clients -F CLIENTS_FORMAT`` lines, leaving out the
    daemon's watchers: tmux's ``session_attached`` counts them too, so it is never 0 while
    rosterd runs. A person in ``tmux attach`` counts, and so does one viewing the session's
    pane in the web app."""
    counts: dict[str, int] = {}
    for line in lines:
        session, term = fields(line, 2)[:2]
        if session and term != DAEMON_TERM:
            counts[session] = counts.get(session, 0) + 1
    return counts


class Session(_Value):
    def __init__(self, name: str, windows: int, attached: int) -> None:
        self.name = name
        self.windows = windows
        self.attached = attached


def list_sessions(server: Server) -> list[Session]:
    try:
        out = server.out(
            "list-sessions",
            "-F",
            SEP.join(["s", "#{session_name}", "#{session_windows}"]),
            THEN,
            "list-clients",
            "-F",
            SEP.join(["c", CLIENTS_FORMAT]),
        )
    except TmuxError:
        return []
    lines = out.splitlines()
    looking = people([line[2:] for line in lines if line.startswith("c" + SEP)])
    result = []
    for line in lines:
        if line.startswith("s" + SEP):
            name, windows = fields(line, 3)[1:3]
            result.append(Session(name, _int(windows), looking.get(name, 0)))
    return result


def server_key(server: Server) -> str | None:
    """The running server's boot key ``<start_time>-<pid>``: unlike ``%N``, never reused."""
    try:
        return server.out("display-message", "-p", "#{start_time}-#{pid}").strip() or None
    except TmuxError:
        return None
