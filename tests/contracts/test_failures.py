"""The failure table: the doc's rows are the code's classes, and each answers its documented
status through the API's real handlers and exits with its code through the CLIs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from roost.base import errors
from roost.faces.api.errors import HANDLERS
from roost.pane.tmux.server import TmuxError
from tests.contracts.tables import CONTRACTS, table

SRC = Path(errors.__file__).resolve().parent
DOCUMENTED = {row["failure"]: row for row in table("Failures")}


def test_the_table_is_the_code() -> None:
    assert list(DOCUMENTED) == [failure.__name__ for failure in errors.FAILURES]
    for failure in errors.FAILURES:
        row = DOCUMENTED[failure.__name__]
        assert (int(row["exit"]), int(row["HTTP"])) == (failure.exit_code, failure.status), failure


def test_every_failure_class_is_in_the_table() -> None:
    """A failure defined in roost.base.errors but missing from FAILURES would escape the doc."""
    defined = {
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.RoostError) and value is not errors.RoostError
    }
    assert defined == set(errors.FAILURES)


def test_the_terminal_layer_raises_the_tables_tmux_failure() -> None:
    assert TmuxError is errors.TmuxError


def _app(failure: Exception) -> Starlette:
    async def fail(_request: Request) -> None:
        raise failure

    return Starlette(routes=[Route("/fail", fail)], exception_handlers=HANDLERS)


def _get(app: Starlette) -> httpx.Response:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://rosterd") as client:
            return await client.get("/fail")

    import asyncio

    return asyncio.run(go())


@pytest.mark.parametrize("failure", errors.FAILURES, ids=lambda failure: failure.__name__)
def test_a_route_raising_a_failure_answers_its_documented_status(failure: type[errors.RoostError]) -> None:
    answer = _get(_app(failure("what went wrong", candidates=["a", "b"])))
    assert answer.status_code == int(DOCUMENTED[failure.__name__]["HTTP"])
    assert answer.json() == {"error": "what went wrong", "candidates": ["a", "b"]}


def test_a_subclass_raised_by_a_lower_layer_answers_its_family_status() -> None:
    from roost.pane.state.events import CursorGone
    from roost.truth.detect.manifests import ManifestError

    assert _get(_app(ManifestError("claude.toml: bad rule"))).status_code == errors.SetupError.status
    assert _get(_app(CursorGone("c1"))).status_code == errors.Expired.status


def test_only_an_unknown_exception_answers_500() -> None:
    answer = _get(_app(KeyError("x")))
    assert answer.status_code == 500
    assert answer.json() == {"error": "internal error; see the daemon's log"}


def _calls() -> list[tuple[Path, ast.Call]]:
    found = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                found.append((path, node))
    return found


def test_no_call_site_picks_an_exit_code_or_raises_the_bare_base() -> None:
    bare = [
        f"{path.relative_to(SRC)}:{call.lineno}"
        for path, call in _calls()
        if isinstance(call.func, ast.Name) and call.func.id == "RoostError"
    ]
    numbered = [
        f"{path.relative_to(SRC)}:{call.lineno}"
        for path, call in _calls()
        if any(keyword.arg == "exit_code" for keyword in call.keywords)
    ]
    assert bare == [] and numbered == []


def test_the_web_docs_status_table_agrees() -> None:
    """docs/web.md lists, per status, the failures that answer it: every failure, once."""
    web = table("Errors", CONTRACTS.with_name("web.md"))
    listed = {
        name: int(row["status"])
        for row in web
        for name in re.findall(r"\b[A-Z][A-Za-z]+\b", row["failures"])
        if name in DOCUMENTED
    }
    assert listed == {failure.__name__: failure.status for failure in errors.FAILURES}


def _codes_in_the_tree() -> dict[str, set[str]]:
    """Every ``code=`` given to a call in ``src/roost`` (a literal, or a module's string
    constant), with the names of what was called with it."""
    constants: dict[str, set[str]] = {}
    trees = {path: ast.parse(path.read_text()) for path in SRC.parent.rglob("*.py")}
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                for target in node.targets:
                    if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                        constants.setdefault(target.id, set()).add(node.value.value)
    found: dict[str, set[str]] = {}
    for tree in trees.values():
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            for keyword in call.keywords:
                value = keyword.value
                if keyword.arg != "code":
                    continue
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    codes = {value.value}
                elif isinstance(value, ast.Name) and value.id in constants:
                    codes = constants[value.id]
                else:
                    continue
                called = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "?")
                for code in codes:
                    found.setdefault(code, set()).add(called)
    return found


def test_every_refusal_code_is_in_the_one_table_with_its_failure() -> None:
    """A code spelled at a raise but missing from ``errors.CODES`` (or raised with another
    failure than the table's) would be a code no doc and no client knows of."""
    found = _codes_in_the_tree()
    assert set(found) == set(errors.CODES), set(found) ^ set(errors.CODES)
    failures = {failure.__name__: failure for failure in errors.FAILURES}
    for code, called in found.items():
        raised = {failures[name] for name in called if name in failures}
        assert all(issubclass(failure, errors.CODES[code]) for failure in raised), (code, raised)


def test_every_refusal_code_is_documented_with_its_failure() -> None:
    rows = {row["code"]: row["failure"] for row in table("Refusal codes")}
    assert rows == {code: failure.__name__ for code, failure in errors.CODES.items()}
