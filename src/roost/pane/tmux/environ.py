"""A new pane's environment: the caller's, as a person expects of a command they run.

tmux gives a new pane the environment of its server (that of whichever client started it) with
its session's over it; of the client that asks for the pane, only PATH follows. So an
``ANTHROPIC_API_KEY`` exported in one shell never reached an agent spawned from it once the
server ran. roost hands the pane, with ``-e``, each variable of the caller's that the server
would not give it as it is, less tmux's own (:data:`TMUX_OWN`: tmux sets them for every pane,
and a caller's ``TERM`` is the outer terminal's, not tmux's).

Only the differences, because tmux refuses a command line over 16 KB and a whole environment
can be larger (``LS_COLORS`` alone can take several): what the server already has needs no
``-e``. What does not fit in :data:`BUDGET` is left out and named, smallest first kept. A
variable the caller has unset while the server's environment holds it stays set: ``-e`` can
set a variable, never remove one.
"""

from __future__ import annotations

from roost.pane.tmux.server import THEN, Server

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TMUX_OWN = frozenset({"TMUX", "TMUX_PANE", "TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "PWD"})
"""What tmux sets in every pane itself: its socket and pane, its terminal type, the directory
the pane starts in. A ``-e`` for one of them would override tmux's own value."""
BUDGET = 12 * 1024
"""Bytes of ``-e`` arguments one tmux command may carry: tmux refuses a command line of more
than 16 KB, and the rest of the command (the pane's own command, its options) needs room too."""
_BETWEEN = "roost-environ-between"


def _name(word: str) -> bool:
    """Whether ``word`` can be a variable's name as tmux lists it: any word without a blank
    (bash's exported functions are ``BASH_FUNC_f%%``)."""
    return bool(word) and not any(char.isspace() for char in word)


def _parse(text: str) -> dict[str, str | None]:
    """``show-environment`` lines as ``{name: value}``, None for a variable the scope removes
    (``-NAME``). A line that is no ``NAME=`` continues the value before it (a value may hold
    newlines). A continued line that looks like ``NAME=`` is read as a variable of its own: at
    worst a variable is then passed with ``-e`` that needed not be."""
    found: dict[str, str | None] = {}
    last = None
    for line in text.split("\n"):
        name, equals, value = line.partition("=")
        if line.startswith("-") and not equals and _name(line[1:]):
            found[line[1:]] = None
            last = None
        elif equals and _name(name):
            found[name] = value
            last = name
        elif last is not None:
            found[last] = f"{found[last]}\n{line}"
    return found


def given(server: Server, session: str | None) -> dict[str, str] | None:
    """What a new pane of ``session`` gets from the server: its global environment with the
    session's over it (None: a new session, the global one alone). None when no server runs:
    one started now takes the starting client's environment, the caller's, whole."""
    args = ["show-environment", "-g"]
    if session is not None:
        args += [THEN, "display-message", "-p", _BETWEEN, THEN, "show-environment", "-t", f"={session}"]
    proc = server.run(*args, check=False)
    if proc.returncode != 0:
        return None
    text = proc.stdout.decode(errors="surrogateescape")
    scopes = text.split(f"{_BETWEEN}\n", 1)
    merged: dict[str, str | None] = {}
    for scope in scopes:
        merged.update(_parse(scope.rstrip("\n")))
    return {name: value for name, value in merged.items() if value is not None}


def differences(
    caller: Mapping[str, str], server: Mapping[str, str] | None
) -> tuple[dict[str, str], list[str]]:
    """``(passed, left_out)``: the caller's variables a new pane would not get from ``server``
    as they are, less tmux's own; smallest first while they fit in :data:`BUDGET`, the names of
    the rest (by name) left out."""
    wanted = {
        name: value
        for name, value in caller.items()
        if name not in TMUX_OWN and (server is None or server.get(name) != value)
    }
    passed: dict[str, str] = {}
    used = 0
    for name, value in sorted(wanted.items(), key=lambda item: len(item[0]) + len(item[1])):
        size = len(name.encode(errors="surrogateescape")) + len(value.encode(errors="surrogateescape")) + 5
        if used + size > BUDGET:
            break
        passed[name] = value
        used += size
    return passed, sorted(set(wanted) - set(passed))


def callers(
    server: Server, session: str | None, caller: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """What a pane opened for ``caller`` in ``session`` (None: a new session) is handed with
    ``-e``, and the names left out (see :func:`differences`). No server yet: nothing, since the
    server this call starts inherits the caller's environment whole."""
    found = given(server, session)
    if found is None and not server.running():
        return {}, []
    return differences(caller, found)
