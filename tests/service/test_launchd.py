"""The LaunchAgent's install, status and uninstall, run on Linux against the stand-in
``launchctl`` (``tests/fakes/servicemanager.py``): the calls macOS would be given, in order."""

from __future__ import annotations

import json
import os
import plistlib
from pathlib import Path

import pytest

from roost.services.autostart import NotStarted, install, manager, status, uninstall
from tests.cli.rosterd.sandbox import FAKE_MANAGER

UID = os.getuid()
LABEL = "dev.roost.rosterd"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "launchctl").symlink_to(FAKE_MANAGER)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_MANAGER_STATE", str(tmp_path / "launchctl.json"))
    return tmp_path / "home"


def calls(home: Path) -> list[list[str]]:
    return json.loads((home.parent / "launchctl.json").read_text())["calls"]


def test_install_loads_the_agent_in_the_gui_domain_once(home: Path) -> None:
    agent = manager("darwin")
    plist = home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    log = home / "Library" / "Logs" / "roost" / "rosterd.log"
    assert agent.path == plist
    assert install(agent) == [
        f"wrote {plist}",
        f"loaded {LABEL}: it runs now and at every login (its log: {log})",
    ]
    assert plist.read_bytes() == agent.render()
    assert plistlib.loads(plist.read_bytes())["StandardErrorPath"] == str(log)
    assert log.parent.is_dir()  # launchd opens the log, but makes no directory
    assert calls(home) == [
        ["print", f"gui/{UID}"],
        ["print", f"gui/{UID}/{LABEL}"],
        ["enable", f"gui/{UID}/{LABEL}"],
        ["bootstrap", f"gui/{UID}", str(plist)],
    ]
    assert install(agent) == [f"unchanged: {plist}", f"{LABEL} is loaded and running"]
    assert calls(home)[4:] == [["print", f"gui/{UID}"], ["print", f"gui/{UID}/{LABEL}"]]
    found = status(agent)
    assert (found.manager, found.installed, found.current, found.enabled, found.active) == (
        "launchd",
        True,
        True,
        True,
        True,
    )


def test_a_changed_agent_is_unloaded_and_loaded_again(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = manager("darwin")
    install(agent)
    monkeypatch.setenv("ROOST_SOCKET", "elsewhere")
    assert install(agent)[:2] == [f"updated {agent.path}", f"unloaded {LABEL}, which ran the agent as it was"]
    assert calls(home)[-3:] == [
        ["bootout", f"gui/{UID}/{LABEL}"],
        ["enable", f"gui/{UID}/{LABEL}"],
        ["bootstrap", f"gui/{UID}", str(agent.path)],
    ]
    assert plistlib.loads(agent.path.read_bytes())["EnvironmentVariables"]["ROOST_SOCKET"] == "elsewhere"


def test_uninstall_unloads_then_removes_the_plist(home: Path) -> None:
    agent = manager("darwin")
    install(agent)
    assert uninstall(agent) == [f"stopped and unloaded {LABEL}", f"removed {agent.path}"]
    assert not agent.path.exists()
    assert calls(home)[-1] == ["bootout", f"gui/{UID}/{LABEL}"]
    assert status(agent).installed is False


def test_without_launchctl_the_plist_is_written_and_not_started(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    agent = manager("darwin")
    with pytest.raises(
        NotStarted, match=r"not enabled or started: launchctl is not installed\. Once you are"
    ):
        install(agent)
    assert agent.path.read_bytes() == agent.render()
    assert status(agent).enabled is None
