"""Names kept across daemon restarts (``roost.actions.names``), on a roster built twice as a
restarted daemon builds it: a name comes back only to the same process in the same pane.

Real processes stand for the occupants (this test's own, and a child it ends), because a kept
name is tied to the kernel's identity of one; no tmux and no daemon.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from roost.actions import names
from roost.truth.detect import procs
from roost.truth.roster import Claim, ProcessId
from roost.truth.roster.live import Live
from roost.truth.roster.precedence import SCAN
from tests.roster.helpers import Clock, roster

PANE = {"socket": "/tmp/roost-test", "server": "1700000000-4242", "pane": "%3"}


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path / "roost" / "names.json"


def me() -> ProcessId:
    found = procs.identity(os.getpid())
    assert found is not None
    return found


def seen(clock: Clock, process: ProcessId, pane: dict[str, Any] | None = PANE) -> Live:
    """A freshly rebuilt roster in which a scan saw ``process`` (in ``pane``)."""
    live = Live(roster(clock), clock)
    fields: dict[str, Any] = {"lane": "interactive", **({"tmux": {**pane, "window": "@1"}} if pane else {})}
    assert live.apply(Claim(SCAN, clock.now, process=process, fields=fields)).accepted
    return live


def name_of(live: Live, process: ProcessId) -> str | None:
    key = live.roster.find(process)
    record = live.roster.record(key) if key else None
    assert record is not None
    return record.name


class Runner:
    """Stands for the headless runner: it owns one key and keeps that one's name itself."""

    def __init__(self, owned: str) -> None:
        self.owned, self.renamed = owned, []

    def owns(self, key: str) -> bool:
        return key == self.owned

    def rename(self, key: str, label: str | None) -> None:
        self.renamed.append((key, label))


def test_a_name_comes_back_to_the_same_process_in_the_same_pane(state: Path) -> None:
    clock = Clock()
    before = seen(clock, me())
    key = before.roster.find(me())
    assert key is not None
    assert names.give(before, None, key, "twin", clock.now).accepted
    assert oct(state.stat().st_mode & 0o777) == "0o600"

    after = seen(clock, me())
    assert names.restore(after, clock.now) == 1
    assert name_of(after, me()) == "twin"

    elsewhere = seen(clock, me(), {**PANE, "server": "1700000999-5151"})  # the tmux server restarted
    assert names.restore(elsewhere, clock.now) == 0
    assert name_of(elsewhere, me()) is None
    assert [n["name"] for n in json.loads(state.read_text())["names"]] == ["twin"]  # its process lives

    cleared = seen(clock, me())
    assert names.give(cleared, None, key, None, clock.now).accepted
    assert json.loads(state.read_text())["names"] == []
    assert names.restore(seen(clock, me()), clock.now) == 0


def test_a_name_ends_with_its_process(state: Path) -> None:
    clock = Clock()
    child = subprocess.Popen(["sleep", "60"])
    try:
        process = procs.identity(child.pid)
        assert process is not None
        live = seen(clock, process)
        key = live.roster.find(process)
        assert key is not None
        names.give(live, None, key, "short-lived", clock.now)
        assert len(json.loads(state.read_text())["names"]) == 1
    finally:
        child.kill()
        child.wait()
    rebuilt = seen(clock, process)  # a record for it, as a pass that raced its end might leave
    assert names.restore(rebuilt, clock.now) == 0
    assert name_of(rebuilt, process) is None
    assert json.loads(state.read_text())["names"] == []


def test_the_runner_keeps_its_own_names_and_a_bad_file_is_ignored(state: Path) -> None:
    clock = Clock()
    live = seen(clock, me())
    key = live.roster.find(me())
    assert key is not None
    runner = Runner(key)
    names.give(live, runner, key, "headless", clock.now)  # type: ignore[arg-type]
    assert runner.renamed == [(key, "headless")]
    assert not state.exists()

    state.parent.mkdir(parents=True, exist_ok=True)
    for junk in ("not json", '{"names": 3}', '{"names": [{"session_key": 1}, "x"]}'):
        state.write_text(junk)
        assert names.restore(seen(clock, me()), clock.now) == 0
