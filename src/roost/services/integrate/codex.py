"""codex: roost's hook groups in hooks.json, trusted in config.toml (``$CODEX_HOME`` or ``~/.codex``).

codex runs a user's hook only once it is trusted: config.toml holds, under
``hooks.state."<hooks.json path>:<event>:<group>:<handler>"``, the ``trusted_hash`` of the
exact definition. roost writes that trust for its own groups only, in a marked block, with
the hash codex computes: sha256 over the canonical JSON (sorted keys, no spaces) of the
event's snake_case name and the one normalized handler. Measured against codex-cli 0.171.0,
whose ``app-server`` ``hooks/list`` reports the same ``currentHash``. If codex changes that
recipe, ``status`` still sees roost's groups but the trust no longer matches, and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from roost.agents.model import Manifest
from roost.base.errors import SetupError
from roost.services.integrate import tomlblock
from roost.services.integrate.common import (
    INSTALLED,
    NOT_INSTALLED,
    OUTDATED,
    Report,
    hook_command,
    location,
    read_text,
    remove,
    writable,
    write_text,
)
from roost.services.integrate.hooksjson import HooksDocument


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def handler(command: str, timeout: int) -> dict:
    return {"type": "command", "command": command, "timeout": timeout}


def trust_hash(event: str, command: str, timeout: int) -> str:
    """The hash codex records as trusted for a matcher-less group holding one command."""
    identity = {
        "event_name": snake(event),
        "hooks": [{"type": "command", "command": command, "timeout": max(1, timeout), "async": False}],
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def trust_key(hooks_path: Path, event: str, group: int) -> str:
    return f"{hooks_path}:{snake(event)}:{group}:0"


class CodexHooks:
    def __init__(self, agent: Manifest) -> None:
        self.agent = agent
        hook = agent.hook
        home = Path(os.path.abspath(location(agent)))
        self.hooks_path = home / str(hook.file)
        self.config_path = home / str(hook.config)
        self.timeout = 3 if hook.timeout is None else hook.timeout
        self.features = list(hook.disable_features)
        self.command = hook_command(agent.name)

    def _desired(self) -> dict[str, dict]:
        return {event: {"hooks": [handler(self.command, self.timeout)]} for event in self.agent.hook.install}

    def _trust(self, doc: HooksDocument) -> dict[str, str]:
        """key -> hash for each of roost's groups where it now sits in hooks.json."""
        return {
            trust_key(self.hooks_path, event, indexes[0]): trust_hash(event, self.command, self.timeout)
            for event, indexes in doc.own_groups().items()
        }

    def _config(self, doc: HooksDocument) -> tuple[str, str]:
        """config.toml as it is now, and as it should be with roost's trust and features."""
        text = read_text(self.config_path) or ""
        base = tomlblock.strip(text)
        current = tomlblock.parse(base, self.config_path)
        states = current.get("hooks", {}).get("state", {})
        lines = []
        for key, value in self._trust(doc).items():
            if key not in states:  # trust codex recorded itself stays codex's
                lines += [
                    f"[hooks.state.{tomlblock.string(key)}]",
                    f"trusted_hash = {tomlblock.string(value)}",
                ]
        new = base
        features = current.get("features", {})
        unset = [name for name in self.features if name not in features]
        header = tomlblock.table_header(new, "features")
        if unset and header:
            for name in unset:
                new = tomlblock.insert_line(new, tomlblock.table_header(new, "features"), f"{name} = false")
        elif unset:
            lines = ["[features]", *(f"{name} = false" for name in unset), *lines]
        new = tomlblock.append_block(
            new, "written by `rosterd integrate install codex`; `uninstall` removes it", lines
        )
        parsed = tomlblock.parse(new, f"{self.config_path} with roost's trust added")
        if any(parsed.get("features", {}).get(name) is not False for name in unset):
            raise SetupError(f"cannot add roost's settings to {self.config_path}; left untouched")
        return text, new

    def _writable(self, hooks: bool, config: bool) -> None:
        """Each file about to change can be written, checked before either is written."""
        changing = ((self.hooks_path, hooks), (self.config_path, config))
        writable(*(path for path, changes in changing if changes))

    def install(self) -> list[str]:
        doc = HooksDocument(self.hooks_path)
        hooks_change = not doc.matches(self._desired())
        if hooks_change:
            doc.strip()
            doc.add(self._desired())
        old, new = self._config(doc)
        self._writable(hooks_change, new != old)
        said = []
        if hooks_change:
            doc.save()
            said.append(f"installed codex hooks ({', '.join(self._desired())}) in {self.hooks_path}")
        if new != old:
            write_text(self.config_path, new)
            said.append(f"trusted roost's codex hooks in {self.config_path}")
            if self.features:
                said.append(
                    f"turned off codex {', '.join(self.features)} (unless you had set it): "
                    "its shared daemon cannot tell roost which pane a hook belongs to"
                )
        return said or [f"codex hooks already installed in {self.hooks_path}"]

    def uninstall(self) -> list[str]:
        doc = HooksDocument(self.hooks_path)
        hooks_change = doc.has_own()
        text = read_text(self.config_path)
        config_change = text is not None and tomlblock.has_own(text)
        self._writable(hooks_change, config_change)
        said = []
        if hooks_change:
            doc.strip()
            doc.save()
            said.append(f"removed roost's codex hooks from {self.hooks_path}")
        if config_change and text is not None:
            rest = tomlblock.strip(text)
            if rest.strip():
                write_text(self.config_path, rest)
            else:
                remove(self.config_path, rest)
            said.append(f"removed roost's trust and settings from {self.config_path}")
        return said or [f"no codex hooks of roost's in {self.hooks_path}"]

    def status(self) -> Report:
        doc = HooksDocument(self.hooks_path)
        paths = [self.hooks_path, self.config_path]
        name = self.agent.name
        if not doc.has_own():
            return Report(name, NOT_INSTALLED, paths)
        fix = f"run `rosterd integrate install {name}`"
        if not doc.matches(self._desired()):
            return Report(name, OUTDATED, paths, f"roost's hooks differ from this version's; {fix}")
        config = tomlblock.parse(read_text(self.config_path) or "", self.config_path)
        states = config.get("hooks", {}).get("state", {})
        untrusted = [k for k, v in self._trust(doc).items() if states.get(k, {}).get("trusted_hash") != v]
        if untrusted:
            return Report(
                name,
                OUTDATED,
                paths,
                f"codex will not run {len(untrusted)} of roost's hooks until they are trusted; {fix}",
            )
        on = [f for f in self.features if config.get("features", {}).get(f) is not False]
        detail = (
            f"{', '.join(on)} is on: roost badges a codex pane only if it runs codex's hooks itself"
            if on
            else ""
        )
        return Report(name, INSTALLED, paths, detail)


def make(agent: Manifest) -> CodexHooks:
    return CodexHooks(agent)
