"""``rosterd integrate … pi``: one extension file roost owns, and what that extension reports."""

from __future__ import annotations

from tests.conftest import Roost
from tests.integrate.conftest import Rosterd, asset_lifecycle, drive_in_pane, foreign_file_is_never_touched

RELPATH = ".pi/agent/extensions/roost.ts"


def test_install_and_uninstall_touch_exactly_roosts_file(rosterd: Rosterd) -> None:
    asset_lifecycle(rosterd, "pi", RELPATH, "extension")


def test_pi_coding_agent_dir_is_honoured(rosterd: Rosterd) -> None:
    env = {"PI_CODING_AGENT_DIR": str(rosterd.home / "piagent")}
    assert rosterd.run("integrate", "install", "pi", env=env).returncode == 0
    assert list(rosterd.files()) == ["piagent/extensions/roost.ts"]


def test_a_foreign_file_in_roosts_place_is_never_touched(rosterd: Rosterd) -> None:
    foreign_file_is_never_touched(rosterd, "pi", RELPATH)


def test_the_extension_badges_its_pane_and_keeps_the_reply(roost: Roost) -> None:
    """pi's extension events, as its API delivers them, through the real hook."""
    pane = drive_in_pane(roost, "pi", ".pi/agent/extensions/roost.ts")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", timeout=20, what="done")
    assert roost.option(pane, "@roost-harness") == "pi"
    assert roost.option(pane, "@roost-session-id") == "pi-1"
    assert roost.option(pane, "@roost-transcript-path") == "/tmp/pi-1.jsonl"
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["text"]) == ("reply", "Pi says hi.")
