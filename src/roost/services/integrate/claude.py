"""Claude Code: roost's hook groups in settings.json (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``).

Gemini CLI's settings.json takes the same groups (its manifest's ``kind = "claude-settings"``
names its own directories and events); it has no HTTP hooks and no gate.

Two ways to hook each event: a command (``rosterd-hook``, which works with no daemon at all),
or, for the events the manifest lists in ``[hook] http``, an HTTP hook that Claude POSTs to the
daemon's hook port (``install(http=True, port=…)``, ``rosterd integrate install claude
--http``): no process starts per event. Claude draws an error under every event whose URL
refuses, so HTTP hooks belong where the port outlives the daemon (a service's socket unit);
the CLI chooses that way by default only there. A plain ``install()`` keeps the way it finds.

With the gate (``install(gate=True)``, ``--gate``; off unless asked for, which ``rosterd
setup`` does at a harness's first set-up) the handler of the
manifest's ``[hook.gate] event`` runs ``rosterd-hook --gate`` (or posts to the gate's URL)
instead, with a timeout a little past ``gate_timeout_s`` so Claude never ends a gate the
daemon still holds. A plain ``install()`` keeps the gate as it found it: turning it on or off
is always asked for by name.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from roost.agents.model import Manifest
from roost.services.integrate.common import INSTALLED, NOT_INSTALLED, OUTDATED, Report, hook_command, location
from roost.services.integrate.hooksjson import MARK_HEADER, HooksDocument

GATE_FLAG = "--gate"
GATE_PATH = "/gate"
"""What the gate's URL adds to the hook's (:mod:`roost.faces.api.hookroute`)."""
GATE_TIMEOUT_S = 3600
"""The gate's hold when none is given: ``[harness.claude] gate_timeout_s``'s default."""
GATE_MARGIN_S = 60
"""Seconds past the daemon's hold that Claude lets the gate's hook run."""
HTTP_TIMEOUT_S = 10
"""Seconds Claude waits for a plain HTTP hook: the daemon answers in milliseconds, and one that
its socket unit is starting in about a second."""
PANE_VARIABLE = "TMUX_PANE"


def hook_url(port: int, harness: str) -> str:
    """Where the daemon's hook port takes ``harness``'s events."""
    return f"http://127.0.0.1:{port}/hooks/{harness}"


def http_handler(url: str, timeout: int = HTTP_TIMEOUT_S) -> dict:
    """An HTTP hook to ``url``: Claude fills ``$TMUX_PANE`` into ``X-Pane``; roost's mark."""
    return {
        "type": "http",
        "url": url,
        "headers": {"X-Pane": f"${PANE_VARIABLE}", MARK_HEADER: "rosterd"},
        "allowedEnvVars": [PANE_VARIABLE],
        "timeout": timeout,
    }


def desired_groups(agent: Manifest, command: str, url: str | None = None) -> dict[str, dict]:
    """One group per event the manifest installs; tool events match every tool. With ``url``,
    the events Claude can post go there, the rest run ``command``."""
    matchers = set(agent.hook.matcher_events)
    groups = {}
    for event in agent.hook.install:
        if url is not None and event in agent.hook.http:
            handler = http_handler(url)
        else:
            handler = {"type": "command", "command": command}
        groups[event] = {"matcher": "", "hooks": [handler]} if event in matchers else {"hooks": [handler]}
    return groups


def _own_handlers(doc: HooksDocument, event: str) -> list[dict]:
    found = []
    for index in doc.own_groups().get(event, []):
        found += [h for h in doc.groups(event)[index].get("hooks", []) if isinstance(h, dict)]
    return found


