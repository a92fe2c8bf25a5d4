"""A headless session's turns as the faces tell them: ``rosterd prompt --wait`` prints this
turn's recap or nothing (and says which), and a daemon's restart leaves ``activity_at`` where
the session's last activity put it. A real daemon, real holders, the fake ACP adapter."""

from __future__ import annotations

import json
import subprocess

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
    assert done.stdout == f"{key}: prompted; turns idle\necho: first\n"

    # The wait ends before the turn does: the last turn's recap is not this one's answer.
    slow = _rosterd(headless, "prompt", "turns", "SLOW 30", "--wait", "idle", "--timeout", "1")
    assert (slow.returncode, slow.stdout) == (1, f"{key}: prompted; turns active\n")
    assert slow.stderr == NOT_YET + "rosterd prompt: the wait for idle ended with the session active\n"
    assert headless.post(f"/sessions/{key}/cancel").status_code == 200
    assert headless.until(key, activity_event="cancelled")["recap"] == "working"

    # Waiting for a person: the turn runs on, so it has no reply yet, in words and in --json.
    asked = _rosterd(headless, "prompt", "turns", "PERMIT", "--wait", "needs_attention")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout == f"{key}: prompted; turns needs_attention\n  waits on: rm -rf build\n"
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
