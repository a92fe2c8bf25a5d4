"""The "Who may give what" table: a row for every policy and every answer, and the MCP column
is what the code grants an agent (the daemon's tests in tests/mcpserver/test_grants.py show it
through a real client); every code the table names is one the grants refuse with."""

from __future__ import annotations

import pytest

from roost.base.errors import Conflict
from roost.faces.mcp import tools
from roost.truth.roster import pending
from tests.contracts.tables import table

ROWS = table("Who may give what")
ALLOWED = "yes"


def _row(act: str) -> dict[str, str]:
    return next(row for row in ROWS if row["act"] == act)


def test_a_person_may_give_everything_and_each_policy_and_answer_has_a_row() -> None:
    assert all(row["a person"] == ALLOWED for row in ROWS)
    wanted = [f"start a session or a child under {policy}" for policy in tools.STRICTEST_FIRST]
    wanted += [f"answer {answer}" for answer in pending.ANSWERS]
    assert sorted(row["act"] for row in ROWS) == sorted(wanted)


def test_the_codes_are_the_grants_refusals() -> None:
    named = sorted(row["refused with"] for row in ROWS if row["refused with"])
    assert named == sorted([tools.POLICY_TOO_LOOSE, tools.ALLOW_ALWAYS_OFF])
    assert all(bool(row["refused with"]) == (row["an agent over MCP"] != ALLOWED) for row in ROWS)


@pytest.mark.parametrize("policy", tools.STRICTEST_FIRST)
def test_a_policy_row_is_what_a_caller_under_each_policy_may_start(policy: str) -> None:
    row = _row(f"start a session or a child under {policy}")
    for own in tools.STRICTEST_FIRST:
        loose = tools.STRICTEST_FIRST.index(policy) > tools.STRICTEST_FIRST.index(own)
        if (
            row["an agent over MCP"] == ALLOWED
            or row["an agent over MCP"] == f"a headless session under {own}"
        ):
            assert not loose, (policy, own)
            assert tools.child_policy(policy, own) == policy
        else:
            with pytest.raises(Conflict) as refused:
                tools.child_policy(policy, own)
            assert refused.value.extra["code"] == row["refused with"]
    assert tools.child_policy(None, policy) == policy  # no policy named: the caller's own


@pytest.mark.parametrize("answer", pending.ANSWERS)
def test_an_answer_row_is_what_an_agent_may_answer(answer: str) -> None:
    row = _row(f"answer {answer}")
    allow, always = answer != pending.REJECT, answer == pending.ALLOW_ALWAYS
    tools.check_answer(allow=allow, always=always, always_allowed=True)  # the config turned on
    if row["an agent over MCP"] == ALLOWED:
        tools.check_answer(allow=allow, always=always, always_allowed=False)
        return
    assert row["an agent over MCP"] == "with [mcp] allow_always = true in rosterd.toml"
    with pytest.raises(Conflict) as refused:
        tools.check_answer(allow=allow, always=always, always_allowed=False)
    assert refused.value.extra["code"] == row["refused with"]
