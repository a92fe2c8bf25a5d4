"""Starting roost's server and its sessions, and reading the environment it gives their panes."""

from __future__ import annotations

from roost.pane.tmux.placement import Birth
from roost.pane.tmux.server import THEN, Server, TmuxError


def new_session(
    server: Server,
    name: str,
    command: str | None = None,
    cwd: str | None = None,
    window_name: str | None = None,
    *,
    birth: Birth,
    size: list[str] | None = None,
) -> str:
    """Create a detached session (starting the server if needed); returns its first ``%N``.

    What the pane is born with is written in the same tmux call. ``-e`` on new-session also
    writes the session's environment, and a server inherits its starter's: both forget
    ``birth.forget`` again. ``size`` (columns, rows) is the detached session's, where the
    default would not do (a restored layout wants the size it was recorded at).
    """
    args = ["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", name, *birth.env_args()]
    if cwd:
        args += ["-c", cwd]
    if window_name:
        args += ["-n", window_name]
    if size:
        args += ["-x", size[0], "-y", size[1]]
    if command:
        args.append(command)
    args = birth.around(args)
    # Untargeted, these act on the session just created.
    args += birth.settings([])
    for variable in birth.forget:
        args += [THEN, "set-environment", "-u", variable, THEN, "set-environment", "-gu", variable]
    try:
        return server.out(*args, env=birth.client_env()).strip().splitlines()[0]
    except TmuxError:
        birth.undo(server)
        raise


def has_session(server: Server, name: str) -> bool:
    return server.run("has-session", "-t", f"={name}", check=False).returncode == 0


def global_environment(server: Server, name: str) -> str | None:
    """The value of ``name`` in the server's global environment, which every new pane inherits;
    None when it has none there (or no server runs)."""
    proc = server.run("show-environment", "-g", name, check=False)
    if proc.returncode != 0:
        return None
    said = proc.stdout.decode(errors="replace").strip()
    prefix = f"{name}="
    return said[len(prefix) :] if said.startswith(prefix) else None
