"""The layout record: what roost's tmux server held, kept so ``roost restore`` can bring it back.

One JSON file per tmux socket under the state directory (``layout/``, mode 0600, written
whole through :mod:`roost.base.files`): the server's sessions, windows and panes, their names,
sizes and working directories, the command each pane was started with, and for a pane an
agent runs in, the agent's harness, ``session_id``, and what
:mod:`roost.actions.agentstart` reads of its process: its command line, the environment
variables its manifest says matter (``resume_env``) and its working directory.

It is written as the layout changes, never on a timer, and never by a hot path: tmux's own
hooks (``roost.tmux.conf``) and the few state changes tmux fires no hook for (a pane named, an
agent identified) ask the tmux server to run ``roost _layout`` in the background
(:data:`REWRITE`). Each run reads the whole server in one ``list-panes`` and writes the file;
runs that pile up coalesce (:func:`snapshot`), so a burst of changes costs one or two reads.

A record belongs to one server incarnation (``start_time-pid``). When a new server on the
same socket writes its first record, the dead server's record becomes the *previous* one
(``.previous.json``), so starting a fresh ``roost`` after a reboot never costs the layout a
restore would bring back. Secrets are never written: ``resume_env`` names endpoints, models
and config directories, never keys, which a restored pane takes from the environment it
starts in, as any new pane does.
"""

from __future__ import annotations

import os

from roost.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from roost.pane.tmux.server import Server

    Describe = Callable[[str, int], dict]
    """(harness, the pane's first pid) -> what its agent was started with: ``argv``, ``env``,
    ``cwd``, each left out when unknown."""

SCHEMA = 1
HOLD = "@roost-layout-hold"
"""Set on the server while ``roost restore`` builds: no rewrite is started meanwhile (each would
start a Python only to find the lock held), one is when it is done (:func:`release`)."""
REWRITE = (
    "if-shell",
    "-F",
    f"#{{?{HOLD},,1}}",
    "run-shell -b 'ROOST_SOCKET=#{q:socket_path} #{q:@roost-bin} _layout >/dev/null 2>&1 || true'",
)
"""The tmux command that rewrites the record in the background; the packaged config's hooks say
the same. Silent and always successful: tmux shows a failing run-shell's words in the pane, over
whatever program runs there (a hook that fires before the server knows ``@roost-bin`` would)."""
MAX_BYTES = 4 * 1024 * 1024
"""A record larger than this is not one roost wrote: refused unread."""
LIMITS = {"sessions": 200, "windows": 500, "panes": 2000}
"""The most a record may hold of each; a tmux server of people's making holds far less."""

_FIELDS = (
    "session_name",
    "window_index",
    "window_name",
    "automatic-rename",
    "window_layout",
    "window_width",
    "window_height",
    "window_active",
    "pane_index",
    "pane_id",
    "pane_pid",
    "pane_active",
    "pane_current_path",
    "pane_current_command",
    "pane_start_command",
    "@roost-name",
    "@roost-harness",
    "@roost-session-id",
    "@roost-cwd",
    "@roost-worktree",
    "@roost-branch",
)


def _key(socket: str) -> str:
    """A file name for a socket: a hash of its path. tmux's hooks name the socket by its path
    (``#{socket_path}``) when they rewrite the record, while a person's ``roost restore`` names
    it as ``ROOST_SOCKET`` does, by default the name ``roost``: both must find one record."""
    import hashlib

    from roost.pane.tmux.server import Server

    return "sock-" + hashlib.sha256(Server(socket).path().encode()).hexdigest()[:16]


def record_path(socket: str) -> str:
    return os.path.join(str(paths.state_home()), "layout", f"{_key(socket)}.json")


def previous_path(socket: str) -> str:
    return os.path.join(str(paths.state_home()), "layout", f"{_key(socket)}.previous.json")


def lock_path(socket: str) -> str:
    return os.path.join(str(paths.state_home()), "layout", f".{_key(socket)}.lock")


class Locked:
    """The record's write lock (``flock``), held by a snapshot while it reads and writes and by a
    restore while it builds, so a snapshot of a half-built layout never lands in between."""

    def __init__(self, socket: str, *, wait: bool = True, name: str | None = None) -> None:
        import fcntl

        path = name or lock_path(socket)
        paths.private_mkdir(os.path.dirname(path))
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(self.fd)
            raise

    def release(self) -> None:
        os.close(self.fd)


def snapshot(socket: str, describe: Describe) -> bool:
    """Write the record of the server on ``socket`` as it is now; False when none runs (the
    record of a server that has gone is what restore needs: it is kept). ``describe`` says what
    a pane's agent was started with (this layer knows nothing of agents: the caller does).

    Runs that pile up coalesce: a run that finds another already waiting for the write lock
    leaves, since that one reads the server after this run's change happened.
    """
    try:
        waiting = Locked(socket, wait=False, name=lock_path(socket) + ".next")
    except BlockingIOError:
        return False
    try:
        held = Locked(socket)
    finally:
        waiting.release()
    try:
        return _write(socket, describe)
    finally:
        held.release()


