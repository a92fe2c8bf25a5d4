"""One handle on roost's tmux server: which socket, and how to run a command on it.

roost runs its own server (``-L roost`` by default, never the user's) with its own packaged
config, so the user's ``~/.tmux.conf`` cannot change how panes behave under an agent.

Every tmux call goes through :meth:`Server.run`. They are started with ``os.posix_spawnp``
and read through a pipe rather than by ``subprocess``, whose import alone costs about a bare
interpreter start: the hook, ``screen``, ``read`` and ``status`` make one or two tmux calls
and nothing else that needs it, and ``send`` feeds its text to one. The spawn does what
``subprocess.run`` would (only stdin, stdout and stderr inherited, signals reset, the child
killed if the wait is interrupted); ``subprocess`` is left for where the spawn cannot promise
that.
"""

from __future__ import annotations

import _signal
import os

from roost.base.errors import TmuxError

TYPE_CHECKING = False  # for annotations only: not importing subprocess is the point
if TYPE_CHECKING:
    import subprocess

CONFIG = os.path.join(os.path.dirname(__file__), "roost.tmux.conf")
SEP = "\x1f"
_RESET = (_signal.SIGPIPE, _signal.SIGXFSZ)  # what subprocess's restore_signals puts back


class PaneGone(Exception):
    """There is no such pane on this tmux server any more: it closed, or its program exited
    and left it dead. One class for every reader and writer of a pane (a send, a view), so a
    caller catches one thing whatever noticed it."""


class Server:
    """Where roost's tmux server listens: a socket name (``-L``) or a path (``-S``).

    An immutable value, written out rather than a frozen dataclass: importing ``dataclasses``
    costs the hook, which makes a Server on every event, several milliseconds.
    """

    socket: str

    def __init__(self, socket: str) -> None:
        object.__setattr__(self, "socket", socket)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return self.socket == other.socket if other.__class__ is self.__class__ else NotImplemented

    def __hash__(self) -> int:
        return hash((self.socket,))

    def __repr__(self) -> str:
        return f"Server(socket={self.socket!r})"

    @classmethod
    def from_env(cls) -> Server:
        return cls(os.environ.get("ROOST_SOCKET") or "roost")

    @property
    def kind(self) -> str:
        return "path" if "/" in self.socket else "name"

    def path(self) -> str:
        """The socket's path as tmux makes it, whichever way it was named: a path as it is (its
        links resolved), a name in ``tmux-UID`` under ``$TMUX_TMPDIR`` (else ``/tmp``), resolved
        as tmux resolves that directory. ``roost`` and the path tmux reports for it
        (``#{socket_path}``, what its hooks hand roost) are one socket and give one path."""
        if self.kind == "path":
            return os.path.realpath(self.socket)
        tmpdir = os.environ.get("TMUX_TMPDIR") or ""
        if not os.path.isdir(tmpdir):  # tmux passes over a TMUX_TMPDIR it cannot resolve
            tmpdir = "/tmp"
        return os.path.join(os.path.realpath(tmpdir), f"tmux-{os.getuid()}", self.socket)

    def argv(self, *args: str) -> list[str]:
        """The command line for ``args``: :data:`THEN` ends one tmux command and starts the
        next, and every other argument means only itself (``";"`` too)."""
        flag = "-S" if self.kind == "path" else "-L"
        return ["tmux", flag, self.socket, "-f", CONFIG, *map(literal, args)]

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> Completed | subprocess.CompletedProcess[bytes]:
        """Run one tmux invocation; several commands can be chained with :data:`THEN`, an
        argument of its own (see :meth:`argv`). ``env``: variables the tmux client runs with
        besides :func:`environment`'s (a new pane takes its PATH from the client that opens it)."""
        env = environment(**(env or {}))
        argv = self.argv(*args)
        proc = _spawn(argv, env, input)
        if proc is None:
            import subprocess

            proc = subprocess.run(argv, input=input, capture_output=True, env=env, check=False)
        if check and proc.returncode != 0:
            raise TmuxError(proc.stderr.decode(errors="replace").strip() or "tmux failed")
        return proc

    async def run_async(self, *args: str) -> tuple[int, bytes]:
        """One tmux invocation from the daemon's event loop: its exit status and stdout.

        The daemon's long-lived clients (the screen watcher, the session watcher) use this for
        the one-shot calls beside their control clients, so every tmux the daemon starts gets
        the same environment (:func:`environment`)."""
        import asyncio

        proc = await asyncio.create_subprocess_exec(
            *self.argv(*args),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=environment(),
        )
        out, _ = await proc.communicate()
        return proc.returncode or 0, out

    def out(self, *args: str, env: dict[str, str] | None = None) -> str:
        return self.run(*args, env=env).stdout.decode(errors="replace")

    def running(self) -> bool:
        return self.run("list-sessions", "-F", "x", check=False).returncode == 0

    def current_pane(self) -> str | None:
        """This process's own pane, when it runs inside a pane of *this* server."""
        pane = os.environ.get("TMUX_PANE")
        tmux = os.environ.get("TMUX", "")
        if not pane or not tmux:
            return None
        if self.kind == "path":
            if os.path.realpath(tmux.split(",")[0]) != os.path.realpath(self.socket):
                return None
        elif os.path.basename(tmux.split(",")[0]) != self.socket:
            return None
        return pane


