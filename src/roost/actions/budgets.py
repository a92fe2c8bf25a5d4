"""What every face does to a budget: read them, set or clear one, lift one a session is over.

The budgets themselves, and what their spend makes of each session, are the ledger's
(:mod:`roost.services.ledger.budgets`); the door holds them. A session budget names its session as
every action does (a key, a pid or a name, found once through the door; another node's
session is its owner's to budget, refused ``owned_elsewhere``); a folder budget names an
absolute folder; a day budget names nothing. Budgets and the periods lifted are this node's:
each node holds its own, and counts every node's spend against them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from roost.actions.sessions import Door
from roost.base.errors import Conflict, TargetGone
from roost.services.ledger.budgets import SESSION

if TYPE_CHECKING:
    from roost.services.ledger.budgets import Budgets

NO_BUDGETS = "this daemon keeps no budgets"


def _budgets(door: Door) -> Budgets:
    if door.budgets is None:
        raise TargetGone(NO_BUDGETS)
    return door.budgets


def _target(door: Door, scope: str, target: str | None) -> str | None:
    """A session budget's target as the session's key; any other as given."""
    if scope != SESSION or target is None:
        return target
    return door.session(target).session_key


def view(door: Door) -> dict[str, Any]:
    """Every budget, what its scope spent and its state, and the periods lifted."""
    return _budgets(door).view()


def set_limit(
    door: Door, scope: str, target: str | None, limit: object, warn: object = None
) -> dict[str, Any]:
    """Set (or replace) a budget; every budget after it."""
    budgets = _budgets(door)
    budgets.set(scope, _target(door, scope, target), limit, warn)
    return budgets.view()


def clear(door: Door, scope: str, target: str | None) -> dict[str, Any]:
    """Forget a budget set through a face (one ``rosterd.toml`` sets stays); every budget after it."""
    budgets = _budgets(door)
    budgets.clear(scope, _target(door, scope, target))
    return budgets.view()


def lift(door: Door, scope: str, target: str | None, *, allowed: bool = True) -> dict[str, Any]:
    """Let prompts through a budget until its period ends; ``allowed`` false refuses it (an
    agent over MCP, unless a person let agents lift budgets)."""
    if not allowed:
        raise Conflict(
            "lifting a budget is a person's decision; an agent may do it only with "
            "[mcp] lift_budgets = true in rosterd.toml",
            code="lift_off",
        )
    budgets = _budgets(door)
    lifted = budgets.lift(scope, _target(door, scope, target))
    return {"lift": lifted, **budgets.view()}
