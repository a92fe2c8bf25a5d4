"""``rosterd budget``: this node's budgets, and setting, clearing and lifting one.

``rosterd budget [--json]`` prints ``GET /budgets``: one line per budget (its scope, what it is
about, its limit, what its scope has spent on every node and its state), then the periods a
person lifted. ``set SCOPE [TARGET] LIMIT [--warn F]``, ``clear SCOPE [TARGET]`` and
``lift SCOPE [TARGET]`` post to ``/budgets``, ``/budgets/clear`` and ``/budgets/lift``; SCOPE is
``session`` (TARGET a session: its key, a pid or its name), ``folder`` (TARGET an absolute
folder; a relative one is taken from here) or ``day`` (no TARGET). ``--json`` prints the
route's body as sent.
"""

from __future__ import annotations

import json
import os

from roost.base.errors import UsageError
from roost.base.text import shown
from roost.faces.cli.daemonclient import Client
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    (
        "budget [--json]",
        "this node's budgets: limit, what every node spent, state (warning, exceeded, lifted)",
    ),
    ("budget set SCOPE [TARGET] LIMIT [--warn F]", "a budget: session KEY, folder DIR (per UTC day), day"),
    ("budget clear SCOPE [TARGET]", "forget a budget set here or through the API (the config's stay)"),
    ("budget lift SCOPE [TARGET]", "let prompts through a budget that holds sessions, until its period ends"),
)
SCOPES = ("session", "folder", "day")
WHOLE = (
    "usage: rosterd budget [--json] | budget set SCOPE [TARGET] LIMIT [--warn F] [--json]"
    " | budget clear SCOPE [TARGET] [--json] | budget lift SCOPE [TARGET] [--json]"
)


def _which(words: tuple[str, ...]) -> dict[str, Any]:
    """A budget named by its scope and target, as the routes take it."""
    if not words or words[0] not in SCOPES:
        raise UsageError(f"SCOPE must be one of {', '.join(SCOPES)}\n{WHOLE}")
    scope, rest = words[0], words[1:]
    if scope == "day":
        if rest:
            raise UsageError("a day budget has no TARGET: it counts every session")
        return {"scope": scope}
    if len(rest) != 1:
        raise UsageError(
            f"a {scope} budget needs its TARGET: {'a session' if scope == 'session' else 'a folder'}"
        )
    target = rest[0]
    if scope == "folder":
        target = os.path.normpath(os.path.abspath(target))
    return {"scope": scope, "target": target}


def lines(doc: dict[str, Any]) -> list[str]:
    """The budgets as a person reads them."""
    currency = doc.get("currency", "")
    rows = [["SCOPE", "TARGET", "LIMIT", "SPENT", "STATE", "SET IN"]]
    for budget in doc.get("budgets", []):
        target = budget.get("session_key") or budget.get("target") or (budget.get("day") or "-")
        rows.append(
            [
                shown(str(budget.get("scope"))),
                shown(str(target)),
                f"{budget.get('limit', 0):.2f} {currency}",
                f"{budget.get('spent', 0):.2f} {currency}",
                shown(str(budget.get("state") or "-")),
                shown(str(budget.get("origin"))),
            ]
        )
    said = printing.columns(rows) if len(rows) > 1 else [f"no budgets (their currency is {currency})"]
    for budget in doc.get("budgets", []):
        if budget.get("reason"):
            said.append(shown(f"{budget.get('scope')}: {budget['reason']}"))
    for lifted in doc.get("lifted", []):
        said.append(shown(f"lifted: {lifted.get('period')} at {lifted.get('at')}"))
    return said


def run(verb: str, args: list[str]) -> int:
    options = parse(args, WHOLE, flags=("--json",), valued=("--warn",), positional=(0, 4))
    words = options.positional
    action = words[0] if words else None
    body: dict[str, Any] | None = None
    if action is None:
        if "--warn" in options.values:
            raise UsageError(WHOLE)
        path = "/budgets"
    elif action == "set":
        if len(words) < 3:
            raise UsageError(WHOLE)
        try:
            limit = float(words[-1])
        except ValueError:
            raise UsageError(f"LIMIT must be a number, not {words[-1]!r}") from None
        body = {**_which(words[1:-1]), "limit": limit}
        if "--warn" in options.values:
            try:
                body["warn"] = float(options.values["--warn"])
            except ValueError:
                raise UsageError("--warn must be a fraction of the limit, such as 0.8") from None
        path = "/budgets"
    elif action in ("clear", "lift"):
        if "--warn" in options.values:
            raise UsageError(WHOLE)
        body, path = _which(words[1:]), f"/budgets/{action}"
    else:
        raise UsageError(WHOLE)
    with Client() as client:
        answer = client.get(path) if body is None else client.post(path, body)
    if "--json" in options.flags:
        printing.raw(answer)
        return 0
    doc = json.loads(answer)
    if action == "lift":
        lifted = doc.get("lift") or {}
        printing.line(shown(f"lifted {lifted.get('period')}: prompts go through until its period ends"))
    for text in lines(doc):
        printing.line(text)
    return 0
