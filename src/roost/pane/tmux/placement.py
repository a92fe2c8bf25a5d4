"""Opening windows and panes beside others, and reading the keys a person uses to move between them.

Everything here opens with ``-d``: roost runs on behalf of agents and scripts, and the person at
the terminal keeps looking at whatever they were looking at. The keys are read from the live
server, never assumed, so directions stay right for someone who rebound them.
"""

from __future__ import annotations

from roost.pane.tmux.server import THEN, Server, TmuxError

TYPE_CHECKING = False  # for annotations only: collections.abc would cost every new pane ~3 ms
if TYPE_CHECKING:
    from collections.abc import Mapping

_NEW_PANE = ("-d", "-P", "-F", "#{pane_id} #{window_index}")


class Opened:
    """A pane just opened: its ``%N`` and the index of the window it is in.

    The classes here are written out rather than dataclasses: importing ``dataclasses`` would
    cost ``roost new``, ``spawn`` and ``close`` ~10 ms at start.
    """

    __slots__ = ("pane", "window_index")

    def __init__(self, pane: str, window_index: int | None) -> None:
        self.pane = pane
        self.window_index = window_index


def _opened(out: str) -> Opened:
    pane, _, index = out.strip().partition(" ")
    return Opened(pane, int(index) if index.isdigit() else None)


class Birth:
    """What a pane is given as it opens. The caller decides what; this layer only writes it.

    ``env`` is the first process's environment; ``forget`` names the variables that must not
    stay in the session's environment afterwards (new-session's ``-e`` writes it there too);
    ``pane_options`` and ``server_options`` are tmux user options, set right after the open;
    ``then`` are commands chained after them (a first session's own hooks fire before its
    server has the options they read, so what must follow a new pane is said here too);
    ``opening`` are server options set in the same tmux call just before the open and unset
    just after it, for the open's own hooks to read while nothing else can run in between (a
    command that exits at once cannot end before they have seen the pane).
    """

    __slots__ = ("env", "forget", "opening", "pane_options", "server_options", "then")

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        forget: tuple[str, ...] = (),
        pane_options: Mapping[str, str] | None = None,
        server_options: Mapping[str, str] | None = None,
        then: tuple[tuple[str, ...], ...] = (),
        opening: Mapping[str, str] | None = None,
    ) -> None:
        self.env = env or {}
        self.forget = forget
        self.pane_options = pane_options or {}
        self.server_options = server_options or {}
        self.then = then
        self.opening = opening or {}

    def around(self, open_args: list[str]) -> list[str]:
        """The open's arguments with :attr:`opening` set before them and unset after them."""
        if not self.opening:
            return open_args
        before: list[str] = []
        after: list[str] = []
        for name, value in self.opening.items():
            before += ["set-option", "-g", name, value, THEN]
            after += [THEN, "set-option", "-gu", name]
        return [*before, *open_args, *after]

    def undo(self, server: Server) -> None:
        """After an open tmux refused: the rest of its call did not run, so :attr:`opening`
        is unset here, or the next pane a person opens would read it as its own."""
        for name in self.opening:
            server.run("set-option", "-gu", name, check=False)

    def env_args(self) -> list[str]:
        return [arg for name, value in self.env.items() for arg in ("-e", f"{name}={value}")]

    def client_env(self) -> dict[str, str]:
        """What the tmux client that opens the pane must run with: tmux 3.3 gives a new pane
        the PATH of the client that asked for it, over ``-e``, so a PATH goes there too."""
        return {"PATH": self.env["PATH"]} if "PATH" in self.env else {}

    def settings(self, target: list[str]) -> list[str]:
        """The chained commands that write the options; ``target`` picks the pane (``-t %N``),
        or is empty right after new-session, whose new pane is then the current one."""
        args: list[str] = []
        for name, value in self.server_options.items():
            args += [THEN, "set-option", "-g", name, value]
        for name, value in self.pane_options.items():
            args += [THEN, "set-option", "-p", *target, name, value]
        for command in self.then:
            args += [THEN, *command]
        return args


