"""The runner never harms what is not its own, and never takes slow for dead.

A holder's state file and the runner's own files are input: after a reboot, or when forged,
the pids they name belong to other processes, and nothing named there is signalled. A holder
that is only slow to answer (stopped across a daemon restart) is waited for, and its turn ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.runner.conftest import Headless, power_cut


@pytest.fixture
def innocents() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes of the same user that Roost never started: a shell with two children each."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        proc.kill()
        proc.wait()


def innocent(innocents: list[subprocess.Popen[bytes]]) -> tuple[int, list[int]]:
    """A new innocent process and its children's pids."""
    proc = subprocess.Popen(["sh", "-c", "sleep 611 & sleep 612 & wait"], start_new_session=True)
    innocents.append(proc)
    deadline = time.monotonic() + 10
    while len(children := psutil.Process(proc.pid).children()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return proc.pid, [child.pid for child in children]


def ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[19])


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def point_at(headless: Headless, key: str, pid: int, boot_id: str) -> None:
    """Make every file the runner and the holder left for ``key`` name ``pid``: the holder's
    state file (``started_at: 0``, which passes any pid's start time) and the runner's own."""
    kept = headless.kept / f"{key.replace(':', '_')}.json"
    entry = json.loads(kept.read_text())
    stamp = {"pid": pid, "start_ticks": ticks(pid), "boot_id": boot_id}
    entry["holder_process"] = entry["adapter_process"] = stamp
    kept.write_text(json.dumps(entry))
    state = {"key": entry["holder"], "holder_pid": pid, "adapter_pid": pid, "started_at": 0, "ended": None}
    headless.holders.mkdir(parents=True, exist_ok=True)
    (headless.holders / f"{entry['holder']}.json").write_text(json.dumps(state))


def this_boot() -> str:
    with open("/proc/sys/kernel/random/boot_id") as boot:
        return boot.read().strip()


def test_after_a_reboot_nothing_an_old_file_names_is_signalled_and_sessions_are_suspended(
    headless: Headless, innocents: list[subprocess.Popen[bytes]]
) -> None:
    headless.daemon.start()
    keys = [headless.start(name=f"tests: boot {n}")["session_key"] for n in (1, 2)]
    headless.prompt(keys[0], "before the reboot", wait="idle")
    power_cut(headless)
    # After the reboot the old pids name other processes, started after the old holders were:
    # each file names one, with its real start time, under the boot that went away.
    named = [innocent(innocents) for _ in keys]
    for key, (pid, _) in zip(keys, named, strict=True):
        point_at(headless, key, pid, str(uuid.uuid4()))
    headless.daemon.start()
    for key in keys:
        record = headless.record(key)
        assert (record["liveness"], record["holder"]) == ("suspended", None)
    time.sleep(1.0)
    for pid, children in named:
        assert alive(pid) and all(alive(child) for child in children)
    answer = headless.prompt(keys[0], "HISTORY", wait="idle")
    assert answer.json()["record"]["recap"] == "history: 1 turns; last: before the reboot"


def test_a_forged_file_of_this_boot_signals_nothing(
    headless: Headless, innocents: list[subprocess.Popen[bytes]]
) -> None:
    """Every identity right (pid, start time, this boot): the process is still not a holder's
    adapter, since it does not carry a holder's mark, and is left alone."""
    headless.daemon.start()
    key = headless.start(name="tests: forged")["session_key"]
    power_cut(headless)
    pid, children = innocent(innocents)
    point_at(headless, key, pid, this_boot())
    headless.daemon.start()
    assert headless.record(key)["liveness"] == "suspended"
    time.sleep(1.0)
    assert alive(pid) and all(alive(child) for child in children)


