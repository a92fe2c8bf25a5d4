"""One handle on roost's tmux server: which socket, and how to run a command on it.

roost runs its own server (``-L roost`` by default, never the user's) with its own packaged
config, so the user's ``~/.tmux.conf`` cannot change how panes behave under an agent.
"""

from __future__ import annotations

import os
import subprocess

CONFIG = os.path.join(os.path.dirname(__file__), "roost.tmux.conf")
SEP = "\x1f"


class TmuxError(Exception):
    """tmux refused a command; the message is tmux's own stderr."""


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

    def argv(self, *args: str) -> list[str]:
        flag = "-S" if self.kind == "path" else "-L"
        return ["tmux", flag, self.socket, "-f", CONFIG, *args]

    def run(
        self, *args: str, input: bytes | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[bytes]:
        """Run one tmux invocation; several commands can be chained with ``";"``."""
        env = dict(os.environ)
        # A TMUX variable from another server would make some commands act on that one.
        env.pop("TMUX", None)
        proc = subprocess.run(self.argv(*args), input=input, capture_output=True, env=env, check=False)
        if check and proc.returncode != 0:
            raise TmuxError(proc.stderr.decode(errors="replace").strip() or "tmux failed")
        return proc

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.decode(errors="replace")

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


def fields(line: str, count: int) -> list[str]:
    """Split one ``SEP``-joined format line, padding short lines so callers can unpack."""
    parts = line.split(SEP)
    return parts + [""] * (count - len(parts))
