"""The hook reads at most ``STDIN_CAP`` bytes: an endless stdin (``yes | rosterd-hook``) used
to be read whole, never exiting and growing by gigabytes a second; now it exits 0 within the
800 ms contract, and an event larger than the cap is ignored (fail open) with nothing changed."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from roost.faces.hook.main import STDIN_CAP
from tests.conftest import BIN, Roost
from tests.hook.test_hook import BOUND, event, events_logged, hook, pane, settled, state

__all__ = ["pane"]

pytestmark = pytest.mark.alone  # timed against the hook's deadline


def test_an_endless_stdin_exits_0_within_800ms_and_changes_nothing(roost: Roost, pane: str) -> None:
    env = {**roost.env, "TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    with subprocess.Popen(["yes"], stdout=subprocess.PIPE) as yes:
        began = time.monotonic()
        with subprocess.Popen([str(BIN / "rosterd-hook")], stdin=yes.stdout, env=env) as proc:
            try:
                code = proc.wait(timeout=10)
            finally:
                proc.kill()
                yes.kill()
        took = time.monotonic() - began
    assert code == 0
    assert took < BOUND, f"took {took:.3f}s"
    assert state(roost, pane) == ""


def test_an_event_over_the_cap_is_ignored(roost: Roost, pane: str) -> None:
    raw = json.dumps(event("UserPromptSubmit", prompt="x" * STDIN_CAP)).encode()
    assert len(raw) > STDIN_CAP
    began = time.monotonic()
    proc = hook(roost, pane, raw=raw, settle=False)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert time.monotonic() - began < BOUND
    settled(roost)
    assert state(roost, pane) == ""
    assert events_logged(roost) == []


def test_a_long_event_under_the_cap_is_handled(roost: Roost, pane: str) -> None:
    raw = json.dumps(event("UserPromptSubmit", prompt="y" * (STDIN_CAP // 2))).encode()
    assert hook(roost, pane, raw=raw).returncode == 0
    assert state(roost, pane) == "working"


def test_the_hook_still_imports_nothing_heavy() -> None:
    """Its start is most of its cost (see bench/hotpaths.py): neither the cap nor the daemon's
    deadline-bound pane listing beside the one it uses may bring in asyncio and the like."""
    heavy = ("asyncio", "json", "re", "signal", "contextlib", "subprocess", "logging")
    probe = (
        "import sys, roost.faces.hook.main, roost.faces.hook.pane, roost.faces.hook.post;"
        " print(*sorted(sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert not set(heavy) & set(loaded)
