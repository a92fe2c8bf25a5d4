"""``rosterd service install|uninstall|status``: the daemon as a per-user service
(:mod:`roost.services.autostart`)."""

from __future__ import annotations

from roost.base.errors import UsageError
from roost.faces.cli.output import document, line
from roost.faces.cli.rosterd import printing

USAGE = (
    ("service install|uninstall", "run the daemon at every login (systemd user unit, macOS LaunchAgent)"),
    ("service status [--json]", "installed, enabled, active; exit 0 when installed"),
)

HELP = """\
usage: rosterd service install
       rosterd service uninstall
       rosterd service status [--json]

install    writes a systemd user unit (Linux: ${XDG_CONFIG_HOME:-~/.config}/systemd/user/
           rosterd.service) or a LaunchAgent (macOS: ~/Library/LaunchAgents/dev.roost.rosterd.plist)
           that runs this installation's `rosterd daemon`, restarts it when it fails and logs to
           the journal (macOS: ~/Library/Logs/roost/rosterd.log); then enables and starts it.
           It carries PATH and roost's own variables from this shell. Installing again
           changes nothing when the file is right ("unchanged"). On Linux a socket unit
           beside it (rosterd.socket) holds [node] hook_port of rosterd.toml (8792) open on
           127.0.0.1 even while the daemon is down: an agent's HTTP hook that arrives then
           starts the daemon and is answered (`rosterd integrate install claude` installs
           HTTP hooks where this unit is installed). hook_port = 0: no socket unit.
uninstall  stops and disables the service and removes those files, and nothing else.
status     installed (and whether it is what install would write now), enabled, active.
           --json prints one schema-1 document instead.

Exit status:
  0  done; for status: the service is installed
  1  status: not installed; any command: a usage error, a file at that path that roost did
     not write, or a service manager that refused; install: the file is written, but no
     service manager answers (a container, CI, an ssh session without a login manager): it
     is not enabled, and the message says how to start it
"""


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def status(args: list[str]) -> int:
    from roost.services.autostart import manager, status

    if any(arg != "--json" for arg in args):
        raise UsageError("usage: rosterd service status [--json]")
    found = status(manager(hook_port=_hook_port()))
    if "--json" in args:
        document("service status", **found.fields())
    else:
        installed = "no"
        if found.installed:
            installed = "yes" if found.current else "yes, but not as this installation would write it now"
        for text in printing.fields(
            [
                ("manager", found.manager),
                ("file", str(found.path)),
                ("installed", installed),
                ("enabled", _yes(found.enabled)),
                ("active", _yes(found.active)),
                ("detail", found.detail),
            ]
        ):
            line(text)
    return 0 if found.installed else 1


def run(verb: str, args: list[str]) -> int:
    action = args[0] if args else ""
    if action in ("-h", "--help", "help"):
        print(HELP, end="")
        return 0
    if action == "status":
        return status(args[1:])
    if action not in ("install", "uninstall") or len(args) != 1:
        raise UsageError(
            "usage: rosterd service install|uninstall|status [--json] (see rosterd service --help)"
        )
    from roost.services.autostart import install, manager, uninstall

    target = manager(hook_port=_hook_port())
    for said in install(target) if action == "install" else uninstall(target):
        line(said)
    return 0


def _hook_port() -> int:
    """``[node] hook_port`` of the config the daemon will read: the socket unit's port."""
    from roost.faces.cli.rosterd.machine import Machine

    return Machine().hook_port
