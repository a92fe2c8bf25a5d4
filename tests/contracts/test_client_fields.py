"""The record fields docs/contracts.md says only a claim fills: a live session's stays null
through the scan's passes, with its revision still, and a claim that carries one fills it."""

from __future__ import annotations

import dataclasses
import time

from roost.truth.roster import records
from roost.truth.roster.claimschema import CLAIMABLE
from tests.api.helpers import about, sleeper
from tests.contracts.tables import table
from tests.daemon.fixture import Daemon

FIELDS = [row["field"] for row in table("Record fields rosterd leaves to its clients")]


def test_each_is_a_record_field_a_claim_may_carry() -> None:
    assert FIELDS == ["load"]
    names = [f.name for f in dataclasses.fields(records.Record)]
    assert all(name in names and name in CLAIMABLE for name in FIELDS)


def test_rosterd_fills_none_of_them_and_a_claim_may(running: Daemon) -> None:
    with sleeper() as proc, running.unix() as client:
        answer = client.post("/claim", json=about(proc, source="hook", activity="working"))
        assert answer.status_code == 200, answer.text
        key = answer.json()["session_key"]
        time.sleep(1.0)  # five scan passes at the fixture's 200 ms: the scan has had its say
        settled = client.get(f"/sessions/{key}").json()
        time.sleep(1.0)
        later = client.get(f"/sessions/{key}").json()
        assert later["revision"] == settled["revision"], "a scan pass changed a record no one touched"
        assert {name: later[name] for name in FIELDS} == dict.fromkeys(FIELDS)
        given = {"load": {"cpu_pct": 12, "rss_mb": 300}}
        answer = client.post("/claim", json=about(proc, source="hook", fields=given))
        assert answer.status_code == 200, answer.text
        assert client.get(f"/sessions/{key}").json()["load"] == given["load"]
