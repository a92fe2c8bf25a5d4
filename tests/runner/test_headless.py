"""Headless sessions end to end: a real daemon, real holders, the fake ACP adapter.

Every test ends what it started; the fixture ends any holder a failing test left, and the leak
guard fails a test that leaves a process behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.cli.rosterd.helpers import rosterd
from tests.conftest import BIN
from tests.runner.conftest import ADAPTER, Headless, power_cut


def test_start_prompt_and_wait_gives_an_idle_record_with_the_recap(headless: Headless) -> None:
    headless.daemon.start()
    record = headless.start(name="tests: relay")
    key = record["session_key"]
    assert record["lane"] == "headless"
    assert record["sources"] == ["launcher", "acp"]
    assert record["activity"] == "idle" and record["activity_event"] == "session_new"
    assert record["session_id"].startswith("sess-")
    assert (record["name"], record["harness"]) == ("tests: relay", "fake")
    assert record["permission_policy"] == "attention"
    assert record["liveness"] == "live" and record["holder"]["pid"] == record["pid"]
    assert record["mode"] == "default"
    assert record["completed_revision"] is None
    answer = headless.prompt(key, "hello there", wait="idle")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["input"] == "accepted"
    assert body["wait"] == {"until": "idle", "reached": True, "stale": False}
    done = body["record"]
    assert (done["activity"], done["activity_event"]) == ("idle", "end_turn")
    assert done["recap"] == "echo: hello there"
    assert done["usage"] == {"tokens": {"inputTokens": 3, "outputTokens": 5, "totalTokens": 8}}
    # The turn's end is a revision after the prompt; the ledger's count of it (``spend``) may
    # already be on the record as the next one, or follow it.
    assert record["revision"] < done["completed_revision"] <= done["revision"]
    assert done["revision"] - done["completed_revision"] == (done["spend"] is not None)
    stopped = headless.post(f"/sessions/{key}/stop")
    assert stopped.status_code == 200, stopped.text
    assert stopped.json()["record"]["liveness"] == "ended"
    assert stopped.json()["record"]["ended_reason"] == "exit"
    assert headless.holder_pids() == []
    assert list(headless.kept.glob("*.json")) == []


def _pending(headless: Headless, key: str) -> dict:
    answer = headless.prompt(key, "PERMIT", wait="needs_attention")
    assert answer.json()["wait"] == {"until": "needs_attention", "reached": True, "stale": True}, answer.text
    record = answer.json()["record"]
    assert (record["activity"], record["activity_event"]) == ("needs_attention", "permission")
    return record["pending"]


def test_a_permission_is_pending_with_the_adapters_own_options_and_allow_runs_the_tool(
    headless: Headless,
) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    pending = _pending(headless, key)
    opened, request_id = pending.pop("opened_at"), pending.pop("id")
    assert pending == {
        "kind": "permission",
        "answerable": True,
        "tool": "Bash",
        "summary": "rm -rf build",
        "tool_call_id": "t1",
        "options": [
            {"id": "allow_always", "name": "Always Allow", "kind": "allow_always"},
            {"id": "allow", "name": "Allow", "kind": "allow_once"},
            {"id": "reject", "name": "Reject", "kind": "reject_once"},
        ],
    }
    assert opened.endswith("Z") and len(request_id) == 16
    refused = headless.prompt(key, "again")
    assert refused.status_code == 409 and refused.json()["code"] == "needs_attention"
    stale = headless.post(f"/sessions/{key}/permission", {"option": "allow", "request_id": "f" * 16})
    assert (stale.status_code, stale.json()["code"]) == (409, "request_changed")
    allowed = headless.post(f"/sessions/{key}/permission", {"option": "allow", "request_id": request_id})
    assert allowed.status_code == 200, allowed.text
    done = headless.until(key, activity="idle", activity_event="end_turn")
    assert done["recap"] == "tool completed (allow)"
    assert done["pending"] is None
    again = headless.post(f"/sessions/{key}/permission", {"option": "allow"})
    assert again.status_code == 409 and again.json()["code"] == "nothing_pending"


def test_allow_always_and_deny_choose_those_options(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    _pending(headless, key)
    run = subprocess.run(
        [str(BIN / "rosterd"), "allow", key, "--always", "--json"],
        env=headless.daemon.env,
        capture_output=True,
    )
    assert run.returncode == 0, run.stderr
    assert headless.until(key, activity_event="end_turn")["recap"] == "tool completed (allow_always)"
    _pending(headless, key)
    run = subprocess.run(
        [str(BIN / "rosterd"), "deny", key, "--reason", "not in this repo"],
        env=headless.daemon.env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "denied" in run.stdout
    assert headless.until(key, activity_event="end_turn")["recap"] == "tool failed (reject)"
    answers = [e for e in headless.daemon.get("/journal")["entries"] if e["kind"] == "answer"]
    assert [(e["answer"], e["by"], e["via"]) for e in answers] == [
        ("allow_always", "local user", "cli"),
        ("reject", "local user", "cli"),
    ]


def test_policy_auto_approves_and_never_waits_on_a_person(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(policy="auto")["session_key"]
    answer = headless.prompt(key, "PERMIT", wait="idle")
    body = answer.json()
    assert body["wait"]["reached"] is True, answer.text
    assert body["record"]["recap"] == "tool completed (allow)"
    assert body["record"]["permission_policy"] == "auto"


def test_cancel_mid_turn_ends_the_turn_cancelled(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    assert headless.prompt(key, "SLOW 30").status_code == 200
    assert headless.record(key)["activity"] == "active"
    busy = headless.prompt(key, "another")
    assert busy.status_code == 409 and busy.json()["code"] == "busy"
    began = time.monotonic()
    assert headless.post(f"/sessions/{key}/cancel").status_code == 200
    done = headless.until(key, activity="idle")
    assert done["activity_event"] == "cancelled"
    assert time.monotonic() - began < 3
    nothing = headless.post(f"/sessions/{key}/cancel")
    assert nothing.status_code == 409 and nothing.json()["code"] == "not_running"


def test_plan_mode_usage_and_title_fill_the_record(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    record = headless.prompt(key, "PLAN", wait="idle").json()["record"]
    assert record["plan"] == {
        "entries": [
            {"content": "read the tests", "priority": "high", "status": "completed"},
            {"content": "fix the relay", "priority": "medium", "status": "in_progress"},
        ]
    }
    assert record["mode"] == "plan"
    assert record["usage"]["used"] == 1200 and record["usage"]["size"] == 200000
    assert record["usage"]["tokens"]["totalTokens"] == 8
    assert record["name"] == "fixing the relay"  # the adapter's title fills a name nobody gave


def test_a_failed_turn_reads_idle_with_the_error(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    record = headless.prompt(key, "FAIL", wait="idle").json()["record"]
    assert record["activity"] == "idle"
    assert record["activity_event"] == "prompt_failed"
    assert "overloaded" in record["error_reason"]


def test_bad_requests_are_refused_and_change_nothing(headless: Headless) -> None:
    headless.daemon.start()
    cwd = str(headless.daemon.roost.root)
    for body, status, code in (
        ({"harness": "nope", "cwd": cwd}, 400, "unknown_harness"),
        ({"harness": "fake", "cwd": cwd + "/missing"}, 400, "bad_cwd"),
        ({"harness": "fake", "cwd": "relative"}, 400, None),
        ({"harness": "fake", "cwd": cwd, "policy": "yolo"}, 400, None),
        ({"harness": "fake", "cwd": cwd, "name": "a\x1bb"}, 400, None),
        ({"harness": "fake", "cwd": cwd, "surprise": 1}, 400, None),
        ({"harness": "fake", "cwd": cwd, "env": {"1BAD": "x"}}, 400, None),
        ({"harness": "fake", "cwd": cwd, "env": {"XDG_RUNTIME_DIR": "/tmp"}}, 400, None),
        ({"harness": "fake", "cwd": cwd, "env": {"ROSTERD_HOLDER": "h1"}}, 400, None),
    ):
        answer = headless.post("/sessions", body)
        assert answer.status_code == status, (body, answer.text)
        if code:
            assert answer.json()["code"] == code
    assert _headless_records(headless) == []
    assert headless.holder_pids() == []
    key = headless.start()["session_key"]
    for body in ({}, {"text": ""}, {"text": "x", "wait": "forever"}, {"text": "x", "timeout_s": 0}):
        answer = headless.post(f"/sessions/{key}/prompt", body)
        assert answer.status_code == 400, (body, answer.text)
    assert headless.record(key)["activity_event"] == "session_new"
    missing = headless.post("/sessions/nobody/stop")
    assert missing.status_code == 404


def test_no_client_pins_a_headless_session_by_speaking_as_its_launcher(headless: Headless) -> None:
    """The launcher's word outranks the ACP stream's, so a claim posted as the launcher would
    hold a session whose turn ended at needs_attention until the daemon restarted. Only rosterd
    speaks for its launcher: refused on the socket and on loopback with the bearer, and the
    session's next turn still ends idle."""
    headless.daemon.start()
    key = headless.start()["session_key"]
    assert headless.prompt(key, "hello", wait="idle").status_code == 200
    before = headless.until(key, activity="idle")
    forged = {
        "source": "launcher",
        "session_key": key,
        "activity": "blocked",
        "event": "permission",
        "fields": {"pending": {"summary": "Bash: rm -rf /"}},
    }
    for client in (headless.daemon.unix(), headless.daemon.tcp(headless.daemon.token)):
        with client:
            answer = client.post("/claim", json=forged)
        assert answer.status_code == 400, answer.text
        assert answer.json() == {"error": "launcher claims are not accepted over HTTP", "field": "source"}
    assert headless.record(key) == before
    again = headless.prompt(key, "and again", wait="idle")
    assert again.status_code == 200 and again.json()["record"]["activity"] == "idle", again.text
    assert headless.post(f"/sessions/{key}/stop").status_code == 200


