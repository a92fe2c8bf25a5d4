"""``rosterd integrate install|uninstall|status HARNESS``: the adapters that call ``rosterd-hook``."""

from __future__ import annotations

from roost.base.errors import UsageError
from roost.faces.cli.output import document, line
from roost.services.integrate import INSTALLED, Report, gated, integration, names

USAGE = (
    ("integrate install|uninstall HARNESS", "add or remove roost's hooks in that agent's own config"),
    ("integrate install claude --gate|--no-gate", "let rosterd answer Claude's permission requests, or stop"),
    ("integrate install claude --http|--command", "Claude's hooks as POSTs to the daemon, or as commands"),
    ("integrate status [--json] [HARNESS]", "installed, not installed or outdated; exit 0 when installed"),
)

HELP = """\
usage: rosterd integrate install HARNESS [--gate|--no-gate] [--http|--command]
       rosterd integrate uninstall HARNESS
       rosterd integrate status [--json] [HARNESS]

HARNESS is one of: {names}.

install    adds roost's entries to the agent's own configuration, so each of its events
           runs `rosterd-hook`. Only entries roost marks as its own are ever changed;
           everything else in those files is kept. Installing twice is installing once.
           --gate (Claude Code only; `rosterd setup` turns it on at a first set-up,
           a plain install leaves it off) makes its permission requests
           answerable from anywhere: the PermissionRequest hook holds each request open for
           up to [harness.claude] gate_timeout_s of rosterd.toml (3600 s) while the web app,
           `rosterd allow`/`deny`, MCP and the API may answer it; the dialog in the terminal
           still works, and with no answer, or no daemon, it alone decides. --no-gate turns
           it off; install without either keeps the gate as it is.
           --http (Claude Code only) makes Claude POST its events to the daemon's hook port
           ([node] hook_port of rosterd.toml, 8792) instead of starting `rosterd-hook` for
           each: no process per event. SessionStart stays a command (Claude runs no other
           kind for it). Claude draws an error under every event whose URL does not answer,
           so this is the default only where `rosterd service install` put a socket unit
           that holds the port open while the daemon is down. --command goes back to
           commands; install without either keeps what is installed (HTTP where that
           socket unit is, when nothing is).
uninstall  removes roost's entries, and nothing else.
status     prints one line per harness: installed, not installed, or outdated (roost's
           entries are there but differ from what this version would install: install
           again). --json prints one schema-1 document instead.

A file kept as a symbolic link (a dotfiles manager's) is changed where the link ends, and
the link stays.

Exit status:
  0  done; for status: the harness is installed (status with no HARNESS: always 0)
  1  status: not installed or outdated; any command: a usage error, an unknown harness,
     or a file roost will not edit (invalid JSON/TOML, or not written by roost) or cannot
     write (read-only, or a symbolic link to nothing); then nothing was changed
"""


def _help() -> str:
    return HELP.format(names=", ".join(names()))


def _fields(report: Report) -> dict:
    paths = [str(p) for p in report.paths]
    return {"harness": report.harness, "state": report.state, "paths": paths, "detail": report.detail or None}


def status(args: list[str]) -> int:
    as_json = "--json" in args
    rest = [a for a in args if a != "--json"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        raise UsageError("usage: rosterd integrate status [--json] [HARNESS]")
    reports = [integration(name).status() for name in (rest or names())]
    if as_json:
        document(
            "integrate status",
            integrations=[
                {
                    "harness": r.harness,
                    "state": r.state,
                    "paths": [str(p) for p in r.paths],
                    "detail": r.detail or None,
                    "gate": r.gate,
                    "hooks": r.hooks,
                }
                for r in reports
            ],
        )
    else:
        for report in reports:
            line(report.line)  # paths and a host file's own words: escaped
    if rest and reports[0].state != INSTALLED:
        return 1
    return 0


def run(verb: str, args: list[str]) -> int:
    action = args[0] if args else ""
    if action in ("-h", "--help", "help"):
        print(_help(), end="")
        return 0
    if action == "status":
        return status(args[1:])
    flags = [a for a in args[1:] if a in ("--gate", "--no-gate")]
    ways = [a for a in args[1:] if a in ("--http", "--command")]
    rest = [a for a in args[1:] if a not in flags and a not in ways]
    if (
        action not in ("install", "uninstall")
        or len(rest) != 1
        or rest[0].startswith("-")
        or len(flags) > 1
        or len(ways) > 1
        or ((flags or ways) and action != "install")
    ):
        raise UsageError(
            "usage: rosterd integrate install HARNESS [--gate|--no-gate] [--http|--command]"
            " | integrate uninstall HARNESS | integrate status [--json] [HARNESS]"
            " (see rosterd integrate --help)"
        )
    if action == "uninstall":
        said = integration(rest[0]).uninstall()
    elif flags or ways or _wakes() is not None:
        said = _chosen(rest[0], flags[0] == "--gate" if flags else None, ways[0] if ways else None)
    else:
        said = integration(rest[0]).install()
    for text in said:
        line(text)
    return 0


def _wakes() -> int | None:
    """The hook port a service's socket unit holds open, where one is installed (Linux)."""
    from roost.services.autostart.systemd import held_hook_port

    return held_hook_port()


def _chosen(harness: str, gate: bool | None, way: str | None) -> list[str]:
    """Install with the gate turned on (for the hold rosterd.toml configures), off, or kept
    (None); with HTTP hooks (``--http``, or a socket unit's port when no way is named) or
    command hooks (``--command``), or the way installed (neither, and no socket unit)."""
    from roost.agents import manifest
    from roost.daemon import config

    agent = manifest.load(harness) if harness in names() else None
    posts = agent is not None and bool(agent.hook.http)
    if way == "--http" and not posts:
        integration(harness)  # an unknown harness is named as such first
        raise UsageError(f"{harness} cannot post its hooks over HTTP: --http is for Claude Code")
    settings = config.load()
    port: int | bool = True
    if way == "--command":
        port = False
    elif way == "--http":
        port = settings.node.hook_port
        if not port:
            raise UsageError("--http needs a hook port, and [node] hook_port of rosterd.toml is 0")
    elif posts and (held := _wakes()) is not None:
        port = held
    if gate is None and (port is True or not posts):
        return integration(harness).install()
    hold = settings.harness.get(harness, config.Harness()).gate_timeout_s if gate else None
    target = gated(harness) if gate is not None else integration(harness)
    return target.install(gate=gate, gate_timeout_s=hold, port=port)  # type: ignore[call-arg]
