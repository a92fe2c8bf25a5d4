"""``rosterd integrate … opencode``: one plugin file roost owns, and what that plugin reports."""

from __future__ import annotations

from tests.conftest import Roost
from tests.integrate.conftest import Rosterd, asset_lifecycle, drive_in_pane, foreign_file_is_never_touched

RELPATH = ".config/opencode/plugins/roost.js"


def test_install_and_uninstall_touch_exactly_roosts_file(rosterd: Rosterd) -> None:
    asset_lifecycle(rosterd, "opencode", RELPATH, "plugin")


def test_other_plugins_are_kept(rosterd: Rosterd) -> None:
    other = rosterd.home / ".config/opencode/plugins/theirs.js"
    other.parent.mkdir(parents=True)
    other.write_text("export const Theirs = async () => ({})\n")
    rosterd.ok("integrate", "install", "opencode")
    rosterd.ok("integrate", "uninstall", "opencode")
    assert rosterd.files() == {
        ".config/opencode/plugins/theirs.js": b"export const Theirs = async () => ({})\n"
    }


def test_a_foreign_file_in_roosts_place_is_never_touched(rosterd: Rosterd) -> None:
    foreign_file_is_never_touched(rosterd, "opencode", RELPATH)


def test_the_plugin_badges_its_pane_and_keeps_the_reply(roost: Roost) -> None:
    """opencode's events, as its plugin API delivers them, through the real hook."""
    pane = drive_in_pane(roost, "opencode", "opencode/plugins/roost.js")
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", timeout=20, what="done")
    assert roost.option(pane, "@roost-harness") == "opencode"
    assert roost.option(pane, "@roost-session-id") == "oc-1"
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["text"], doc["turn"]) == ("reply", "All tests pass.", 1)
    moves = [(e["from"], e["to"], e["reason"]) for e in _events(roost, pane)]
    assert moves == [
        (None, "working", ""),
        ("working", "blocked", "bash: npm test"),
        ("blocked", "working", ""),
        ("working", "done", ""),  # the subagent's idle before it ended nothing
    ]


def _events(roost: Roost, pane: str) -> list[dict]:
    from roost.pane.state.events import Log

    log = Log(roost.root / "state" / "roost" / "panes" / "events")
    return [e for e in log.read() if e["pane"] == pane and e["event"] == "state"]