@pytest.mark.parametrize(
    "forged",
    [
        {"pid": "1", "start_ticks": 1, "boot_id": "x"},
        {"pid": 1, "start_ticks": 1, "boot_id": "x"},
        {"pid": True, "start_ticks": 5, "boot_id": "x"},
        {"pid": 99999999999, "start_ticks": 5, "boot_id": "x"},
        {"pid": 300, "start_ticks": 0, "boot_id": "x"},
        {"pid": 300, "start_ticks": 5, "boot_id": ""},
        {"pid": 300, "start_ticks": 5, "boot_id": "x", "more": 1},
        [300, 5, "x"],
        "300",
    ],
)
def test_a_stamp_read_back_is_refused_unless_every_field_is_exact(forged: object) -> None:
    from roost.truth.detect.procs import Stamp

    assert Stamp.from_json(forged) is None
    assert Stamp.from_json({"pid": 300, "start_ticks": 5, "boot_id": "x"}) == Stamp(300, 5, "x")


def test_a_holder_stopped_across_a_daemon_restart_keeps_its_turn_and_its_adapter(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: slow holder")
    key = first["session_key"]
    holder, adapter = first["holder"]["pid"], first["holder"]["adapter_pid"]
    assert headless.prompt(key, "SLOW 4").status_code == 200
    os.kill(holder, signal.SIGSTOP)
    try:
        headless.daemon.stop(signal.SIGKILL)
        headless.daemon.start()
        waiting = headless.record(key)
        assert (waiting["liveness"], waiting["holder"]["pid"]) == ("live", holder)
        time.sleep(5)
        assert alive(adapter)
    finally:
        os.kill(holder, signal.SIGCONT)
    done = headless.until(key, timeout=20, activity="idle")
    assert (done["activity_event"], done["recap"]) == ("end_turn", "working" + "slow done")
    assert (done["liveness"], done["holder"]["pid"], done["holder"]["adapter_pid"]) == (
        "live",
        holder,
        adapter,
    )
    answer = headless.prompt(key, "after", wait="idle")
    assert answer.json()["record"]["recap"] == "echo: after"
    assert headless.holder_pids() == [holder]


def test_an_action_on_a_session_whose_holder_is_stopped_waits_then_says_so(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: stopped holder")
    key, holder = first["session_key"], first["holder"]["pid"]
    os.kill(holder, signal.SIGSTOP)
    try:
        headless.daemon.stop(signal.SIGKILL)
        headless.daemon.start()
        began = time.monotonic()
        answer = headless.prompt(key, "hello")
        assert time.monotonic() - began >= 9  # waited for the holder, as long as it was worth
        assert answer.status_code == 409
        assert answer.json()["code"] == "holder_slow"
        assert alive(holder)
    finally:
        os.kill(holder, signal.SIGCONT)
    answer = headless.prompt(key, "hello", wait="idle")
    assert answer.json()["record"]["recap"] == "echo: hello"


def test_a_holder_that_dies_while_it_is_waited_for_leaves_the_session_suspended(headless: Headless) -> None:
    headless.daemon.start()
    first = headless.start(name="tests: dies waiting")
    key, holder, adapter = first["session_key"], first["holder"]["pid"], first["holder"]["adapter_pid"]
    os.kill(holder, signal.SIGSTOP)
    headless.daemon.stop(signal.SIGKILL)
    headless.daemon.start()
    assert headless.record(key)["liveness"] == "live"
    os.kill(holder, signal.SIGKILL)
    suspended = headless.until(key, timeout=10, liveness="suspended")
    assert suspended["holder"] is None
    headless.daemon.wait_for(lambda: not alive(adapter), what="the dead holder's adapter ended")
    answer = headless.prompt(key, "again", wait="idle")
    assert answer.json()["record"]["recap"] == "echo: again"


def test_the_adapter_is_recorded_with_its_kernel_identity(headless: Headless) -> None:
    headless.daemon.start()
    record = headless.start()
    kept = json.loads(next(Path(headless.kept).glob("*.json")).read_text())
    adapter, holder = kept["adapter_process"], kept["holder_process"]
    assert adapter == {
        "pid": record["holder"]["adapter_pid"],
        "start_ticks": ticks(adapter["pid"]),
        "boot_id": this_boot(),
    }
    assert holder == {
        "pid": record["holder"]["pid"],
        "start_ticks": ticks(holder["pid"]),
        "boot_id": this_boot(),
    }
