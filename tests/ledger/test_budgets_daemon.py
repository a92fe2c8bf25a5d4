"""Budgets and spend through a real ``rosterd``, over real holders and the fake ACP adapter
(``SPEND X`` costs X dollars): every face shows a session's spend and budget, a budget past its
limit is refused by every face that prompts, a person lifts it from the CLI (an agent over MCP
only where the config allows), and the usage verb groups what was spent."""

from __future__ import annotations

import json
from typing import Any

from tests.cli.rosterd.helpers import fails, ok, rosterd
from tests.contracts.tables import names, table
from tests.daemon.fixture import Daemon
from tests.mcpserver.client import ok as tool_ok
from tests.mcpserver.client import refused, unix
from tests.runner.conftest import Headless

DOCS = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}


def budgets(daemon: Daemon, *args: str) -> dict[str, Any]:
    return json.loads(ok(daemon, "budget", *args, "--json"))


def spent(headless: Headless, key: str, amount: float) -> dict[str, Any]:
    """The record once its spend is ``amount`` dollars: the ledger counts a beat after the turn."""
    return headless.daemon.wait_for(
        lambda: (
            (record := headless.record(key)).get("spend")
            and record["spend"]["cost"] == {"USD": amount}
            and record
        )
    )


def listed_row(headless: Headless, name: str) -> str:
    """The session's row of ``rosterd list``, the table a person reads."""
    table = ok(headless.daemon, "list").decode().splitlines()
    return next(line for line in table if line.startswith(name))


def test_a_sessions_budget_is_set_crossed_refused_everywhere_and_lifted_from_the_cli(
    headless: Headless,
) -> None:
    headless.daemon.settings["budget"] = {"warn": 0.5}
    headless.daemon.start()
    key = headless.start(name="tests: budget")["session_key"]
    doc = budgets(headless.daemon, "set", "session", "tests: budget", "1")
    document = "budgets (`budget --json`, `GET /budgets`; `budget set`, `clear --json` and their routes)"
    assert list(doc) == DOCS[document.replace("`", "")]
    [entry] = doc["budgets"]
    assert list(entry) == [
        "scope",
        "target",
        "limit",
        "warn",
        "currency",
        "origin",
        "session_key",
        "period",
        "day",
        "spent",
        "state",
        "reason",
    ]
    assert (entry["target"], entry["limit"], entry["warn"], entry["state"]) == (key, 1.0, 0.5, None)

    assert headless.prompt(key, "SPEND 0.6", wait="idle").status_code == 200
    record = spent(headless, key, 0.6)
    assert (
        list(record["spend"])
        == DOCS["record `spend` (and `roost status --json` `panes[].spend`)".replace("`", "")]
    )
    assert list(record["spend"]["last"]) == DOCS["record `spend` `last`".replace("`", "")]
    assert (record["spend"]["turns"], record["spend"]["unpriced"]) == (1, 0)
    warned = headless.daemon.wait_for(lambda: headless.record(key)["budget"])
    assert (
        list(warned) == DOCS["record `budget` (and `roost status --json` `panes[].budget`)".replace("`", "")]
    )
    assert (warned["state"], warned["scope"], warned["crossed_by"]) == ("warning", "session", key)
    assert listed_row(headless, "tests: budget").endswith("  0.60 USD near budget")

    assert headless.prompt(key, "SPEND 1.1", wait="idle").status_code == 200
    held = headless.daemon.wait_for(
        lambda: (b := headless.record(key)["budget"]) and b["state"] == "exceeded" and b
    )
    assert held["lift"] == f"rosterd budget lift session {key}"
    assert listed_row(headless, "tests: budget").endswith("  1.70 USD over budget")
    refusal = headless.prompt(key, "hello")
    assert refusal.status_code == 409
    body = refusal.json()
    assert (body["code"], body["budget"]["state"]) == ("over_budget", "exceeded")
    assert body["error"].startswith("tests: budget: this session has spent 1.70 USD of 1.00 USD")
    said = fails(headless.daemon, 1, "prompt", key, "hello")
    assert (
        "no prompt is sent until a person lifts it" in said and f"rosterd budget lift session {key}" in said
    )

    mcp = unix(headless.daemon)
    state = tool_ok(mcp, "session.read_state", name=key)
    assert (state["spend"]["cost"], state["budget"]["state"]) == ({"USD": 1.7}, "exceeded")
    sent = refused(unix(headless.daemon), "session.send", name=key, prompt="hello")
    assert (sent["status"], sent["code"]) == (409, "over_budget")
    lift = refused(unix(headless.daemon), "budget.lift", scope="session", target=key)
    assert (lift["status"], lift["code"]) == (409, "lift_off")
    listed = tool_ok(unix(headless.daemon), "budget.list")
    assert listed["budgets"][0]["state"] == "exceeded"

    lifted = json.loads(ok(headless.daemon, "budget", "lift", "session", key, "--json"))
    assert list(lifted) == DOCS["lift (`budget lift --json`, `POST /budgets/lift`)".replace("`", "")]
    assert list(lifted["lift"]) == DOCS["lift `lift`".replace("`", "")]
    assert lifted["lift"]["period"] == f"session:{key}"
    assert headless.daemon.wait_for(lambda: headless.record(key)["budget"]["state"] == "lifted")
    assert headless.prompt(key, "hello", wait="idle").status_code == 200
    assert listed_row(headless, "tests: budget").endswith("  1.70 USD")  # lifted: nothing holds it

    printed = ok(headless.daemon, "budget").decode()
    assert "session" in printed and "1.00 USD" in printed and "lifted" in printed
    budgets(headless.daemon, "clear", "session", key)
    assert fails(headless.daemon, 1, "budget", "clear", "session", key).startswith(
        "rosterd budget: no budget"
    )


