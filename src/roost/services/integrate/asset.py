"""A plugin or extension file roost owns outright (opencode, Copilot CLI, pi).

The file's first line carries ``MARK``; a file without it is someone else's and is never
overwritten or removed. The packaged asset names the hook program as ``"__ROSTERD_HOOK__"``,
filled in at install time, so ``status`` compares the file with what install would write.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from roost.agents.model import Manifest
from roost.base.errors import SetupError
from roost.services.integrate.common import (
    INSTALLED,
    NOT_INSTALLED,
    OUTDATED,
    Report,
    discard,
    hook_program,
    location,
    read_text,
    write_text,
)

MARK = "roost-integration:"
PLACEHOLDER = '"__ROSTERD_HOOK__"'


def rendered(asset: str) -> str:
    text = resources.files("roost.services.integrate").joinpath("assets", asset).read_text(encoding="utf-8")
    return text.replace(PLACEHOLDER, json.dumps(hook_program()))


def is_ours(text: str | None) -> bool:
    return text is not None and MARK in text.split("\n", 1)[0]


class AssetFile:
    def __init__(self, agent: Manifest) -> None:
        self.agent = agent
        self.directory: Path = location(agent)
        self.path = self.directory / str(agent.hook.file)
        self.asset = str(agent.hook.asset)
        self.own_dir = agent.hook.own_dir

    def install(self) -> list[str]:
        current = read_text(self.path)
        if current is not None and not is_ours(current):
            raise SetupError(f"{self.path} exists and was not written by roost; left untouched")
        wanted = rendered(self.asset)
        if current == wanted:
            return [f"{self.agent.name} {self.asset_kind} already installed at {self.path}"]
        write_text(self.path, wanted)
        return [f"installed the {self.agent.name} {self.asset_kind} at {self.path}"]

    def uninstall(self) -> list[str]:
        current = read_text(self.path)
        if not is_ours(current):
            return [f"no {self.agent.name} {self.asset_kind} of roost's at {self.path}"]
        real = discard(self.path)
        if self.own_dir and not any(self.directory.iterdir()):
            self.directory.rmdir()
        linked = f" and the file it linked to, {real}" if real != self.path else ""
        return [f"removed the {self.agent.name} {self.asset_kind} from {self.path}{linked}"]

    def status(self) -> Report:
        current = read_text(self.path)
        name = self.agent.name
        if not is_ours(current):
            detail = "a file roost did not write is in its place" if current is not None else ""
            return Report(name, NOT_INSTALLED, [self.path], detail)
        if current != rendered(self.asset):
            detail = f"it differs from this version's; run `rosterd integrate install {name}`"
            return Report(name, OUTDATED, [self.path], detail)
        return Report(name, INSTALLED, [self.path])

    @property
    def asset_kind(self) -> str:
        return "plugin" if self.path.suffix == ".js" else "extension"


def make(agent: Manifest) -> AssetFile:
    return AssetFile(agent)