def test_idle_past_the_timeout_suspends_and_a_prompt_resumes_with_the_history(headless: Headless) -> None:
    headless.daemon.settings["runner"] = {"idle_timeout_s": 1}
    headless.daemon.start()
    first = headless.start(name="tests: idle")
    key = first["session_key"]
    headless.prompt(key, "remember this", wait="idle")
    suspended = headless.until(key, timeout=10, liveness="suspended")
    assert suspended["session_id"] == first["session_id"]
    assert suspended["holder"] is None
    assert headless.holder_pids() == []
    assert not psutil.pid_exists(first["pid"]) or psutil.Process(first["pid"]).status() == "zombie"
    began = time.monotonic()
    answer = headless.prompt(key, "HISTORY", wait="idle")
    resumed_in = time.monotonic() - began
    record = answer.json()["record"]
    assert answer.json()["wait"]["reached"] is True, answer.text
    assert record["recap"] == "history: 1 turns; last: remember this"
    assert (record["session_key"], record["session_id"]) == (key, first["session_id"])
    assert record["liveness"] == "live" and record["pid"] != first["pid"]
    assert record["name"] == "tests: idle"
    assert resumed_in < 5


@pytest.mark.parametrize("limit", [1, 2])
def test_suspend_and_resume_by_hand_and_the_hourly_resume_limit(headless: Headless, limit: int) -> None:
    headless.daemon.settings["runner"] = {"idle_timeout_s": 600, "max_resumes_per_hour": limit}
    headless.daemon.start()
    key = headless.start(name="tests: by hand")["session_key"]
    rosterd = [str(BIN / "rosterd")]
    env = headless.daemon.env
    for _ in range(limit):
        run = subprocess.run([*rosterd, "suspend", key], env=env, capture_output=True, text=True)
        assert (run.returncode, run.stderr) == (0, "")
        assert run.stdout == f"{key}: suspended; tests: by hand suspended\n"
        assert headless.record(key)["liveness"] == "suspended"
        run = subprocess.run([*rosterd, "resume", key], env=env, capture_output=True, text=True)
        assert (run.returncode, run.stderr) == (0, "")
        assert run.stdout == f"{key}: resumed; tests: by hand idle\n"
        assert headless.record(key)["liveness"] == "live"
    subprocess.run([*rosterd, "suspend", key], env=env, check=True, capture_output=True)
    run = subprocess.run([*rosterd, "prompt", key, "hi"], env=env, capture_output=True, text=True)
    times = "1 time" if limit == 1 else f"{limit} times"
    refusal = f"resumed {times} in the last hour (max_resumes_per_hour): stays suspended"
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"rosterd prompt: {refusal}\n"
    record = headless.record(key)
    assert record["liveness"] == "suspended"
    assert record["error_reason"] == refusal