def test_the_budget_verb_and_routes_refuse_what_they_cannot_keep(headless: Headless) -> None:
    headless.daemon.start()
    for args in (
        ("set", "week", "1"),
        ("set", "day"),
        ("set", "day", "x", "1"),
        ("set", "day", "lots"),
        ("lift",),
    ):
        assert fails(headless.daemon, 1, "budget", *args)
    assert fails(headless.daemon, 1, "budget", "set", "day", "1", "--warn", "2").startswith(
        "rosterd budget: warn must be a fraction of the limit"
    )
    assert (
        fails(headless.daemon, 1, "budget", "set", "session", "nobody", "1")
        == "rosterd budget: no session 'nobody'\n"
    )
    with headless.daemon.unix() as client:
        for body, field in (
            ({"scope": "day", "limit": 0}, "limit"),
            ({"scope": "day", "limit": 1, "warn": 0}, "warn"),
            ({"scope": "folder", "target": "rel", "limit": 1}, "target"),
            ({"scope": "year", "limit": 1}, "scope"),
            ({"scope": "day", "limit": 1, "extra": 1}, "extra"),
        ):
            answer = client.post("/budgets", json=body)
            assert answer.status_code == 400, (body, answer.text)
            assert answer.json()["field"] == field, answer.json()
        assert client.post("/budgets/clear", json={"scope": "day"}).status_code == 404
    folder = str(headless.daemon.roost.root)
    doc = budgets(headless.daemon, "set", "folder", folder, "2", "--warn", "0.25")
    assert [(b["scope"], b["target"], b["warn"], b["day"] is not None) for b in doc["budgets"]] == [
        ("folder", folder, 0.25, True)
    ]


def test_a_day_exceeded_by_one_session_cancels_anothers_turn_and_holds_both(headless: Headless) -> None:
    headless.daemon.settings["budget"] = {"day": 1.0}
    headless.daemon.start()
    spender = headless.start(name="tests: spender")["session_key"]
    busy = headless.start(name="tests: busy")["session_key"]
    assert headless.prompt(busy, "SLOW 30").status_code == 200
    headless.until(busy, activity="active")
    assert headless.prompt(spender, "SPEND 1.5", wait="idle").status_code == 200
    stopped = headless.until(busy, timeout=20, activity="idle")
    assert stopped["activity_event"] == "cancelled"
    for key in (spender, busy):
        budget = headless.daemon.wait_for(lambda key=key: headless.record(key)["budget"])
        assert (budget["state"], budget["scope"]) == ("exceeded", "day")
    assert headless.record(spender)["budget"]["crossed_by"] == spender
    assert headless.record(busy)["budget"]["crossed_by"] == spender
    assert headless.prompt(busy, "hello").json()["code"] == "over_budget"


def test_an_agent_may_lift_a_budget_over_mcp_where_a_person_allowed_it(headless: Headless) -> None:
    headless.daemon.settings["budget"] = {"day": 0.5}
    headless.daemon.settings["mcp"] = {"lift_budgets": True}
    headless.daemon.start()
    key = headless.start()["session_key"]
    assert headless.prompt(key, "SPEND 0.7", wait="idle").status_code == 200
    headless.daemon.wait_for(lambda: (headless.record(key)["budget"] or {}).get("state") == "exceeded")
    lifted = tool_ok(unix(headless.daemon), "budget.lift", scope="day")
    assert lifted["lift"]["period"].startswith("day:")
    assert headless.daemon.wait_for(lambda: headless.record(key)["budget"]["state"] == "lifted")


def test_usage_groups_by_session_folder_day_and_node(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: one")["session_key"]
    second = headless.start(name="tests: two")["session_key"]
    for key, cost in ((first, "0.25"), (second, "0.5")):
        assert headless.prompt(key, f"SPEND {cost}", wait="idle").status_code == 200
    spent(headless, second, 0.5)
    by_session = json.loads(ok(headless.daemon, "usage", "--by", "session", "--json"))
    assert (
        list(by_session)
        == DOCS["usage with `--by` (`usage --by B --json`, `GET /usage?by=B`)".replace("`", "")]
    )
    rows = {row["session_key"]: row for row in by_session["rows"]}
    assert list(rows[first]) == DOCS["usage row, `--by session`".replace("`", "")]
    assert (rows[first]["name"], rows[first]["cost"]) == ("tests: one", {"USD": 0.25})
    [folder] = json.loads(ok(headless.daemon, "usage", "--by", "folder", "--json"))["rows"]
    assert list(folder) == DOCS["usage row, `--by folder`".replace("`", "")]
    assert (folder["folder"], folder["sessions"], folder["cost"]) == (
        str(headless.daemon.roost.root),
        2,
        {"USD": 0.75},
    )
    [day] = json.loads(ok(headless.daemon, "usage", "--by", "day", "--json"))["rows"]
    assert list(day) == DOCS["usage row, `--by day`".replace("`", "")]
    [node] = json.loads(ok(headless.daemon, "usage", "--by", "node", "--json"))["rows"]
    assert list(node) == DOCS["usage row, `--by node`".replace("`", "")]
    assert node["node"] == json.loads(ok(headless.daemon, "status", "--json"))["node"]
    table_lines = ok(headless.daemon, "usage", "--by", "folder").decode().splitlines()
    assert table_lines[0].split()[:2] == ["FOLDER", "TURNS"]
    assert table_lines[-1].split()[0] == "total"
    assert fails(headless.daemon, 1, "usage", "--by", "harness") == (
        "rosterd usage: --by must be one of session, folder, node, day\n"
    )
    assert rosterd(headless.daemon, "usage", "--by", "day").returncode == 0