class ClaudeSettings:
    def __init__(self, agent: Manifest) -> None:
        self.agent = agent
        self.path: Path = location(agent) / str(agent.hook.file)

    def _harness(self) -> str | None:
        # The bare command for the manifest that is `rosterd-hook`'s default ([hook] default).
        return None if self.agent.hook.default else self.agent.name

    def _desired(self, gate_timeout_s: int | None = None, port: int | None = None) -> dict[str, dict]:
        """The groups to install; with a timeout, the gate's event runs the gate; with a port,
        the events Claude can post go to the daemon's hook port."""
        url = None if port is None else hook_url(port, self.agent.name)
        groups = desired_groups(self.agent, hook_command(self._harness()), url)
        gate = self.agent.hook.gate
        if gate_timeout_s is not None and gate is not None and gate.event in groups:
            timeout = gate_timeout_s + GATE_MARGIN_S
            if url is not None and gate.event in self.agent.hook.http:
                handler = http_handler(url + GATE_PATH, timeout)
            else:
                handler = {
                    "type": "command",
                    "command": hook_command(self._harness(), GATE_FLAG),
                    "timeout": timeout,
                }
            groups[gate.event] = {**groups[gate.event], "hooks": [handler]}
        return groups

    def gate_timeout(self, doc: HooksDocument | None = None) -> int | None:
        """The hold of the installed gate in seconds, or None when no gate is installed."""
        gate = self.agent.hook.gate
        if gate is None:
            return None
        doc = doc or HooksDocument(self.path)
        for handler in _own_handlers(doc, gate.event):
            command, url, timeout = handler.get("command"), handler.get("url"), handler.get("timeout")
            gated = (isinstance(command, str) and GATE_FLAG in command.split()) or (
                isinstance(url, str) and url.endswith(GATE_PATH)
            )
            if gated and isinstance(timeout, int):
                return max(1, timeout - GATE_MARGIN_S)
        return None

    def hook_port(self, doc: HooksDocument | None = None) -> int | None:
        """The daemon's hook port the installed HTTP hooks post to, or None: command hooks."""
        doc = doc or HooksDocument(self.path)
        for event in self.agent.hook.http:
            for handler in _own_handlers(doc, event):
                url = handler.get("url")
                if handler.get("type") == "http" and isinstance(url, str):
                    try:
                        return urlsplit(url).port
                    except ValueError:
                        return None
        return None

    def install(
        self, gate: bool | None = None, gate_timeout_s: int | None = None, *, port: int | bool = True
    ) -> list[str]:
        """Install roost's hooks; ``gate`` True or False turns the gate on or off, None keeps it.
        ``port`` is the daemon's hook port for HTTP hooks, False for command hooks, True to
        keep the way installed (command hooks when none is)."""
        if gate and self.agent.hook.gate is None:
            return [f"{self.agent.name} offers no gate; hooks left as they are"]
        if not isinstance(port, bool) and not self.agent.hook.http:
            return [f"{self.agent.name} cannot post its hooks over HTTP; hooks left as they are"]
        doc = HooksDocument(self.path)
        kept = self.gate_timeout(doc)
        hold = None if gate is False else (gate_timeout_s or kept or GATE_TIMEOUT_S) if gate else kept
        posting = (self.hook_port(doc) if port else None) if isinstance(port, bool) else port
        desired = self._desired(hold, posting)
        gated = f" with the gate (holds a permission request up to {hold} s)" if hold else ""
        way = f" posting to the daemon's hook port {posting}" if posting else ""
        if doc.matches(desired):
            return [f"{self.agent.name} hooks already installed{way}{gated} in {self.path}"]
        doc.strip()
        doc.add(desired)
        doc.save()
        return [f"installed {self.agent.name} hooks ({', '.join(desired)}){way}{gated} in {self.path}"]

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
        port = self.hook_port(doc)
        if doc.matches(self._desired(hold, port)):
            said = [f"HTTP hooks to the daemon's hook port {port}"] if port else []
            said += [f"gate on: holds a permission request up to {hold} s"] if hold else []
            return Report(
                self.agent.name,
                INSTALLED,
                [self.path],
                "; ".join(said),
                gate=hold is not None,
                hooks="http" if port else "command",
                port=port,
            )
        if doc.has_own():
            fix = f"run `rosterd integrate install {self.agent.name}`"
            return Report(
                self.agent.name, OUTDATED, [self.path], f"roost's hooks differ from this version's; {fix}"
            )
        return Report(self.agent.name, NOT_INSTALLED, [self.path])


def make(agent: Manifest) -> ClaudeSettings:
    return ClaudeSettings(agent)
