"""``rosterd integrate … copilot``: one extension roost owns, in its own directory."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Roost
from tests.integrate.conftest import (
    DRIVERS,
    Rosterd,
    asset_lifecycle,
    drive_in_pane,
    foreign_file_is_never_touched,
)

RELPATH = ".copilot/extensions/roost/extension.mjs"


def test_install_and_uninstall_touch_exactly_roosts_file(rosterd: Rosterd) -> None:
    asset_lifecycle(rosterd, "copilot", RELPATH, "extension")
    assert not (rosterd.home / ".copilot/extensions/roost").exists()  # its own directory goes too


def test_copilot_home_is_honoured(rosterd: Rosterd) -> None:
    env = {"COPILOT_HOME": str(rosterd.home / "cp")}
    assert rosterd.run("integrate", "install", "copilot", env=env).returncode == 0
    assert list(rosterd.files()) == ["cp/extensions/roost/extension.mjs"]


def test_a_foreign_file_in_roosts_place_is_never_touched(rosterd: Rosterd) -> None:
    foreign_file_is_never_touched(rosterd, "copilot", RELPATH)


def _fake_sdk(home: Path) -> None:
    """The SDK copilot bundles, stood in for where node looks from the extension's directory."""
    package = home / "node_modules" / "@github" / "copilot-sdk"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "@github/copilot-sdk", "type": "module", "exports": {"./extension": "./extension.mjs"}}'
    )
    (package / "extension.mjs").write_text((DRIVERS / "copilot-sdk-extension.mjs").read_text())


def test_the_extension_badges_its_pane_and_keeps_the_reply(roost: Roost) -> None:
    """Copilot CLI's session events, as its extension SDK delivers them, through the real hook.
    The extension asks joinSession for nothing but events (hooks or a permission handler would
    cost the person an "elevated permissions" prompt), and a subagent's words are not the reply."""
    pane = drive_in_pane(roost, "copilot", RELPATH, setup=_fake_sdk)
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "done", timeout=20, what="done")
    assert roost.option(pane, "@roost-harness") == "copilot"
    assert roost.option(pane, "@roost-session-id") == "cp-1"
    doc = roost.json("read", "--json", pane)
    assert (doc["source"], doc["text"]) == ("reply", "Copilot: tests pass.")


def test_a_failed_model_call_ends_the_turn_in_error_not_done(roost: Roost) -> None:
    """Copilot goes idle after a session error too; that idle must not turn the error into done."""
    pane = drive_in_pane(roost, "copilot", RELPATH, setup=_fake_sdk, args=("fail",))
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == "error", timeout=20, what="error")
    assert roost.option(pane, "@roost-reason") == "the model API said 400"
