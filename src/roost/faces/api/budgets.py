"""The budget routes: read them (``GET /budgets``), set one (``POST /budgets``), clear one
(``POST /budgets/clear``), lift one a session is over (``POST /budgets/lift``). What a budget is
and what crossing it does is :mod:`roost.services.ledger.budgets`' to say; each route parses, calls one
action of :mod:`roost.actions.budgets` and answers every budget as it then stands.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import budgets
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.operations import operation


@operation(
    "this node's budgets: each one's limit, what its scope has spent on every node, its state "
    "(warning, exceeded, lifted), and the periods a person lifted",
    answers={200: ("Budgets", "the budgets")},
    fails=(404,),
)
async def listing(request: Request) -> JSONResponse:
    return JSONResponse(budgets.view(context.of(request).door))


@operation(
    "set (or replace) a budget: a session's, a folder's for each UTC day, or the swarm's day",
    answers={200: ("Budgets", "every budget after it")},
    fails=(400, 404, 409, 413),
    body=schemas.BudgetSet,
)
async def set_limit(request: Request) -> JSONResponse:
    body = await read(request, schemas.BudgetSet)
    door = context.of(request).door
    return JSONResponse(budgets.set_limit(door, body.scope, body.target, body.limit, body.warn))


@operation(
    "clear a budget set through the API (one rosterd.toml sets stays)",
    answers={200: ("Budgets", "every budget after it")},
    fails=(400, 404, 409, 413),
    body=schemas.BudgetWhich,
)
async def clear(request: Request) -> JSONResponse:
    body = await read(request, schemas.BudgetWhich)
    return JSONResponse(budgets.clear(context.of(request).door, body.scope, body.target))


@operation(
    "lift a budget that holds sessions, until its period ends (a session's life, the UTC day): "
    "prompts go through again",
    answers={200: ("BudgetsLifted", "what was lifted, and every budget after it")},
    fails=(400, 404, 409, 413),
    body=schemas.BudgetWhich,
)
async def lift(request: Request) -> JSONResponse:
    body = await read(request, schemas.BudgetWhich)
    return JSONResponse(budgets.lift(context.of(request).door, body.scope, body.target))
