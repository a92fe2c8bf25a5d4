"""A screen rule that overrules its hook's done: a failed turn its hook ended done says error.

Gemini CLI ends a turn the model API failed with the hook it ends every turn with, so its hook
says done while its screen shows the error; its manifest's error rule says
``overrules = ["done"]``. The engine never names an agent, so the rule is tried here on the
fake TUI of ``tests/daemon/test_dialogs.py`` (Claude Code's recorded screens and hooks), under
a user manifest whose error rule says the same. What is checked is what everyone reads: the
roster's record and ``explain``, the pane's badge and the events log, and the one push a
phone gets.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.daemon.test_dialogs import (
    BOUND,
    GENEROUS,
    HOLD,
    TUI,
    events_log,
    read_by_daemon,
    record,
    tell,
    until,
)
from tests.fakes.push_service import PushService

OVERRULING = """
[[detect.rules]]
id = "api-error"
state = "error"
priority = 70
region = "above_box:8"
pattern = '^● API Error:?\\s*(?P<reason>.+)$'
unless_after = '^[●✻❯]'
overrules = ["done"]
"""
"""Claude's packaged error rule, with the key this file is about."""


@pytest.fixture
def told(roost: Roost, daemon: Daemon) -> Iterator[tuple[str, PushService]]:
    """The fake TUI's pane at rest under a daemon whose manifest's error rule overrules the
    hook's done, and a phone subscribed to its pushes."""
    agents = Path(roost.env["XDG_CONFIG_HOME"]) / "roost" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "claude.toml").write_text(OVERRULING)
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)
    daemon.start()
    service = PushService(daemon.get("/push/vapid-key")["key"])
    try:
        with daemon.unix() as client:
            sub = service.subscription("phone")
            assert client.post("/push/subscribe", json={**sub, "viewing": None}).status_code == 201
        pane = roost.start(shlex.join([sys.executable, str(TUI), "idle"]), session="tui")
        roost.wait_screen(pane, "? for shortcuts")
        read_by_daemon(roost, daemon, pane)
        yield pane, service
    finally:
        service.close()


def working(roost: Roost, daemon: Daemon, pane: str) -> None:
    tell(roost, pane, "hook UserPromptSubmit")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "working", GENEROUS, "the working badge")
    until(daemon, pane, "active")


def said(daemon: Daemon, pane: str, state: str, timeout: float = BOUND) -> dict:
    found: dict = daemon.wait_for(
        lambda: (r := record(daemon, pane)) is not None and r["state"] == state and r, timeout, state
    )
    return found


def pushed(roost: Roost, service: PushService) -> list[str]:
    """What the phone was told, once its first push came and a quiet grace after it went by."""
    roost.wait_for(lambda: service.pushes, GENEROUS, "a push")
    time.sleep(HOLD)
    return [push["payload"]["state"] for push in service.pushes]


def holds(roost: Roost, daemon: Daemon, pane: str, state: str, seconds: float = HOLD) -> None:
    """The roster and the badge say ``state`` all along for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        now = record(daemon, pane)
        assert now is not None and now["state"] == state, now
        assert roost.option(pane, "@roost-state") == state
        time.sleep(0.05)


@pytest.mark.parametrize("first", ["screen", "hook"])
def test_a_failed_turn_its_hook_ends_done_says_error_once(
    roost: Roost, daemon: Daemon, told: tuple[str, PushService], first: str
) -> None:
    """Whichever comes first, the error on screen or the hook's done: the badge and the
    roster say error, with the API's message, and the phone hears "error" once, never "done"."""
    pane, service = told
    working(roost, daemon, pane)
    steps = ["show error", "hook Stop"] if first == "screen" else ["hook Stop", "show error"]
    for step in steps:
        tell(roost, pane, step)
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "error", BOUND + 1, "the error badge")
    assert "400" in roost.option(pane, "@roost-reason")
    failed = said(daemon, pane, "error")
    assert failed["activity"] == "idle"
    assert failed["error_reason"] == roost.option(pane, "@roost-reason")
    view = daemon.get(f"/sessions/{failed['session_key']}/explain")
    [ended] = view["overruled"]
    assert (ended["source"], ended["ended"]["activity"], ended["by"]["source"]) == ("hook", "done", "screen")
    moves = [(e["from"], e["to"]) for e in events_log(roost, pane) if e["event"] == "state"]
    assert moves[-2:] == [("working", "done"), ("done", "error")]
    holds(roost, daemon, pane, "error")
    assert pushed(roost, service) == ["error"]
    assert len(daemon.get(f"/sessions/{failed['session_key']}/explain")["overruled"]) == 1, "it holds, once"


def test_a_good_turn_s_done_stays_done(roost: Roost, daemon: Daemon, told: tuple[str, PushService]) -> None:
    pane, service = told
    working(roost, daemon, pane)
    tell(roost, pane, "show done")
    tell(roost, pane, "hook Stop")
    done = said(daemon, pane, "done", GENEROUS)
    holds(roost, daemon, pane, "done")
    assert daemon.get(f"/sessions/{done['session_key']}/explain")["overruled"] == []
    assert pushed(roost, service) == ["done"]


def test_the_next_turn_after_a_failed_one_ends_done(
    roost: Roost, daemon: Daemon, told: tuple[str, PushService]
) -> None:
    """A failed turn, then a good one: the good one's done is the hook's, and stands."""
    pane, _ = told
    working(roost, daemon, pane)
    tell(roost, pane, "hook Stop")
    tell(roost, pane, "show error")
    said(daemon, pane, "error", BOUND + 1)
    working(roost, daemon, pane)
    tell(roost, pane, "show done")
    tell(roost, pane, "hook Stop")
    done = said(daemon, pane, "done", GENEROUS)
    holds(roost, daemon, pane, "done")
    assert len(daemon.get(f"/sessions/{done['session_key']}/explain")["overruled"]) == 1