def test_kill_9_of_the_daemon_mid_turn_loses_nothing(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    assert headless.prompt(key, "SLOW 6").status_code == 200  # long enough to outlast the restart
    headless.daemon.stop(signal.SIGKILL)
    began = time.monotonic()
    headless.daemon.start()
    rebuilt = headless.record(key)
    assert time.monotonic() - began < 5
    assert rebuilt["activity"] == "active" and rebuilt["liveness"] == "live"
    assert headless.daemon.get("/status")["rebuild"]["headless"]["sessions"] == 1
    assert headless.daemon.get("/status")["rebuild"]["headless"]["ms"] < 1000
    done = headless.until(key, timeout=15, activity="idle")
    assert (done["activity_event"], done["recap"]) == ("end_turn", "working" + "slow done")
    answer = headless.prompt(key, "after", wait="idle")
    assert answer.json()["record"]["recap"] == "echo: after"


def test_a_pending_permission_survives_a_daemon_restart_and_is_answered_after(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start()["session_key"]
    _pending(headless, key)
    headless.daemon.stop()
    headless.daemon.start()
    record = headless.until(key, activity="needs_attention")
    assert record["pending"]["summary"] == "rm -rf build"
    assert headless.post(f"/sessions/{key}/permission", {"option": "allow"}).status_code == 200
    assert headless.until(key, activity_event="end_turn")["recap"] == "tool completed (allow)"


def _headless_records(headless: Headless) -> list[dict]:
    """The roster's headless records: an agent elsewhere on the machine is a session too."""
    return [r for r in headless.daemon.snapshot()["records"] if r["lane"] == "headless"]


def _others(headless: Headless, key: str) -> list[dict]:
    return [r for r in _headless_records(headless) if r["session_key"] != key]


def test_a_crash_is_resumed_once_and_a_second_crash_is_not(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: crash")
    key = first["session_key"]
    headless.prompt(key, "before the crash", wait="idle")
    headless.prompt(key, "CRASH")
    ended = headless.until(key, liveness="ended")
    assert ended["ended_reason"] == "crash"
    again = headless.daemon.wait_for(lambda: _others(headless, key), what="the resumed session")[0]
    resumed = headless.until(again["session_key"], activity_event="resumed_after_crash")
    assert resumed["session_id"] == first["session_id"]
    assert resumed["name"] == "tests: crash"
    assert resumed["liveness"] == "live"
    # The crashed record lingers with the same name: the name finds the live continuation.
    assert headless.record(key)["liveness"] == "ended"
    read = subprocess.run(
        [str(BIN / "rosterd"), "read", "tests: crash", "--json"],
        env=headless.daemon.env,
        capture_output=True,
        text=True,
    )
    assert (read.returncode, read.stderr) == (0, "")
    assert json.loads(read.stdout)["session_key"] == again["session_key"]
    answer = headless.prompt("tests: crash", "HISTORY", wait="idle")
    assert answer.json()["record"]["recap"] == "history: 1 turns; last: before the crash"
    headless.prompt(again["session_key"], "CRASH")
    assert headless.until(again["session_key"], liveness="ended")["ended_reason"] == "crash"
    time.sleep(1.5)
    live = [r for r in _headless_records(headless) if r["liveness"] != "ended"]
    assert live == []
    assert headless.holder_pids() == []


def test_a_killed_holder_is_a_crash_and_leaves_no_adapter(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start()
    adapter = first["holder"]["adapter_pid"]
    os.kill(first["pid"], signal.SIGKILL)
    assert headless.until(first["session_key"], liveness="ended")["ended_reason"] == "crash"
    headless.daemon.wait_for(
        lambda: not psutil.pid_exists(adapter) or psutil.Process(adapter).status() == "zombie"
    )
    again = headless.daemon.wait_for(lambda: _others(headless, first["session_key"]))[0]
    resumed = headless.until(again["session_key"], activity_event="resumed_after_crash")
    assert resumed["session_id"] == first["session_id"]


def test_after_a_reboot_every_headless_session_comes_back_suspended(headless: Headless) -> None:
    headless.daemon.start()
    keys = [headless.start(name=f"tests: boot {n}")["session_key"] for n in (1, 2)]
    headless.prompt(keys[0], "before the reboot", wait="idle")
    power_cut(headless)  # the machine goes down: every holder and adapter with it
    shutil.rmtree(headless.daemon.runtime / "roost")  # a reboot empties the runtime directory
    headless.daemon.start()
    for key in keys:
        record = headless.record(key)
        assert (record["liveness"], record["activity"], record["holder"]) == ("suspended", "idle", None)
    time.sleep(1.5)  # nothing resumes by itself
    assert headless.holder_pids() == []
    answer = headless.prompt(keys[0], "HISTORY", wait="idle")
    assert answer.json()["record"]["recap"] == "history: 1 turns; last: before the reboot"
    assert headless.record(keys[1])["liveness"] == "suspended"


def test_spawn_makes_a_child_that_keeps_the_parents_policy(headless: Headless) -> None:
    headless.daemon.start()
    parent = headless.start(policy="auto")["session_key"]
    answer = headless.post(
        f"/sessions/{parent}/spawn",
        {"harness": "fake", "cwd": str(headless.daemon.roost.root), "name": "child"},
    )
    assert answer.status_code == 201, answer.text
    child = answer.json()["record"]
    assert child["parent_session_key"] == parent
    assert child["permission_policy"] == "auto"
    assert child["name"] == "child"


def test_the_cli_starts_and_prompts_and_prints_the_recap(headless: Headless) -> None:
    headless.daemon.start()
    rosterd = [str(BIN / "rosterd")]
    env = headless.daemon.env
    cwd = str(headless.daemon.roost.root)
    run = subprocess.run(
        [*rosterd, "start", "--harness", "fake", "--cwd", cwd, "--name", "cli", "--env", "X_TEST=1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    key = run.stdout.split(":", 3)[0] + ":" + run.stdout.split(":", 3)[1] + ":" + run.stdout.split(":")[2]
    run = subprocess.run(
        [*rosterd, "prompt", "cli", "hi", "--wait", "idle"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert "echo: hi" in run.stdout
    assert headless.record(key)["recap"] == "echo: hi"
    run = subprocess.run([*rosterd, "start", "--cwd", cwd], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.startswith("usage: rosterd start")
    run = subprocess.run(
        [*rosterd, "prompt", "cli", "x", "--timeout", "soon"], env=env, capture_output=True, text=True
    )
    assert run.returncode == 1 and "--timeout" in run.stderr
    run = subprocess.run([*rosterd, "stop", "cli"], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and "stopped" in run.stdout


def test_the_first_adapter_of_a_harness_is_locked_and_another_version_is_refused(headless: Headless) -> None:
    headless.daemon.start()
    headless.start()
    lock = headless.daemon.config_dir / "adapters.lock"
    locked = json.loads(lock.read_text())["fake"]
    assert (locked["name"], locked["version"]) == ("fake-acp", "1.0.0")
    assert oct(lock.stat().st_mode & 0o777) == "0o600"
    before = _headless_records(headless)
    answer = headless.post(
        "/sessions",
        {"harness": "fake", "cwd": str(headless.daemon.roost.root), "env": {"FAKE_ACP_VERSION": "2.0.0"}},
    )
    assert answer.status_code == 409 and answer.json()["code"] == "adapter_version_changed"
    assert "fake-acp 2.0.0" in answer.json()["error"] and "pins fake-acp 1.0.0" in answer.json()["error"]
    live = [r for r in _headless_records(headless) if r["liveness"] != "ended"]
    assert [r["session_key"] for r in live] == [r["session_key"] for r in before]
    assert len(headless.holder_pids()) == 1


def test_the_adapter_lock_is_kept_beside_the_config_the_daemon_was_given(headless: Headless) -> None:
    """``--config`` elsewhere: the lock goes beside that file, as the secrets do, not into the
    default folder another config's daemon would read."""
    daemon = headless.daemon
    daemon.write_config()
    other = daemon.roost.root / "elsewhere" / "rosterd.toml"
    other.parent.mkdir()
    other.write_text(daemon.config.read_text())
    daemon.config.unlink()
    daemon.proc = daemon.spawn("--config", str(other))
    daemon.wait_ready()
    headless.start()
    assert json.loads((other.parent / "adapters.lock").read_text())["fake"]["name"] == "fake-acp"
    assert not (daemon.config_dir / "adapters.lock").exists()


def test_a_harness_whose_adapter_relies_on_roosts_extension_starts_only_once_it_is_installed(
    headless: Headless,
) -> None:
    """``[harness.pi] extension = true``: pi's adapter has no claims or gate of its own, so a
    start is refused, before any holder runs, until ``rosterd integrate install pi`` is done."""
    daemon = headless.daemon
    daemon.settings["harness.pi"] = {"adapter": daemon.settings["harness.fake"]["adapter"], "extension": True}
    daemon.start()
    body = {"harness": "pi", "cwd": str(daemon.roost.root)}
    refused = headless.post("/sessions", body)
    assert refused.status_code == 409 and refused.json()["code"] == "extension_missing"
    said = refused.json()["error"]
    assert said.startswith(
        "pi's adapter has no claims or permission gate of its own ([harness.pi] extension = true) and "
        "roost's integration that supplies them is not in place: pi: not installed ("
    )
    assert said.endswith("): run `rosterd integrate install pi`")
    assert headless.holder_pids() == []
    installed = rosterd(daemon, "integrate", "install", "pi")
    assert installed.returncode == 0, installed.stderr
    assert headless.post("/sessions", body).status_code == 201


def test_an_adapter_not_installed_is_refused_naming_the_fix(headless: Headless) -> None:
    daemon = headless.daemon
    daemon.settings["harness.claude"] = {"adapter": "no-such-acp-adapter --flag"}
    daemon.start()
    refused = headless.post("/sessions", {"harness": "claude", "cwd": str(daemon.roost.root)})
    assert (refused.status_code, refused.json()["code"]) == (409, "adapter_missing")
    assert refused.json()["error"] == (
        "claude's ACP adapter 'no-such-acp-adapter' is not installed (not on the daemon's PATH): "
        "run `rosterd setup` to install it"
    )
    assert headless.holder_pids() == [] and _headless_records(headless) == []


def test_the_runner_section_sets_the_policy_and_recap_and_crashes_need_not_resume(headless: Headless) -> None:
    headless.daemon.settings["runner"] = {
        "default_permission_policy": "auto",
        "recap": False,
        "resume_on_crash": False,
    }
    headless.daemon.start()
    record = headless.start()
    assert record["permission_policy"] == "auto"
    done = headless.prompt(record["session_key"], "PERMIT", wait="idle").json()["record"]
    assert (done["activity_event"], done["recap"]) == ("end_turn", None)  # nothing of the reply kept
    headless.prompt(record["session_key"], "CRASH")
    assert headless.until(record["session_key"], liveness="ended")["ended_reason"] == "crash"
    time.sleep(1.5)
    assert _others(headless, record["session_key"]) == []
    assert list(headless.kept.glob("*.json")) == []


def test_suspend_on_needs_attention_lets_the_idle_timer_suspend_a_pending_session(headless: Headless) -> None:
    headless.daemon.settings["runner"] = {"idle_timeout_s": 1, "suspend_on_needs_attention": True}
    headless.daemon.start()
    key = headless.start()["session_key"]
    _pending(headless, key)
    suspended = headless.until(key, timeout=10, liveness="suspended")
    assert suspended["pending"] is None and suspended["activity"] == "idle"


def test_a_pending_permission_keeps_a_session_live_past_the_idle_timeout(headless: Headless) -> None:
    headless.daemon.settings["runner"] = {"idle_timeout_s": 1}
    headless.daemon.start()
    key = headless.start()["session_key"]
    _pending(headless, key)
    time.sleep(3)
    record = headless.record(key)
    assert (record["liveness"], record["activity"]) == ("live", "needs_attention")
    refused = headless.post(f"/sessions/{key}/suspend")
    assert refused.status_code == 409 and refused.json()["code"] == "needs_attention"


def test_a_new_name_is_kept_for_the_next_holder(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(name="before")["session_key"]
    run = subprocess.run(
        [str(BIN / "rosterd"), "name", key, "after"], env=headless.daemon.env, capture_output=True
    )
    assert run.returncode == 0, run.stderr
    headless.post(f"/sessions/{key}/suspend")
    headless.daemon.stop()
    headless.daemon.start()
    assert headless.record(key)["name"] == "after"
    assert headless.post(f"/sessions/{key}/resume").json()["record"]["name"] == "after"


def test_model_and_effort_are_set_through_the_adapters_config_options(headless: Headless) -> None:
    headless.daemon.start()
    key = headless.start(model="fake-large", effort="high")["session_key"]
    assert (
        headless.prompt(key, "CONFIG", wait="idle").json()["record"]["recap"]
        == "model=fake-large effort=high"
    )
    headless.post(f"/sessions/{key}/suspend")
    resumed = headless.prompt(key, "CONFIG", wait="idle").json()["record"]
    assert resumed["recap"] == "model=fake-large effort=high"  # set again in the new holder
    bare = headless.post(
        "/sessions",
        {
            "harness": "fake",
            "cwd": str(headless.daemon.roost.root),
            "model": "x",
            "env": {"FAKE_ACP_BARE": "1"},
        },
    )
    assert bare.status_code == 502 and "offers no model option" in bare.json()["error"]
    assert len(headless.holder_pids()) == 1


def test_the_adapter_runs_with_the_daemons_socket_its_env_and_no_is_sandbox_but_1(headless: Headless) -> None:
    headless.daemon.roost.env["IS_SANDBOX"] = "yes"
    headless.daemon.start()
    key = headless.start(env={"GIVEN": "here"})["session_key"]
    recap = headless.prompt(key, "ENV ROSTERD_SOCKET GIVEN IS_SANDBOX", wait="idle").json()["record"]["recap"]
    assert recap == f"ROSTERD_SOCKET={headless.daemon.socket} GIVEN=here IS_SANDBOX=-"
    headless.daemon.stop()
    headless.daemon.roost.env["IS_SANDBOX"] = "1"
    headless.daemon.start()
    key = headless.start()["session_key"]
    assert headless.prompt(key, "ENV IS_SANDBOX", wait="idle").json()["record"]["recap"] == "IS_SANDBOX=1"


def test_an_adapter_that_cannot_load_a_session_is_never_suspended_nor_resumed(headless: Headless) -> None:
    """``[acp] resumes = false`` (Gemini CLI's: its load overwrites the history it looks for):
    the idle timer passes it by, a suspend is refused, and after a reboot a prompt is refused
    with ``cannot_resume`` before any holder starts."""
    roost = headless.daemon.roost
    agents = Path(roost.env["XDG_CONFIG_HOME"]) / "roost" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "fake.toml").write_text('[acp]\ncommand = ["fake-acp"]\nresumes = false\n')
    headless.daemon.settings["runner"] = {"idle_timeout_s": 1}
    headless.daemon.start()
    key = headless.start(name="tests: unloadable")["session_key"]
    headless.prompt(key, "remember this", wait="idle")
    holders = headless.holder_pids()
    time.sleep(3)  # past the idle timeout, checked every second
    assert headless.record(key)["liveness"] == "live"
    run = subprocess.run(
        [str(BIN / "rosterd"), "suspend", key], env=headless.daemon.env, capture_output=True, text=True
    )
    refusal = (
        "fake's adapter cannot load a session back (its manifest says [acp] resumes = false): "
        "the session stays live until it is stopped"
    )
    assert (run.returncode, run.stdout, run.stderr) == (1, "", f"rosterd suspend: {refusal}\n")
    assert headless.record(key)["liveness"] == "live" and headless.holder_pids() == holders
    power_cut(headless)  # the machine goes down: every holder and adapter with it
    shutil.rmtree(headless.daemon.runtime / "roost")
    headless.daemon.start()
    assert headless.record(key)["liveness"] == "suspended"
    answer = headless.prompt(key, "after the reboot")
    assert answer.status_code == 409, answer.text
    assert answer.json()["code"] == "cannot_resume"
    assert "start a new session" in answer.json()["error"]
    assert headless.holder_pids() == []


def test_an_adapter_the_scan_knows_by_name_stays_one_row_with_its_session(headless: Headless) -> None:
    """Gemini CLI and OpenCode are their own ACP adapters, so the process scan, which knows them
    by name, finds the adapter under its holder. The holder starts the adapter at once; if the
    session were claimed only once the holder's socket answers, a scan in between would start a
    row of its own for the adapter beside the session's. Sixteen starts, a scan every 100 ms."""
    daemon = headless.daemon
    adapter = daemon.roost.root / "adapters" / "gemini"  # the scan reads this name as Gemini CLI's
    adapter.parent.mkdir()
    shutil.copy(ADAPTER, adapter)
    daemon.settings["harness.gemini"] = {"adapter": f"{sys.executable} {adapter}"}
    daemon.settings["sources"] = {"scan_interval_ms": 100}
    daemon.start()
    keys = {}
    for n in range(16):
        cwd = daemon.roost.root / f"project-{n}"
        cwd.mkdir()
        keys[str(cwd)] = headless.start(harness="gemini", cwd=str(cwd))["session_key"]
    time.sleep(0.4)  # more than a scan's interval after the last start
    rows: dict[str, list[str]] = {}
    for record in daemon.snapshot()["records"]:
        if record["liveness"] != "ended" and record["cwd"] in keys:
            rows.setdefault(record["cwd"], []).append(record["session_key"])
    assert rows == {cwd: [key] for cwd, key in keys.items()}
