"""``rosterd doctor [--json] [--config PATH]``: is this machine set up the way rosterd needs it?

One line per row of :mod:`roost.faces.cli.rosterd.checklist`, the table ``rosterd setup`` reads too:
the commands on PATH, the config, the service, per harness its binary, hooks and ACP adapter,
then the daemon and what it made (secrets, socket, loopback port), the agent manifests and
roost's tmux server. Each says ``ok``, ``FAIL``, ``optional`` (missing, and nothing needs it)
or ``skip`` (nothing to check here), and every problem names the exact command that fixes it
where one does. The exit status is 1 when any row failed.
"""

from __future__ import annotations

from pathlib import Path

from roost.faces.cli.output import document
from roost.faces.cli.rosterd import checklist, printing
from roost.faces.cli.rosterd.checklist import Row
from roost.faces.cli.rosterd.machine import BROKEN, MISSING, OK, Finding, Machine
from roost.faces.cli.rosterd.options import parse

USAGE = (
    (
        "doctor [--json] [--config PATH]",
        "check what setup sets up, and the daemon, secrets, listeners, manifests, tmux",
    ),
)
_USAGE = "usage: rosterd doctor [--json] [--config PATH]"


def verdict(row: Row, finding: Finding) -> str:
    """``ok``, ``FAIL``, ``optional`` or ``skip``: the row's word in doctor's table."""
    if finding.outcome == MISSING and row.kind.optional:
        return "optional"
    if finding.outcome in (MISSING, BROKEN):
        return "FAIL"
    return "ok" if finding.outcome == OK else "skip"


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--json",), valued=("--config",))
    given = options.values.get("--config")
    machine = Machine(Path(given) if given else None)
    checked = [(row, row.check(machine)) for row in checklist.rows(machine)]
    words = [verdict(row, finding) for row, finding in checked]
    failed = "FAIL" in words
    if "--json" in options.flags:
        document(
            "doctor",
            ok=not failed,
            checks=[
                {
                    "name": row.name,
                    "ok": word != "FAIL",
                    "outcome": word.lower(),
                    "detail": finding.detail,
                    "fix": finding.fix if word in ("FAIL", "optional") else None,
                }
                for (row, finding), word in zip(checked, words, strict=True)
            ],
        )
    else:
        table = []
        for (row, finding), word in zip(checked, words, strict=True):
            table.append(
                [word, row.name, finding.with_fix if word in ("FAIL", "optional") else finding.detail]
            )
        for text in printing.columns(table):
            printing.line(text)
    return 1 if failed else 0