class _Then(str):
    """The one ``";"`` that separates two tmux commands; see :data:`THEN`."""


THEN = _Then(";")
"""Ends one tmux command and starts the next in the same invocation. It is a type of its own,
not the text ``";"``: a value that happens to be ``";"`` (a window name) must mean only itself."""


def literal(arg: str) -> str:
    """``arg`` as tmux's command line must spell it to mean only itself: tmux takes an
    argument that ends in ``;`` as the end of a command (``new-window -n semi;`` runs
    ``new-window -n semi``, then the next word as a command), and reads a trailing ``\\;`` as
    one literal ``;``. Only :data:`THEN` is left as it is: it is the separator."""
    if isinstance(arg, _Then):
        return ";"
    return arg[:-1] + "\\;" if arg.endswith(";") else arg


def environment(**extra: str) -> dict[str, str]:
    """The environment every tmux roost starts runs with: this process's, less ``TMUX``.

    A TMUX variable from another server would make some commands act on that one."""
    env = dict(os.environ)
    env.pop("TMUX", None)
    env.update(extra)
    return env


class Completed:
    """A finished tmux call: the fields of ``subprocess.CompletedProcess`` that callers read."""

    def __init__(self, args: list[str], returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


def _inherited() -> list[int] | None:
    """Descriptors besides 0, 1 and 2 a child would inherit, for the spawn to close as
    ``close_fds`` does (Python opens none; a parent may have passed some); None when unknown."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return None
    found = []
    for name in names:
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


def _spawn(argv: list[str], env: dict[str, str], input: bytes | None = None) -> Completed | None:
    """``argv`` run with stdout and stderr captured, as ``subprocess.run`` would run it; None
    when that cannot be promised: no /proc or memory files, or a descriptor landing on 0, 1
    or 2 (this process runs with one of them closed).

    stdout comes through a pipe, read to its end; stderr goes to a memory file, read once
    tmux has exited, so there is one stream to wait on and nothing to poll (``select``).
    ``input`` is written to a memory file first and given as stdin, which tmux reads to its
    end as it would a pipe's, with nothing to write while reading.
    As for every program glibc's ``posix_spawn`` starts, its own two signals (thread
    cancellation, set*id) stay ignored in the child; tmux uses neither.
    """
    inherited = _inherited()
    if inherited is None or not hasattr(os, "memfd_create"):
        return None
    out_r, out_w = os.pipe()
    err = os.memfd_create("tmux-stderr")
    given = [] if input is None else [os.memfd_create("tmux-stdin")]
    if min(out_r, out_w, err, *given) <= 2:
        for fd in (out_r, out_w, err, *given):
            os.close(fd)
        return None
    try:
        actions = [(os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err, 2)]
        if input is not None:
            _fill(given[0], input)
            actions.append((os.POSIX_SPAWN_DUP2, given[0], 0))
        actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in inherited]
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsigdef=_RESET)
    except BaseException:
        os.close(out_r)
        os.close(err)
        raise
    finally:
        os.close(out_w)
        for fd in given:
            os.close(fd)
    chunks: list[bytes] = []
    try:
        while data := os.read(out_r, 65536):
            chunks.append(data)
        status = _reap(pid)
        stderr = os.pread(err, os.fstat(err).st_size, 0)
    except BaseException:  # interrupted (Ctrl-C, a watchdog): the child goes with the wait
        import contextlib

        with contextlib.suppress(ProcessLookupError):  # reaped already, where SIGCHLD is ignored
            os.kill(pid, _signal.SIGKILL)
        _reap(pid)
        raise
    finally:
        os.close(out_r)
        os.close(err)
    return Completed(argv, status, b"".join(chunks), stderr)


def _fill(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the memory file ``fd`` and rewind it, for a child to read."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)


def _reap(pid: int) -> int:
    """The child's exit code (negative for a signal); 0 when it was reaped elsewhere, as
    ``subprocess`` has it."""
    try:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except ChildProcessError:
        return 0


def fields(line: str, count: int) -> list[str]:
    """Split one ``SEP``-joined format line, padding short lines so callers can unpack."""
    parts = line.split(SEP)
    return parts + [""] * (count - len(parts))
