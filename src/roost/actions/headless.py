"""What a face does to a headless session: start or spawn one, prompt it, cancel its turn,
suspend, resume or stop it.

Each action finds the session through the :class:`~roost.actions.sessions.Door` (a session of
another lane is refused ``not_headless``, 404) and hands it to the runner
(:mod:`roost.headless.runner.runner`), which refuses what it cannot do with a failure carrying ``code``.
Each answers with the session's record as the roster holds it then, which every face renders
as ``GET /sessions/{key}`` would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from roost.actions.sessions import NO_RUNNER, Door, Found
from roost.base.errors import TargetGone
from roost.services.ledger import budgets
from roost.truth.roster import Record

if TYPE_CHECKING:
    from roost.headless.runner.runner import Runner, Waited


@dataclass(frozen=True)
class Options:
    """How a new session runs: its display name, permission policy, model, effort and extra
    environment, and the session that started it (``parent``)."""

    name: str | None = None
    policy: str | None = None
    model: str | None = None
    effort: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    parent: str | None = None

    def settings(self) -> dict[str, Any]:
        """How the session runs, as the runner's keywords: a start and a spawn both pass these
        (a spawn's parent is the session it is asked of, not ``parent``)."""
        return {
            "name": self.name,
            "policy": self.policy,
            "model": self.model,
            "effort": self.effort,
            "env": dict(self.env),
        }


@dataclass(frozen=True)
class Prompted:
    """A headless prompt that was sent: the record after it, and where its wait left the
    session (None: no wait was asked for)."""

    record: Record
    waited: Waited | None = None


def _runner(door: Door) -> Runner:
    if door.runner is None:
        raise TargetGone(NO_RUNNER)
    return door.runner


def harnesses(door: Door) -> set[str]:
    """The harnesses a headless session can run here: those the runner has an ACP adapter for."""
    return set(door.runner.settings.adapters) if door.runner is not None else set()


async def start(door: Door, harness: str, cwd: str, options: Options) -> Record:
    """A new headless session of ``harness`` in ``cwd``."""
    return await _runner(door).start(harness, cwd, parent=options.parent, **options.settings())


async def spawn(door: Door, parent: str | Found, harness: str, cwd: str, options: Options) -> Record:
    """A child of the headless session ``parent`` names, under its policy unless ``options``
    names one."""
    runner, key = door.headless(parent)
    return await runner.spawn(key, harness, cwd, **options.settings())


async def prompt(
    door: Door, target: str | Found, text: str, until: str | None = None, timeout: float = 600.0
) -> Prompted:
    """Send a turn (a suspended session is resumed first; one a budget holds is refused
    :class:`~roost.base.errors.OverBudget`, nothing sent); with ``until`` (``idle``,
    ``needs_attention`` or ``ended``) wait up to ``timeout`` seconds for the session to get
    there, and say whether the record's recap is this turn's."""
    runner, key = door.headless(target)
    held = door.live.roster.record(key)
    if held is not None and (over := budgets.refusal(held)) is not None:
        raise over
    record, turn = await runner.prompt(key, text)
    if until is None:
        return Prompted(record)
    return Prompted(record, await runner.wait(key, until, timeout, turn))


async def cancel(door: Door, target: str | Found) -> Record:
    """Cancel the running turn."""
    runner, key = door.headless(target)
    return await runner.cancel(key)


async def suspend(door: Door, target: str | Found) -> Record:
    """Stop the session's holder; the session stays, suspended, until it is addressed."""
    runner, key = door.headless(target)
    return await runner.suspend(key)


async def resume(door: Door, target: str | Found) -> Record:
    """Start a suspended session again."""
    runner, key = door.headless(target)
    return await runner.resume(key)


async def stop(door: Door, target: str | Found) -> Record | None:
    """End the session and every process under it; its record, ended."""
    runner, key = door.headless(target)
    await runner.stop(key)
    return door.live.roster.record(key)
