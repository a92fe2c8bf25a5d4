"""Every packaged agent manifest loads, and names only actions the hook engine knows."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.agents import manifest, model
from roost.services.integrate import KINDS, names

LAUNCHER = ("codex", "gemini", "opencode", "cursor-agent", "amp", "copilot", "droid", "grok", "pi", "omp")
HOOK_KINDS = (*KINDS, "none")


def test_every_hook_kind_but_none_is_an_integration_module() -> None:
    assert sorted(HOOK_KINDS) == sorted(model.HOOK_KINDS)


@pytest.fixture(autouse=True)
def own_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged manifests alone, cached in the test's own dir."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))


def packaged() -> dict[str, model.Manifest]:
    return manifest.load_all()


def test_the_ten_launcher_agents_and_claude_have_manifests() -> None:
    assert set(packaged()) == {"claude", *LAUNCHER}


@pytest.mark.parametrize("name", sorted({"claude", *LAUNCHER}))
def test_a_manifest_loads_and_names_only_known_actions(name: str) -> None:
    agent = packaged()[name]
    assert agent.name == name
    assert agent.binaries, "every agent is launched by a binary"
    hook = agent.hook
    assert all(action in model.ACTIONS for action in hook.events.values())
    assert all(action in model.ACTIONS for action in hook.notifications.values())
    assert hook.kind in HOOK_KINDS
    if hook.kind != "none":
        assert hook.dirs and hook.file
        assert hook.events, "an agent with an adapter maps its events"
    for event in hook.install:
        assert event in hook.events or event == "Notification", event
    if agent.resume_command:
        assert agent.resume_command.split()[0] in agent.binaries
    if agent.exit_command:
        assert agent.exit_command.startswith("/")


def test_the_integrations_are_the_six_with_adapters() -> None:
    assert names() == ["claude", "codex", "copilot", "gemini", "opencode", "pi"]


def test_no_two_agents_share_a_binary() -> None:
    seen: dict[str, str] = {}
    for name, agent in packaged().items():
        for binary in (*agent.binaries, *agent.aliases):
            assert binary not in seen, f"{binary} is both {seen[binary]} and {name}"
            seen[binary] = name
