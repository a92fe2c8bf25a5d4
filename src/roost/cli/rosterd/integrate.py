"""``rosterd integrate install|uninstall|status HARNESS``: the adapters that call ``rosterd-hook``."""

from __future__ import annotations

from roost.cli.output import document, line
from roost.errors import UsageError
from roost.integrate import INSTALLED, Report, integration, names

USAGE = (
    ("integrate install|uninstall HARNESS", "add or remove roost's hooks in that agent's own config"),
    ("integrate status [--json] [HARNESS]", "installed, not installed or outdated; exit 0 when installed"),
)

HELP = """\
usage: rosterd integrate install HARNESS
       rosterd integrate uninstall HARNESS
       rosterd integrate status [--json] [HARNESS]

HARNESS is one of: {names}.

install    adds roost's entries to the agent's own configuration, so each of its events
           runs `rosterd-hook`. Only entries roost marks as its own are ever changed;
           everything else in those files is kept. Installing twice is installing once.
uninstall  removes roost's entries, and nothing else.
status     prints one line per harness: installed, not installed, or outdated (roost's
           entries are there but differ from what this version would install: install
           again). --json prints one schema-1 document instead.

Exit status:
  0  done; for status: the harness is installed (status with no HARNESS: always 0)
  1  status: not installed or outdated; any command: a usage error, an unknown harness,
     or a file roost will not edit (invalid JSON/TOML, or not written by roost)
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
    if action not in ("install", "uninstall") or len(args) != 2 or args[1].startswith("-"):
        raise UsageError(
            "usage: rosterd integrate install|uninstall HARNESS | integrate status [--json] [HARNESS]"
            " (see rosterd integrate --help)"
        )
    target = integration(args[1])
    for said in target.install() if action == "install" else target.uninstall():
        line(said)
    return 0
