"""``rosterd name KEY LABEL | rosterd name KEY --clear``: a display name every client sees."""

from __future__ import annotations

import json
import signal

from tests.cli.rosterd.helpers import GENEROUS, badged, body, fails, ok, session_of
from tests.conftest import Roost
from tests.daemon.fixture import Daemon


def test_name_sets_and_clear_removes_the_display_name(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "working", session="naming")
    record = session_of(running, pane)
    key = record["session_key"]
    assert record["name"] is None

    assert ok(running, "name", key, "echo: tests") == f"{key}: named echo: tests\n".encode()
    assert json.loads(body(running, f"/sessions/{key}"))["name"] == "echo: tests"
    assert json.loads(ok(running, "read", "echo: tests", "--json"))["session_key"] == key

    assert ok(running, "name", "echo: tests", "--clear") == f"{key}: name cleared, shown as [?]\n".encode()
    assert json.loads(body(running, f"/sessions/{key}"))["name"] is None
    fails(running, 1, "read", "echo: tests")


def test_name_by_pid_and_its_json_is_the_daemons_answer(roost: Roost, running: Daemon) -> None:
    pane = badged(roost, "idle", session="naming")
    record = session_of(running, pane)
    printed = ok(running, "name", str(record["pid"]), "foxtrot", "--json")
    assert printed.endswith(b"\n") and printed.count(b"\n") == 1
    answer = json.loads(printed)
    assert (answer["accepted"], answer["session_key"]) == (True, record["session_key"])
    assert answer["record"]["name"] == "foxtrot"
    assert printed[:-1] == json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode()
    cleared = json.loads(ok(running, "name", "foxtrot", "--clear", "--json"))
    assert cleared["record"]["name"] is None and cleared["seq"] > answer["seq"]


def test_a_label_may_start_with_a_dash_after_double_dash(roost: Roost, running: Daemon) -> None:
    key = session_of(running, badged(roost, "idle", session="naming"))["session_key"]
    ok(running, "name", key, "--", "-odd-")
    assert json.loads(body(running, f"/sessions/{key}"))["name"] == "-odd-"


def test_naming_an_unknown_session_or_with_an_empty_label_is_a_user_error(
    roost: Roost, running: Daemon
) -> None:
    assert fails(running, 1, "name", "nope", "label") == "rosterd name: no session 'nope'\n"
    key = session_of(running, badged(roost, "idle", session="naming"))["session_key"]
    assert fails(running, 1, "name", key, " ") == "rosterd name: name may not be blank\n"


def _named_pane(roost: Roost, running: Daemon) -> tuple[str, dict]:
    """A pane that ``roost spawn one`` opened (so its hook badge says the name ``one``), its
    program badged idle; the pane and its session's record."""
    spawned = roost.run("spawn", "one", "roost state idle; exec sleep 600")
    assert spawned.returncode == 0, spawned.stderr
    pane = spawned.stdout.strip()
    record = running.wait_for(lambda: (r := session_of(running, pane))["name"] == "one" and r, GENEROUS)
    return pane, record


def _restart(daemon: Daemon, signum: int = signal.SIGTERM) -> None:
    daemon.stop(signum)
    daemon.start()


def test_a_name_given_to_a_pane_survives_restarts_until_cleared(roost: Roost, running: Daemon) -> None:
    pane, record = _named_pane(roost, running)
    key = record["session_key"]
    assert ok(running, "name", str(record["pid"]), "twin") == f"{key}: named twin\n".encode()

    _restart(running, signal.SIGKILL)  # nothing depends on a clean stop
    after = session_of(running, pane)
    assert (after["session_key"], after["name"]) == (key, "twin")
    assert json.loads(ok(running, "read", "twin", "--json"))["session_key"] == key
    _restart(running)
    assert session_of(running, pane)["name"] == "twin"

    ok(running, "name", "twin", "--clear")
    _restart(running)
    assert session_of(running, pane)["name"] == "one"  # the pane's own name, as before any was given


def test_a_kept_name_does_not_pass_to_a_new_process_in_the_same_pane(roost: Roost, running: Daemon) -> None:
    pane, record = _named_pane(roost, running)
    ok(running, "name", record["session_key"], "twin")
    kept = running.roost.root / "state" / "roost" / "names.json"
    assert [n["name"] for n in json.loads(kept.read_text())["names"]] == ["twin"]

    running.stop()
    roost.tmux("respawn-pane", "-k", "-t", pane, "roost state idle; exec sleep 600")
    running.start()
    newcomer = running.wait_for(
        lambda: (r := session_of(running, pane))["pid"] != record["pid"] and r, GENEROUS, "the new process"
    )
    assert newcomer["session_key"] != record["session_key"]
    assert newcomer["name"] == "one"
    assert json.loads(kept.read_text())["names"] == []  # its process ended: the name went with it
    fails(running, 1, "read", "twin")
