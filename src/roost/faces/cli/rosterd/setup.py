"""``rosterd setup [--yes] [--config PATH] [ROW…]``: one row per thing this machine needs, and
the fixes the person picks (see :mod:`roost.faces.cli.rosterd.checklist` for the rows).

On a terminal it lists the rows with their state and lets the person pick (space), move
(arrows) and run the picked fixes (enter), or quit (q). ``--yes`` asks nothing: every row that
is missing and picked by default (or named: ``setup --yes "claude gate"``) is fixed, and a line
per row says what happened. Every fix does nothing to a row that is done, so running setup again
changes nothing. It is the one step that edits an agent's own configuration (``~/.claude``,
``~/.codex``…), through ``roost.services.integrate``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from roost.base.errors import RoostError, UsageError
from roost.faces.cli.output import line
from roost.faces.cli.rosterd import checklist, picker
from roost.faces.cli.rosterd.checklist import Row
from roost.faces.cli.rosterd.machine import BROKEN, MISSING, OK, SKIP, Finding, Machine
from roost.faces.cli.rosterd.options import parse

USAGE = (
    (
        "setup [--yes] [--config PATH] [ROW…]",
        "pick and run what this machine needs: commands, config, service, each harness's hooks",
    ),
)
_USAGE = "usage: rosterd setup [--yes] [--config PATH] [ROW…]"

STATES = {OK: "done", MISSING: "missing", BROKEN: "needs you", SKIP: "skipped"}
"""What the list says of a row before anything runs; a missing row that is optional says
``optional``."""
WIDTH = len("not picked")
"""The widest word a row's line can say."""


@dataclass(frozen=True)
class Outcome:
    """What became of one row: its word, its detail lines, and whether it is left undone."""

    word: str
    lines: list[str]
    undone: bool = False


def _state(row: Row, finding: Finding) -> str:
    return "optional" if finding.outcome == MISSING and row.kind.optional else STATES[finding.outcome]


def _pickable(row: Row, finding: Finding) -> bool:
    """Missing, and setup can fix it here."""
    return finding.outcome == MISSING and row.kind.fix is not None and finding.fix is not None


def _fixed(row: Row, config_path: Path | None) -> Outcome:
    """Run the row's fix, then check it again on a fresh look at the machine."""
    try:
        said = row.fix(Machine(config_path))
    except (RoostError, OSError) as error:
        reason = error.message if isinstance(error, RoostError) else f"{error.strerror or error}"
        return Outcome("failed", [reason], undone=True)
    after = row.check(Machine(config_path))
    if after.outcome != OK:
        return Outcome("failed", [*said, after.with_fix], undone=True)
    return Outcome("fixed", said or [after.detail])


def _outcome(row: Row, finding: Finding, picked: bool, config_path: Path | None) -> Outcome:
    if finding.outcome in (OK, SKIP):
        return Outcome(STATES[finding.outcome], [finding.detail])
    if picked:
        return _fixed(row, config_path)
    if finding.outcome == MISSING and row.kind.optional:
        return Outcome("optional", [finding.with_fix])
    word = "not picked" if _pickable(row, finding) else "needs you"
    return Outcome(word, [finding.with_fix], undone=True)


def _report(rows: list[Row], findings: list[Finding], picked: list[bool], config_path: Path | None) -> int:
    """Fix the picked rows in order, a line per row as it is done; the exit status."""
    width = max(len(row.name) for row in rows)
    undone, fixed = [], 0
    for row, finding, pick in zip(rows, findings, picked, strict=True):
        result = _outcome(row, finding, pick, config_path)
        first, *more = result.lines or [""]
        line(f"{row.name:<{width}}  {result.word:<{WIDTH}}  {first}")
        for text in more:
            line(f"{'':<{width}}  {'':<{WIDTH}}  {text}")
        fixed += result.word == "fixed"
        if result.undone:
            undone.append(row.name)
    if undone:
        line(f"not done: {', '.join(undone)}")
        return 1
    line(
        f"fixed {fixed} {'row' if fixed == 1 else 'rows'}; every needed row is done"
        if fixed
        else "nothing changed: every needed row is done"
    )
    return 0


def _chosen(rows: list[Row], names: tuple[str, ...]) -> list[Row]:
    if not names:
        return rows
    known = {row.name: row for row in rows}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"no row '{unknown[0]}' here; the rows are: {', '.join(known)}")
    return [row for row in rows if row.name in names]


def _ask(rows: list[Row], findings: list[Finding], defaults: list[bool]) -> list[bool] | None:
    """The person's picks on the terminal, or None when they quit."""
    width = max(len(row.name) for row in rows)
    items = [
        picker.Item(
            f"{row.name:<{width}}  {_state(row, finding):<{WIDTH}}  {finding.with_fix}",
            _pickable(row, finding),
            _pickable(row, finding) and default,
        )
        for row, finding, default in zip(rows, findings, defaults, strict=True)
    ]
    title = "rosterd setup: ↑/↓ move, space picks, enter runs the picked fixes, q quits"
    chooser = picker.Picker(title, items)
    if not picker.choose(chooser, sys.stdin.fileno(), sys.stdout.fileno()):
        return None
    return [item.picked for item in items]


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, flags=("--yes",), valued=("--config",), positional=(0, 64))
    given = options.values.get("--config")
    config_path = Path(given) if given else None
    headless = "--yes" in options.flags
    if not headless and not (os.isatty(sys.stdin.fileno()) and os.isatty(sys.stdout.fileno())):
        raise UsageError("usage: rosterd setup asks on a terminal: run it from one, or with --yes")
    machine = Machine(config_path)
    rows = _chosen(checklist.rows(machine, setup=True), options.positional)
    findings = [row.check(machine) for row in rows]
    defaults = [row.picked(machine) for row in rows]
    if headless:
        # A row named on the command line is asked for: picked even where setup would not pick it.
        named = bool(options.positional)
        picked = [
            _pickable(row, f) and (default or named)
            for row, f, default in zip(rows, findings, defaults, strict=True)
        ]
    else:
        asked = _ask(rows, findings, defaults)
        if asked is None:
            line("quit: nothing was changed")
            needed = [_state(r, f) for r, f in zip(rows, findings, strict=True)]
            return 1 if any(state in ("missing", "needs you") for state in needed) else 0
        picked = asked
    return _report(rows, findings, picked, config_path)
