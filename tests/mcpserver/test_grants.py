"""No agent gets more than a person gave it: over MCP a session starts others under its own
permission policy or a stricter one, a caller in no headless session counts as ``attention``,
and ``allow_always`` (a person's answer) is refused unless ``[mcp] allow_always`` is on."""

from __future__ import annotations

import os
from typing import Any

from tests.mcpserver.client import ok, refused, tcp, through, unix
from tests.runner.conftest import Headless, sessions


def _keys(headless: Headless) -> set[str]:
    return {record["session_key"] for record in sessions(headless)}


def test_a_session_under_attention_may_not_spawn_a_child_under_auto(headless: Headless) -> None:
    headless.daemon.start()
    strict = headless.start(name="strict")["session_key"]
    before = _keys(headless)
    looser = through(headless, strict, "session.spawn", harness="fake", name="loose", policy="auto")
    assert looser["is_error"] is True
    assert looser["result"] == {
        "error": "policy auto is looser than the caller's own (attention); only a person may start a "
        "session under a looser policy, with rosterd start, the API or the web app",
        "status": 409,
        "code": "policy_too_loose",
    }
    assert _keys(headless) == before  # nothing was started
    child = through(headless, strict, "session.spawn", harness="fake", policy="attention")["result"]
    assert (child["record"]["parent_session_key"], child["record"]["permission_policy"]) == (
        strict,
        "attention",
    )


def test_a_person_still_starts_a_child_under_a_looser_policy(headless: Headless) -> None:
    headless.daemon.start()
    strict = headless.start(name="strict")["session_key"]
    answer = headless.post(
        f"/sessions/{strict}/spawn",
        {"harness": "fake", "cwd": str(headless.daemon.roost.root), "policy": "auto"},
    )
    assert answer.status_code == 201, answer.text
    assert answer.json()["record"]["permission_policy"] == "auto"


def test_a_caller_in_no_headless_session_counts_as_attention(headless: Headless) -> None:
    headless.daemon.start()
    folder = str(headless.daemon.roost.root)
    before = _keys(headless)
    for client in (unix(headless.daemon), tcp(headless.daemon, headless.daemon.token)):
        answer = refused(client, "session.spawn", harness="fake", cwd=folder, policy="auto")
        assert (answer["status"], answer["code"]) == (409, "policy_too_loose"), answer
    assert _keys(headless) == before
    inherited = ok(unix(headless.daemon), "session.spawn", harness="fake", cwd=folder)["record"]
    assert inherited["permission_policy"] == "attention"


def test_a_policy_a_process_claims_for_itself_grants_nothing(headless: Headless) -> None:
    """Any local process may register itself (``POST /register``) saying it is headless under
    ``auto``; only a session of the runner, which a person started, has a policy to pass on."""
    headless.daemon.start()
    folder = str(headless.daemon.roost.root)
    claimed = headless.post(
        "/register",
        {
            "pid": os.getpid(),
            "harness": "fake",
            "lane": "headless",
            "permission_policy": "auto",
            "cwd": folder,
        },
    )
    assert claimed.status_code == 201, claimed.text
    key = claimed.json()["session_key"]
    assert ok(unix(headless.daemon), "session.list")["caller"] == key  # the test process is that session
    looser = refused(unix(headless.daemon), "session.spawn", harness="fake", policy="auto")
    assert (looser["status"], looser["code"]) == (409, "policy_too_loose")
    child = ok(unix(headless.daemon), "session.spawn", harness="fake")["record"]
    assert (child["parent_session_key"], child["permission_policy"]) == (key, "attention")


def _pending(headless: Headless, key: str) -> dict[str, Any]:
    answer = ok(
        unix(headless.daemon), "session.send", name=key, prompt="PERMIT", wait_until="needs_attention"
    )
    assert answer["wait"]["reached"], answer
    return answer["record"]


def test_allow_always_over_mcp_is_refused_and_the_request_stays_pending(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    asked = _pending(headless, key)["pending"]
    answer = refused(unix(headless.daemon), "session.allow", name=key, always=True)
    assert answer == {
        "error": "allow_always is a person's answer and is off for MCP; allow once, or deny "
        "([mcp] allow_always in rosterd.toml turns it on)",
        "status": 409,
        "code": "allow_always_off",
    }
    other = headless.start(name="other")["session_key"]
    through_a_session = through(headless, other, "session.allow", name=key, always=True)
    assert (through_a_session["is_error"], through_a_session["result"]["code"]) == (True, "allow_always_off")
    record = headless.record(key)
    assert (record["activity"], record["pending"]) == ("needs_attention", asked)
    ok(unix(headless.daemon), "session.allow", name=key)
    assert headless.until(key, activity="idle")["recap"] == "tool completed (allow)"


def test_allow_always_over_mcp_when_the_config_turns_it_on(headless: Headless) -> None:
    headless.daemon.settings["mcp"] = {"allow_always": True}
    headless.daemon.start()
    key = headless.start()["session_key"]
    _pending(headless, key)
    ok(unix(headless.daemon), "session.allow", name=key, always=True)
    assert headless.until(key, activity="idle")["recap"] == "tool completed (allow_always)"
