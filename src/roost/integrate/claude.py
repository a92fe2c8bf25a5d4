"""Claude Code: roost's hook groups in settings.json (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``)."""

from __future__ import annotations

from pathlib import Path

from roost.agents.manifest import Manifest
from roost.integrate.common import INSTALLED, NOT_INSTALLED, OUTDATED, Report, hook_command, location
from roost.integrate.hooksjson import HooksDocument


def desired_groups(agent: Manifest, command: str) -> dict[str, dict]:
    """One group per event the manifest installs; tool events match every tool."""
    matchers = set(agent.hook.matcher_events)
    groups = {}
    for event in agent.hook.install:
        handler = {"type": "command", "command": command}
        groups[event] = {"matcher": "", "hooks": [handler]} if event in matchers else {"hooks": [handler]}
    return groups


class ClaudeSettings:
    def __init__(self, agent: Manifest) -> None:
        self.agent = agent
        self.path: Path = location(agent) / str(agent.hook.file)

    def _desired(self) -> dict[str, dict]:
        # The bare command for the manifest that is `rosterd-hook`'s default ([hook] default).
        harness = None if self.agent.hook.default else self.agent.name
        return desired_groups(self.agent, hook_command(harness))

    def install(self) -> list[str]:
        doc = HooksDocument(self.path)
        desired = self._desired()
        if doc.matches(desired):
            return [f"{self.agent.name} hooks already installed in {self.path}"]
        doc.strip()
        doc.add(desired)
        doc.save()
        return [f"installed {self.agent.name} hooks ({', '.join(desired)}) in {self.path}"]

    def uninstall(self) -> list[str]:
        doc = HooksDocument(self.path)
        if not doc.has_own():
            return [f"no {self.agent.name} hooks of roost's in {self.path}"]
        doc.strip()
        doc.save()
        return [f"removed roost's {self.agent.name} hooks from {self.path}"]

    def status(self) -> Report:
        doc = HooksDocument(self.path)
        if doc.matches(self._desired()):
            return Report(self.agent.name, INSTALLED, [self.path])
        if doc.has_own():
            fix = f"run `rosterd integrate install {self.agent.name}`"
            return Report(
                self.agent.name, OUTDATED, [self.path], f"roost's hooks differ from this version's; {fix}"
            )
        return Report(self.agent.name, NOT_INSTALLED, [self.path])


def make(agent: Manifest) -> ClaudeSettings:
    return ClaudeSettings(agent)
