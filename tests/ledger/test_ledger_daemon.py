"""The journal and usage through a real ``rosterd``: real holders over the fake ACP adapter, a
pane's claims, restarts, and the two verbs' exit codes and documents."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

from tests.api.helpers import about, sleeper
from tests.cli.rosterd.helpers import fails, ok, rosterd, same_as_api
from tests.contracts.tables import names, table
from tests.daemon.fixture import Daemon
from tests.runner.conftest import Headless

MARKER = "LEDGER-MARKER-91c2e"
"""In every prompt (and so every reply) a test sends: it must reach no ledger file."""


def ledger_dir(daemon: Daemon) -> Path:
    return daemon.roost.root / "state" / "roost" / "ledger"


def journal(daemon: Daemon, *args: str) -> list[dict[str, Any]]:
    return json.loads(ok(daemon, "journal", "--json", *args))["entries"]


def usage(daemon: Daemon, *args: str) -> dict[str, Any]:
    return json.loads(ok(daemon, "usage", "--json", *args))


def counted(daemon: Daemon, turns: int) -> dict[str, Any]:
    """The usage document once it counts ``turns``: the ledger writes a beat after a wait for
    idle returns."""
    return daemon.wait_for(lambda: (doc := usage(daemon))["total"]["turns"] == turns and doc)


def steps(entries: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["kind"], e["session_key"], e.get("reason")) for e in entries]


def nowhere(daemon: Daemon, text: str) -> None:
    files = list(ledger_dir(daemon).iterdir())
    assert files
    for path in files:
        assert text not in path.read_text(), path


def test_a_headless_session_start_turns_suspend_resume_crash_and_stop_are_journalled(
    headless: Headless,
) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: ledger")
    key = first["session_key"]
    assert headless.prompt(key, f"SPEND 0.25 {MARKER}", wait="idle").json()["wait"]["reached"]
    assert headless.prompt(key, f"hello {MARKER}", wait="idle").json()["record"]["recap"].endswith(MARKER)
    ok(headless.daemon, "suspend", key)
    ok(headless.daemon, "resume", key)
    headless.prompt(key, "CRASH")
    assert headless.until(key, liveness="ended")["ended_reason"] == "crash"
    again = headless.daemon.wait_for(
        lambda: headless.daemon.record_where(lambda r: r["session_key"] != key and r["liveness"] == "live"),
        what="the session resumed after its crash",
    )["session_key"]
    headless.until(again, activity_event="resumed_after_crash")
    assert headless.post(f"/sessions/{again}/stop").status_code == 200

    entries = headless.daemon.wait_for(
        lambda: (found := journal(headless.daemon)) and len(found) >= 7 and found
    )
    assert steps(entries) == [
        ("start", key, "new"),
        ("suspend", key, "requested"),
        ("resume", key, "resumed"),
        ("end", key, "crash"),
        ("start", again, "new"),
        ("resume", again, "after_crash"),
        ("end", again, "exit"),
    ]
    for entry in entries:
        assert (entry["name"], entry["harness"], entry["lane"]) == ("tests: ledger", "fake", "headless")
        assert entry["session_id"] in (None, first["session_id"])  # null until the adapter said it
    assert [e["session_id"] for e in entries if e["kind"] == "end"] == [first["session_id"]] * 2
    assert entries[0]["started_at"] == first["started_at"]
    assert [e["at"] for e in entries] == sorted(e["at"] for e in entries)

    spent = counted(headless.daemon, 2)
    assert spent["since"] is None
    assert spent["rows"] == [
        {
            "turns": 2,
            "sessions": 1,
            "tokens": {
                "input": 6,
                "output": 10,
                "thought": 0,
                "cached_read": 0,
                "cached_write": 0,
                "total": 16,
            },
            "cost": {"USD": 0.25},
            "unpriced": 0,
            "harness": "fake",
            "model": "fake-small",
        }
    ]
    assert spent["total"] == {k: v for k, v in spent["rows"][0].items() if k not in ("harness", "model")}
    nowhere(headless.daemon, MARKER)
    nowhere(headless.daemon, "echo: ")  # no reply, no recap


def test_the_idle_timer_suspends_with_its_reason_and_a_prompt_resumes(headless: Headless) -> None:
    headless.daemon.settings["runner"] = {"idle_timeout_s": 1}
    headless.daemon.start()
    key = headless.start(model="fake-large")["session_key"]
    headless.prompt(key, f"hi {MARKER}", wait="idle")
    headless.until(key, timeout=10, liveness="suspended")
    headless.prompt(key, f"again {MARKER}", wait="idle")
    counted(headless.daemon, 2)
    entries = headless.daemon.wait_for(
        lambda: (found := journal(headless.daemon)) and len(found) >= 3 and found
    )
    assert steps(entries)[:3] == [
        ("start", key, "new"),
        ("suspend", key, "idle_timeout"),
        ("resume", key, "resumed"),
    ]
    [row] = usage(headless.daemon)["rows"]
    assert (row["model"], row["turns"], row["tokens"]["total"]) == ("fake-large", 2, 16)
    nowhere(headless.daemon, MARKER)


def test_a_panes_start_and_end_are_journalled_in_the_interactive_lane(running: Daemon) -> None:
    with sleeper() as proc, running.unix() as client:
        body = about(
            proc, activity="working", fields={"harness": "claude", "lane": "interactive", "name": "pane"}
        )
        answer = client.post("/claim", json=body)
        assert answer.status_code == 200, answer.text
        key = answer.json()["session_key"]
    running.wait_for(
        lambda: running.record_where(lambda r: r["session_key"] == key and r["liveness"] == "ended")
    )
    entries = running.wait_for(lambda: (found := journal(running)) and len(found) >= 2 and found)
    assert steps(entries) == [("start", key, "new"), ("end", key, "exit")]
    assert {(e["name"], e["harness"], e["lane"]) for e in entries} == {("pane", "claude", "interactive")}
    assert usage(running)["rows"] == []


def test_a_restart_starts_no_session_twice_and_counts_no_turn_twice(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    headless.prompt(key, "SPEND 0.5", wait="idle")
    headless.daemon.stop()
    headless.daemon.start()
    headless.until(key, activity="idle", liveness="live")
    headless.prompt(key, "SPEND 0.25", wait="idle")
    # A stop drains what the ledger has not written yet (the turn above); a kill -9 does not, so
    # wait for the line first: a turn that ends with no rosterd to see it is not counted.
    counted(headless.daemon, 2)
    headless.daemon.stop(signal.SIGKILL)
    headless.daemon.start()
    headless.until(key, activity="idle", liveness="live")
    headless.prompt(key, "one more", wait="idle")
    counted(headless.daemon, 3)
    time.sleep(0.5)  # nothing more comes
    entries = journal(headless.daemon)
    assert steps(entries) == [("start", key, "new")]
    spent = usage(headless.daemon)["total"]
    assert (spent["turns"], spent["tokens"]["total"], spent["cost"]) == (3, 24, {"USD": 0.75})


def test_since_chooses_the_newer_lines_and_a_bad_one_is_exit_1(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    headless.prompt(key, "hi", wait="idle")
    time.sleep(1.1)
    moment = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    time.sleep(1.1)
    headless.prompt(key, "again", wait="idle")
    counted(headless.daemon, 2)
    assert len(journal(headless.daemon, "--since", "1h")) == 1
    assert journal(headless.daemon, "--since", moment) == []
    assert usage(headless.daemon, "--since", moment)["total"]["turns"] == 1
    assert usage(headless.daemon, "--since=15m")["total"]["turns"] == 2
    assert usage(headless.daemon, "--since", moment)["since"] == moment.replace("Z", ".000Z")
    for verb in ("journal", "usage"):
        stderr = fails(headless.daemon, 1, verb, "--since", "yesterday")
        assert stderr == (
            f"rosterd {verb}: --since must be a span back from now like 7d, 3h or 15m (units s, m, h, d, w), "
            "or an RFC 3339 time like 2026-12-01T09:00:00Z\n"
        )
        assert fails(headless.daemon, 1, verb, "--since", "2026-02-31T00:00:00Z").startswith(
            f"rosterd {verb}: --since"
        )
        by = " [--by session|folder|node|day]" if verb == "usage" else ""
        assert (
            fails(headless.daemon, 1, verb, "--bogus")
            == f"usage: rosterd {verb} [--swarm] [--since T]{by} [--json]\n"
        )
        with headless.daemon.unix() as client:
            answer = client.get(f"/{verb}", params={"since": "<b>yesterday</b>"})
            assert answer.status_code == 400
            assert answer.json() == {
                "error": "since must be a span back from now like 7d, 3h or 15m (units s, m, h, d, w), "
                "or an RFC 3339 time like 2026-12-01T09:00:00Z",
                "field": "since",
            }
            extra, twice = {"since": "1h", "limit": "3"}, {"since": ["1h", "2h"]}
            for query, field in ((extra, "limit"), (twice, "since")):
                answer = client.get(f"/{verb}", params=query)
                assert answer.status_code == 400
                said = (
                    "the one parameter taken is since"
                    if verb == "journal"
                    else "the parameters taken are since, by"
                )
                assert answer.json() == {"error": f"{said}, once", "field": field}


def test_the_verbs_print_for_people_and_exit_2_without_a_daemon(headless: Headless) -> None:
    for verb in ("journal", "usage"):
        stderr = fails(headless.daemon, 2, verb)
        assert "rosterd" in stderr
    headless.daemon.start()
    key = headless.start(name="tests: people")["session_key"]
    headless.prompt(key, "SPEND 1.5", wait="idle")
    counted(headless.daemon, 1)
    printed = ok(headless.daemon, "journal").decode().splitlines()
    assert len(printed) == 1
    assert printed[0].split()[1:] == ["start", key, "tests:", "people", "fake", "headless", "new"]
    table = ok(headless.daemon, "usage").decode().splitlines()
    head = ["HARNESS", "MODEL", "TURNS", "SESSIONS", "INPUT", "OUTPUT", "CACHE", "READ", "CACHE", "WRITE"]
    assert table[0].split() == [*head, "TOTAL", "COST"]
    assert table[1].split() == ["fake", "fake-small", "1", "1", "3", "5", "0", "0", "8", "1.5000", "USD"]
    assert table[2].split() == ["total", "1", "1", "3", "5", "0", "0", "8", "1.5000", "USD"]
    proc = rosterd(headless.daemon, "help")
    assert b"rosterd journal [--swarm] [--since T] [--json]" in proc.stdout
    assert b"rosterd usage [--swarm] [--since T] [--by session|folder|node|day] [--json]" in proc.stdout


def test_the_documents_carry_the_fields_docs_contracts_tables(headless: Headless) -> None:
    documents = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}
    every = documents["journal entry (each of entries), every kind"]
    own = {
        "start": documents["journal entry, kind start, after those"],
        **dict.fromkeys(
            ("end", "suspend", "resume"), documents["journal entry, kinds end, suspend, resume, after those"]
        ),
    }
    headless.daemon.start()
    key = headless.start()["session_key"]
    headless.prompt(key, "SPEND 0.1", wait="idle")
    counted(headless.daemon, 1)
    ok(headless.daemon, "suspend", key)
    ok(headless.daemon, "resume", key)
    ok(headless.daemon, "stop", key)
    body = headless.daemon.wait_for(
        lambda: (
            (doc := json.loads(ok(headless.daemon, "journal", "--json"))) and len(doc["entries"]) == 4 and doc
        )
    )
    assert list(body) == documents["journal (journal --json, GET /journal)"]
    assert [entry["kind"] for entry in body["entries"]] == ["start", "suspend", "resume", "end"]
    for entry in body["entries"]:
        assert list(entry) == every + own[entry["kind"]], entry
    spent = usage(headless.daemon)
    assert list(spent) == documents["usage (usage --json, GET /usage)"]
    [row] = spent["rows"]
    assert list(row) == documents["usage row (each of rows)"]
    assert list(spent["total"]) == documents["usage total"]
    assert list(row["tokens"]) == list(spent["total"]["tokens"]) == documents["usage tokens"]
    for verb in ("journal", "usage"):
        assert same_as_api(headless.daemon, f"/{verb}", verb, "--json")