def _open(server: Server, args: list[str], command: str | None, birth: Birth) -> Opened:
    """Open the pane, then write what it is born with. A separate call, because only the new
    ``%N`` can name the pane; a report that comes in between is refused as naming no pane,
    never taken for another's."""
    try:
        out = server.out(
            *birth.around([*args, *birth.env_args(), *([command] if command else [])]),
            env=birth.client_env(),
        )
    except TmuxError:
        birth.undo(server)
        raise
    opened = _opened(out)
    settings = birth.settings(["-t", opened.pane])
    if settings:
        server.run(*settings[1:], check=False)
    return opened


def new_window(
    server: Server, session: str, name: str, command: str | None, cwd: str | None, birth: Birth
) -> Opened:
    """A window at the end of ``session``, named ``name``."""
    args = ["new-window", *_NEW_PANE, "-t", f"={session}:", "-n", name]
    if cwd:
        args += ["-c", cwd]
    return _open(server, args, command, birth)


def split(
    server: Server, pane_id: str, *, beside: bool, command: str | None, cwd: str | None, birth: Birth
) -> Opened:
    """A pane to the right of ``pane_id`` (``beside``) or below it."""
    args = ["split-window", *_NEW_PANE, "-h" if beside else "-v", "-t", pane_id]
    if cwd:
        args += ["-c", cwd]
    return _open(server, args, command, birth)


def kill_pane(server: Server, pane_id: str) -> bool:
    """Close one pane (its window goes with it when it was the last); False when already gone."""
    return server.run("kill-pane", "-t", pane_id, check=False).returncode == 0


class Keys:
    """The live prefix key and the prefix-table bindings, command -> the key that runs it."""

    __slots__ = ("bindings", "prefix")

    def __init__(self, prefix: str | None, bindings: dict[str, str]) -> None:
        self.prefix = prefix
        self.bindings = bindings

    def key_for(self, command: str, *, prefix: bool = False) -> str | None:
        """The key bound to ``command``; with ``prefix``, to any command that begins with it
        (``choose-tree -Zw`` bound with a format of its own)."""
        if not prefix:
            return self.bindings.get(command)
        keys = [
            key for bound, key in self.bindings.items() if bound == command or bound.startswith(command + " ")
        ]
        return min(keys, key=len, default=None)


def keys(server: Server) -> Keys:
    """Read the prefix and its key table in one round trip."""
    try:
        out = server.out("show-options", "-gv", "prefix", THEN, "list-keys", "-T", "prefix")
    except TmuxError:
        return Keys(None, {})
    lines = out.splitlines()
    prefix = lines[0].strip() if lines else ""
    bindings: dict[str, str] = {}
    for line in lines[1:]:
        parsed = _binding(line)
        if parsed is None:
            continue
        key, command = parsed
        # Several keys can run one command (l and Right); the shortest is the one to print.
        if command not in bindings or len(key) < len(bindings[command]):
            bindings[command] = key
    return Keys(None if prefix in ("", "None") else prefix, bindings)


def _binding(line: str) -> tuple[str, str] | None:
    """``bind-key [-r] -T prefix KEY COMMAND…`` -> (KEY, COMMAND) with spacing normalised."""
    words = line.split()
    try:
        at = words.index("-T")
    except ValueError:
        return None
    if len(words) < at + 4:
        return None
    key = words[at + 2]
    if len(key) == 2 and key.startswith("\\"):
        key = key[1:]
    return key, " ".join(words[at + 3 :])


def spoken(key: str) -> str:
    """How a person says a tmux key: ``C-s`` is ``ctrl-s``; other keys read as tmux spells them."""
    return "ctrl-" + key[2:] if key.startswith("C-") and len(key) > 2 else key
