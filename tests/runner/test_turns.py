"""A headless session's turns as the faces tell them: ``rosterd prompt --wait`` prints this
turn's recap or nothing (and says which), and a daemon's restart leaves ``activity_at`` where
the session's last activity put it. A real daemon, real holders, the fake ACP adapter."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime

from tests.conftest import BIN
from tests.runner.conftest import Headless

NOT_YET = "rosterd prompt: no reply yet: this turn has not ended (the session's recap is an earlier turn's)\n"


def _rosterd(headless: Headless, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "rosterd"), *args], env=headless.daemon.env, capture_output=True, text=True, timeout=60
    )


def test_prompt_wait_prints_this_turns_recap_or_nothing_and_says_which(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="turns")["session_key"]
    done = _rosterd(headless, "prompt", "turns", "first", "--wait", "idle")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{key}: prompted; turns done\necho: first\n"  # in the words a person reads

    # The wait ends before the turn does: the last turn's recap is not this one's answer.
    slow = _rosterd(headless, "prompt", "turns", "SLOW 30", "--wait", "idle", "--timeout", "1")
    assert (slow.returncode, slow.stdout) == (1, f"{key}: prompted; turns working\n")
    assert slow.stderr == NOT_YET + "rosterd prompt: the wait for idle ended with the session working\n"
    assert headless.post(f"/sessions/{key}/cancel").status_code == 200
    assert headless.until(key, activity_event="cancelled")["recap"] == "working"

    # Waiting for a person: the turn runs on, so it has no reply yet, in words and in --json.
    asked = _rosterd(headless, "prompt", "turns", "PERMIT", "--wait", "needs_attention")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == f"{key}: prompted; turns needs input\n  waits on: rm -rf build\n"
    assert asked.stderr == NOT_YET
    assert headless.post(f"/sessions/{key}/permission", {"option": "allow"}).status_code == 200
    headless.until(key, activity="idle")
    asked = _rosterd(headless, "prompt", "turns", "PERMIT", "--wait", "needs_attention", "--json")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["wait"] == {"until": "needs_attention", "reached": True, "stale": True}
    assert answer["record"]["recap"] == "tool completed (allow)"  # the record as it is, stale flagged
    assert asked.stderr == NOT_YET
    assert headless.post(f"/sessions/{key}/permission", {"option": "reject"}).status_code == 200
    headless.until(key, activity="idle")

    # A turn that ended with no message: nothing printed, and said so; --json: not stale.
    bare = _rosterd(headless, "prompt", "turns", "COUNT 0", "--wait", "idle", "--json")
    assert bare.returncode == 0, bare.stderr
    answer = json.loads(bare.stdout)
    assert answer["wait"] == {"until": "idle", "reached": True, "stale": False}
    assert answer["record"]["recap"] is None
    assert bare.stderr == "rosterd prompt: the turn ended with no recap\n"
    again = _rosterd(headless, "prompt", "turns", "second", "--wait", "idle", "--json")
    assert json.loads(again.stdout)["wait"] == {"until": "idle", "reached": True, "stale": False}
    assert (again.returncode, again.stderr) == (0, "")
    assert _rosterd(headless, "stop", "turns").returncode == 0


def _at(record: dict) -> float:
    return datetime.fromisoformat(record["activity_at"]).timestamp()


def test_a_restart_keeps_each_sessions_last_activity_time(headless: Headless) -> None:
    headless.daemon.start()
    fresh = headless.start(name="fresh")["session_key"]
    turned = headless.start(name="turned")["session_key"]
    assert headless.prompt(turned, "hello", wait="idle").status_code == 200
    parked = headless.start(name="parked")["session_key"]
    assert headless.post(f"/sessions/{parked}/suspend").status_code == 200
    busy = headless.start(name="busy")["session_key"]
    assert headless.prompt(busy, "SLOW 30").status_code == 200
    headless.until(busy, activity_event="message")
    asking = headless.start(name="asking")["session_key"]
    assert headless.prompt(asking, "PERMIT", wait="needs_attention").json()["wait"]["reached"]
    time.sleep(2)  # idle long enough that a restart's own time would show
    keys = (fresh, turned, parked, busy, asking)
    before = {key: headless.record(key) for key in keys}
    headless.daemon.stop()
    headless.daemon.start()
    headless.until(asking, activity="needs_attention")
    after = {key: headless.record(key) for key in keys}
    for key in (fresh, turned, parked):
        assert after[key]["activity_at"] == before[key]["activity_at"], after[key]
        assert time.time() - _at(after[key]) > 2
    # Mid-turn, and asked before the restart: the holder's stamp of the update or the request
    # stands in for when the daemon heard it, a moment later.
    assert (after[busy]["activity"], after[busy]["activity_event"]) == ("active", "message")
    for key in (busy, asking):
        assert abs(_at(after[key]) - _at(before[key])) < 0.1, (before[key], after[key])
    assert headless.post(f"/sessions/{busy}/cancel").status_code == 200
    headless.until(busy, activity_event="cancelled")
    assert headless.post(f"/sessions/{asking}/permission", {"option": "reject"}).status_code == 200
    headless.until(asking, activity="idle")