def _write(socket: str, describe: Describe) -> bool:
    from roost.pane.tmux.server import SEP, Server

    server = Server(socket)
    fmt = SEP.join(["#{start_time}-#{pid}", *(f"#{{{name}}}" for name in _FIELDS)])
    listed = server.run("list-panes", "-a", "-F", fmt, check=False)
    if listed.returncode != 0:
        return False
    lines = listed.stdout.decode(errors="replace").splitlines()
    if not lines:
        return False
    server_key = lines[0].split(SEP, 1)[0]

    from roost.base import files

    target = record_path(socket)
    old = _record(target)
    if old is not None and old["server"] != server_key:
        # Copied, not moved: a reader of the record never finds it missing in between.
        files.replace(previous_path(socket), _dumps(old))
        old = None
    sessions = _sessions(lines, describe)
    if old is not None:
        _keep_started(sessions, old)
    document = {"schema": SCHEMA, "socket": socket, "server": server_key, "sessions": sessions}
    files.replace(target, _dumps(document))
    return True


def _dumps(document: dict) -> str:
    import json

    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def _record(path: str) -> dict | None:
    """The record at ``path``, or None when there is none to keep (no file, or one that is not a
    record)."""
    try:
        return read(path)
    except (OSError, ValueError):
        return None


def _agents(sessions: list[dict]) -> list[dict]:
    return [p["agent"] for s in sessions for w in s["windows"] for p in w["panes"] if p["agent"]]


def _keep_started(sessions: list[dict], old: dict) -> None:
    """An agent this run could not read (it is exiting, or its server is going down around it)
    keeps what the last record of the same server read of it: the same conversation was started
    the same way."""
    known = {(a["harness"], a["session_id"]): a for a in _agents(old["sessions"]) if a["argv"]}
    for agent in _agents(sessions):
        before = known.get((agent["harness"], agent["session_id"]))
        if agent["argv"] is None and before is not None:
            agent.update(argv=before["argv"], env=before["env"], cwd=before["cwd"])


def _sessions(lines: list[str], describe: Describe) -> list[dict]:
    from roost.pane.tmux.server import SEP

    sessions: dict[str, dict] = {}
    windows: dict[tuple[str, str], dict] = {}
    for line in lines:
        values = dict(zip(_FIELDS, line.split(SEP)[1:], strict=False))
        name = values.get("session_name", "")
        session = sessions.setdefault(name, {"name": name, "windows": []})
        where = (name, values.get("window_index", ""))
        window = windows.get(where)
        if window is None:
            window = {
                "index": _int(values.get("window_index")),
                "name": values.get("window_name", ""),
                "named": values.get("automatic-rename") != "1",
                "layout": values.get("window_layout", ""),
                "width": _int(values.get("window_width")),
                "height": _int(values.get("window_height")),
                "active": values.get("window_active") == "1",
                "panes": [],
            }
            windows[where] = window
            session["windows"].append(window)
        window["panes"].append(_pane(values, describe))
    return list(sessions.values())


def _pane(values: dict[str, str], describe: Describe) -> dict:
    harness = values.get("@roost-harness") or None
    session_id = values.get("@roost-session-id") or None
    pane = {
        "index": _int(values.get("pane_index")),
        "active": values.get("pane_active") == "1",
        "name": values.get("@roost-name") or None,
        "cwd": values.get("pane_current_path") or None,
        "command": _unquoted(values.get("pane_start_command") or "") or None,
        "running": values.get("pane_current_command") or None,
        "worktree": values.get("@roost-worktree") or None,
        "branch": values.get("@roost-branch") or None,
        "agent": None,
    }
    if harness and session_id:
        agent = {"harness": harness, "session_id": session_id, "argv": None, "env": {}}
        agent["cwd"] = values.get("@roost-cwd") or None
        pid = _int(values.get("pane_pid"))
        pane["agent"] = {**agent, **describe(harness, pid)} if pid else agent
    return pane


def _unquoted(command: str) -> str:
    """A pane's start command as it was given: tmux shows one of several words in quotes."""
    if len(command) > 1 and command[0] == command[-1] == '"':
        return command[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return command


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


class Corrupt(ValueError):
    """A record that is not one roost wrote: the message names the file and what is wrong."""


def read(path: str) -> dict | None:
    """The record at ``path``, checked field by field; None when there is none. A file that is
    not a well-formed record raises :class:`Corrupt`, whatever is wrong with it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise Corrupt(f"{path}: {error.strerror or error}") from error
    try:
        info = os.fstat(fd)
        problem = _unsafe(path, info)
        if problem:
            raise Corrupt(problem)
        raw = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise Corrupt(f"{path}: larger than {MAX_BYTES} bytes")
    import json

    try:
        document = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise Corrupt(f"{path}: not JSON ({error})") from None
    from roost.pane.state.layoutcheck import check

    problem = check(document)
    if problem:
        raise Corrupt(f"{path}: {problem}")
    return document


def _unsafe(path: str, info: os.stat_result) -> str | None:
    import stat

    if not stat.S_ISREG(info.st_mode):
        return f"{path}: not a regular file"
    from roost.base import files

    return files.unsafe(path, info)


def hold(server: Server) -> None:
    """No rewrite while a restore builds (:data:`HOLD`)."""
    server.run("set-option", "-g", HOLD, "1", check=False)


def release(server: Server) -> None:
    """Rewrites start again, and one runs now, for what was built meanwhile."""
    from roost.pane.tmux.server import THEN

    server.run("set-option", "-gu", HOLD, THEN, *REWRITE, check=False)


def mark_restored(path: str, document: dict, into: str | None) -> None:
    """Say in the record that it was restored (into which server), so it never is again."""
    import time

    from roost.base import files

    files.replace(path, _dumps({**document, "restored": {"at": int(time.time()), "into": into}}))
