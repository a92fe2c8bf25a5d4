"""``rosterd integrate … gemini``: roost's groups in Gemini CLI's user settings.json, which take
Claude Code's shape, nothing else of the file touched."""

from __future__ import annotations

import json

from roost.agents import manifest
from tests.integrate.conftest import Rosterd

EVENTS = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "Notification", "AfterAgent"]
THEIRS = {
    "general": {"enableAutoUpdate": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
}


def test_install_adds_one_group_per_event_running_the_hook_for_gemini(rosterd: Rosterd) -> None:
    path = rosterd.home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(THEIRS, indent=2) + "\n")
    assert "installed gemini hooks" in rosterd.ok("integrate", "install", "gemini")
    document = json.loads(path.read_text())
    assert {k: v for k, v in document.items() if k != "hooks"} == {
        k: v for k, v in THEIRS.items() if k != "hooks"
    }
    hooks = document["hooks"]
    assert sorted(hooks) == sorted(EVENTS)
    for event in EVENTS:
        ours = hooks[event][-1]
        assert ours["hooks"] == [{"type": "command", "command": "rosterd-hook gemini"}]
        assert ("matcher" in ours) == (event in ("BeforeTool", "AfterTool"))
        assert ours.get("matcher", "") == ""
    assert hooks["AfterAgent"][0] == THEIRS["hooks"]["AfterAgent"][0]
    assert rosterd.status("gemini")[0] == 0
    assert "already installed" in rosterd.ok("integrate", "install", "gemini")

    rosterd.ok("integrate", "uninstall", "gemini")
    assert json.loads(path.read_text()) == THEIRS
    assert rosterd.status("gemini")[0] == 1


def test_gemini_cli_home_moves_the_settings_as_it_moves_gemini_clis(rosterd: Rosterd) -> None:
    moved = rosterd.home / "elsewhere"
    proc = rosterd.run("integrate", "install", "gemini", env={"GEMINI_CLI_HOME": str(moved)})
    assert proc.returncode == 0, proc.stderr
    assert list(rosterd.files()) == ["elsewhere/.gemini/settings.json"]
    rosterd.run("integrate", "uninstall", "gemini", env={"GEMINI_CLI_HOME": str(moved)})
    assert rosterd.files() == {}


def test_the_installed_events_are_the_manifests_and_each_is_mapped() -> None:
    hook = manifest.load("gemini").hook
    assert hook.install == tuple(EVENTS)
    assert hook.notifications == {"ToolPermission": "blocked"}
