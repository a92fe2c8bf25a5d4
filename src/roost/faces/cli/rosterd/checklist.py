"""The one table of what this machine needs, read by ``rosterd setup`` and ``rosterd doctor``.

Each entry of :data:`KINDS` is one kind of row: its check, its fix (None when only a person
can act), whether setup picks it by default (always, never, or as the machine stands: the
permission gate only at the first set-up of its harness), whether it is optional (a machine
without it works: doctor does not fail its absence), whether setup lists it, and whether it is
one row per harness. Adding a row to both verbs is adding an entry here.

Doctor prints every row; setup lists the rows it can do something about. A fix runs only for
a row whose check found it ``missing``, and the row is checked again afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from roost.faces.cli.rosterd import daemonrows, setuprows
from roost.faces.cli.rosterd.machine import Finding, Machine

Check = Callable[[Machine, str], Finding]
Fix = Callable[[Machine, str], list[str]]


@dataclass(frozen=True)
class Kind:
    label: str
    """The row's name; ``{harness}`` in it is filled in for a per-harness kind."""
    check: Check
    fix: Fix | None = None
    default: bool | Callable[[Machine, str], bool] = True
    """Setup picks the row when it is missing (``--yes`` fixes it); a function decides it for
    the machine as it stands."""
    optional: bool = False
    """Missing, it is no problem: doctor does not fail it (broken, it still is one)."""
    setup: bool = True
    """Setup lists the row (doctor lists every row)."""
    per_harness: bool = False
    applies: Callable[[Machine, str], bool] | None = None
    """Whether there is such a row here (for a harness): a harness with no hooks has no hooks row."""


@dataclass(frozen=True)
class Row:
    kind: Kind
    harness: str = ""

    @property
    def name(self) -> str:
        return self.kind.label.format(harness=self.harness)

    def check(self, machine: Machine) -> Finding:
        return self.kind.check(machine, self.harness)

    def fix(self, machine: Machine) -> list[str]:
        assert self.kind.fix is not None
        return self.kind.fix(machine, self.harness)

    def picked(self, machine: Machine) -> bool:
        """Whether setup picks the row by default when it is missing."""
        default = self.kind.default
        return default if isinstance(default, bool) else default(machine, self.harness)


KINDS = (
    Kind("commands", setuprows.commands, setuprows.link_commands),
    Kind("config", setuprows.settings, setuprows.write_settings, optional=True),
    Kind("service", setuprows.service, setuprows.install_service, optional=True),
    Kind("{harness}", setuprows.binary, default=False, optional=True, per_harness=True),
    Kind(
        "{harness} hooks",
        setuprows.hooks,
        setuprows.install_hooks,
        per_harness=True,
        applies=setuprows.has_hooks,
    ),
    Kind(
        "{harness} gate",
        setuprows.gate,
        setuprows.install_gate,
        default=setuprows.first_setup,
        optional=True,
        per_harness=True,
        applies=setuprows.has_gate,
    ),
    Kind(
        "{harness} adapter",
        setuprows.adapter,
        setuprows.install_adapter,
        default=False,
        optional=True,
        per_harness=True,
        applies=setuprows.has_adapter,
    ),
    Kind("daemon", daemonrows.daemon, setup=False),
    Kind("token", daemonrows.token, setup=False),
    Kind("node key", daemonrows.node_key, setup=False),
    Kind("socket", daemonrows.socket, setup=False),
    Kind("loopback", daemonrows.loopback, optional=True, setup=False),
    Kind("hook port", daemonrows.hook_port, optional=True, setup=False),
    Kind("swarm", daemonrows.swarm, setup=False),
    Kind("swarm.json", daemonrows.swarm_file, setup=False, applies=daemonrows.in_swarm),
    Kind("manifests", daemonrows.manifests, setup=False),
    Kind("tmux", daemonrows.tmux, setup=False),
    Kind("IS_SANDBOX", daemonrows.sandbox, setup=False, applies=daemonrows.sandbox_set),
)


def rows(machine: Machine, *, setup: bool = False) -> list[Row]:
    """Every row on this machine, in the table's order, the per-harness rows of one harness
    together where the first per-harness kind stands; ``setup``: only those setup lists."""
    first = next(index for index, kind in enumerate(KINDS) if kind.per_harness)
    placed: list[tuple[tuple[int, int, int], Row]] = []
    for index, kind in enumerate(KINDS):
        if setup and not kind.setup:
            continue
        subjects = list(enumerate(machine.harnesses)) if kind.per_harness else [(0, "")]
        for order, harness in subjects:
            if kind.applies is None or kind.applies(machine, harness):
                key = (first, order, index) if kind.per_harness else (index, 0, 0)
                placed.append((key, Row(kind, harness)))
    return [row for _, row in sorted(placed, key=lambda item: item[0])]
