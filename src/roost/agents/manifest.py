"""Loading agent manifests: the packaged ones, then the user's overrides on top."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from roost import paths

PACKAGED = Path(__file__).with_name("manifests")

# What a hook event can make roost do; the engine knows these words and nothing per agent.
ACTIONS = ("prompt", "working", "tool", "blocked", "done", "error", "identify", "ignore")


@dataclass(frozen=True)
class Manifest:
    name: str
    binaries: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    exit_command: str | None = None
    resume_command: str | None = None
    transcript: bool = False
    events: dict[str, str] = field(default_factory=dict)
    notifications: dict[str, str] = field(default_factory=dict)
    raw: dict = field(default_factory=dict)

    def action(self, event: str, notification: str | None = None) -> str:
        if notification is not None and notification in self.notifications:
            return self.notifications[notification]
        return self.events.get(event, "ignore")

    def matches(self, command: str) -> bool:
        return command in self.binaries or command in self.aliases


def _from_toml(path: Path) -> Manifest:
    data = tomllib.loads(path.read_text())
    hook = data.get("hook", {})
    return Manifest(
        name=data.get("name", path.stem),
        binaries=tuple(data.get("binaries", ())),
        aliases=tuple(data.get("aliases", ())),
        exit_command=data.get("exit_command"),
        resume_command=data.get("resume_command"),
        transcript=bool(data.get("transcript", False)),
        events=dict(hook.get("events", {})),
        notifications=dict(hook.get("notifications", {})),
        raw=data,
    )


def load(name: str) -> Manifest | None:
    """One agent's manifest, the user's copy winning over the packaged one."""
    for directory in (paths.config_home() / "agents", PACKAGED):
        path = directory / f"{name}.toml"
        if path.is_file():
            return _from_toml(path)
    return None


def load_all() -> dict[str, Manifest]:
    found: dict[str, Manifest] = {}
    for directory in (PACKAGED, paths.config_home() / "agents"):
        if directory.is_dir():
            for path in sorted(directory.glob("*.toml")):
                manifest = _from_toml(path)
                found[manifest.name] = manifest
    return found


def for_command(command: str) -> Manifest | None:
    """The agent whose binary or alias is ``command`` (a pane's current command)."""
    for manifest in load_all().values():
        if manifest.matches(command):
            return manifest
    return None
