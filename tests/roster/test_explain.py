"""``explain``: which source set each field, what lost to it, and what was refused and why."""

from __future__ import annotations

import json

from roost.truth.roster import Roster
from tests.roster.helpers import ROOT, Clock, claim, explained, key, roster

SECRET = "the reply text that must never be copied"


def test_explain_names_the_source_time_and_claim_behind_each_field(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "scan", fields={"harness": "claude", "cwd": "/src"}))
    clock.advance(1)
    hub.apply(
        claim(clock, "hook", activity="blocked", event="permission", seq=4, fields={"pending": {"x": 1}})
    )
    view = explained(hub)
    assert view["session_key"] == key()
    assert (view["status_epoch"], view["occupant_id"], view["revision"]) == (7, 1, 2)
    assert view["sources"] == ["hook", "scan"]
    assert view["fields"]["harness"]["source"] == "scan"
    assert view["fields"]["harness"]["set_at"] == "2023-11-14T22:13:20.000Z"
    assert view["fields"]["pid"]["source"] == "scan", "the claim that brought the occupant"
    for name in ("activity", "activity_event", "activity_at", "error_reason", "pending"):
        assert view["fields"][name] == {
            "source": "hook",
            "set_at": "2023-11-14T22:13:21.000Z",
            "claim": {
                "source": "hook",
                "seq": 4,
                "event": "permission",
                "activity": "blocked",
                "received_at": "2023-11-14T22:13:21.000Z",
            },
        }
    assert view["rejected"] == [] and view["shadowed"] == {} and view["leases"] == {}
    json.dumps(view)


def test_explain_lists_shadowed_values_and_refused_claims_with_reasons(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "acp", activity="working", fields={"name": "api"}))
    hub.apply(claim(clock, "hook", activity="idle", fields={"name": "other"}))
    malformed = hub.apply(claim(clock, "gossip", activity="idle"))
    assert (malformed.accepted, malformed.session_key) == (False, None), "not attributed to any session"
    view = explained(hub)
    assert [entry["source"] for entry in view["shadowed"]["activity"]] == ["hook"]
    assert [entry["source"] for entry in view["shadowed"]["name"]] == ["hook"]
    assert [(entry["field"], entry["reason"]) for entry in view["rejected"]] == [
        ("name", "name: acp set it, which outranks hook"),
        ("activity", "activity: acp set it, which outranks hook"),
    ]


def test_explain_keeps_only_the_newest_refusals(clock: Clock) -> None:
    hub = roster(clock, rejected_kept=3)
    hub.apply(claim(clock, "hook", activity="working", seq=100))
    for seq in range(10):
        hub.apply(claim(clock, "hook", activity="idle", seq=seq))
    reasons = [entry["reason"] for entry in explained(hub)["rejected"]]
    assert reasons == [f"out of order: hook seq {seq} is older than 100" for seq in (7, 8, 9)]


def test_explain_shows_the_integration_lease(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "integration", activity="working"))
    assert explained(hub)["leases"] == {
        "integration": {
            "heard_at": "2023-11-14T22:13:20.000Z",
            "expires_at": "2023-11-14T22:13:50.000Z",
            "expired": False,
        }
    }
    clock.advance(30)
    assert explained(hub)["leases"]["integration"]["expired"] is True


def test_explain_says_who_ended_a_session(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "hook", activity="working"))
    hub.apply(claim(clock, "scan", ended="crash"))
    fields = explained(hub)["fields"]
    assert {fields[name]["source"] for name in ("liveness", "ended_at", "ended_reason")} == {"scan"}


def test_explain_never_copies_a_fields_value(hub: Roster, clock: Clock) -> None:
    hub.apply(claim(clock, "acp", activity="idle", fields={"recap": SECRET, "pending": {"summary": SECRET}}))
    hub.apply(claim(clock, "hook", activity="idle", fields={"recap": SECRET}))
    assert SECRET not in json.dumps(explained(hub))


def test_explain_of_an_unknown_session_is_none(hub: Roster) -> None:
    assert hub.explain(key(ROOT)) is None
