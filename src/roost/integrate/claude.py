"""Claude Code: roost's hook groups in settings.json (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).

With the gate (``install(gate=True)``, ``rosterd integrate install claude --gate``; off by
default) the handler of the manifest's ``[hook.gate] event`` runs ``rosterd-hook --gate``
instead, with a timeout a little past ``gate_timeout_s`` so Claude never ends a gate the
daemon still holds. A plain ``install()`` keeps the gate as it found it: turning it on or off
is always asked for by name.
"""

from __future__ import annotations

from pathlib import Path

from roost.agents.model import Manifest
from roost.integrate.common import INSTALLED, NOT_INSTALLED, OUTDATED, Report, hook_command, location
from roost.integrate.hooksjson import HooksDocument

GATE_FLAG = "--gate"
GATE_TIMEOUT_S = 3600
"""The gate's hold when none is given: ``[harness.claude] gate_timeout_s``'s default."""
GATE_MARGIN_S = 60
"""Seconds past the daemon's hold that Claude lets the gate's hook run."""


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

    def _harness(self) -> str | None:
        # The bare command for the manifest that is `rosterd-hook`'s default ([hook] default).
        return None if self.agent.hook.default else self.agent.name

    def _desired(self, gate_timeout_s: int | None = None) -> dict[str, dict]:
        """The groups to install; with a timeout, the gate's event runs the gate."""
        groups = desired_groups(self.agent, hook_command(self._harness()))
        gate = self.agent.hook.gate
        if gate_timeout_s is not None and gate is not None and gate.event in groups:
            command = hook_command(self._harness(), GATE_FLAG)
            handler = {"type": "command", "command": command, "timeout": gate_timeout_s + GATE_MARGIN_S}
            groups[gate.event] = {**groups[gate.event], "hooks": [handler]}
        return groups

    def gate_timeout(self, doc: HooksDocument | None = None) -> int | None:
        """The hold of the installed gate in seconds, or None when no gate is installed."""
        gate = self.agent.hook.gate
        if gate is None:
            return None
        doc = doc or HooksDocument(self.path)
        for index in doc.own_groups().get(gate.event, []):
            for handler in doc.groups(gate.event)[index].get("hooks", []):
                command = handler.get("command") if isinstance(handler, dict) else None
                timeout = handler.get("timeout")
                if isinstance(command, str) and GATE_FLAG in command.split() and isinstance(timeout, int):
                    return max(1, timeout - GATE_MARGIN_S)
        return None

    def install(self, gate: bool | None = None, gate_timeout_s: int | None = None) -> list[str]:
        """Install roost's hooks; ``gate`` True or False turns the gate on or off, None keeps it."""
        if gate and self.agent.hook.gate is None:
            return [f"{self.agent.name} offers no gate; hooks left as they are"]
        doc = HooksDocument(self.path)
        kept = self.gate_timeout(doc)
        hold = None if gate is False else (gate_timeout_s or kept or GATE_TIMEOUT_S) if gate else kept
        desired = self._desired(hold)
        gated = f" with the gate (holds a permission request up to {hold} s)" if hold else ""
        if doc.matches(desired):
            return [f"{self.agent.name} hooks already installed{gated} in {self.path}"]
        doc.strip()
        doc.add(desired)
        doc.save()
        return [f"installed {self.agent.name} hooks ({', '.join(desired)}){gated} in {self.path}"]

    def uninstall(self) -> list[str]:
        doc = HooksDocument(self.path)
        if not doc.has_own():
            return [f"no {self.agent.name} hooks of roost's in {self.path}"]
        doc.strip()
        doc.save()
        return [f"removed roost's {self.agent.name} hooks from {self.path}"]

    def status(self) -> Report:
        doc = HooksDocument(self.path)
        hold = self.gate_timeout(doc)
        if doc.matches(self._desired(hold)):
            detail = f"gate on: holds a permission request up to {hold} s" if hold else ""
            return Report(self.agent.name, INSTALLED, [self.path], detail, gate=hold is not None)
        if doc.has_own():
            fix = f"run `rosterd integrate install {self.agent.name}`"
            return Report(
                self.agent.name, OUTDATED, [self.path], f"roost's hooks differ from this version's; {fix}"
            )
        return Report(self.agent.name, NOT_INSTALLED, [self.path])


def make(agent: Manifest) -> ClaudeSettings:
    return ClaudeSettings(agent)
