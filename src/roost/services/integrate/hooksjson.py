"""A JSON file of hook groups: the shape Claude Code's settings.json and codex's hooks.json share.

    {"hooks": {"Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "..."}]}]}}

A handler is roost's when its command runs ``rosterd-hook``, or when it is an HTTP handler that
carries roost's mark (:data:`MARK_HEADER`); roost adds one group per event holding only its own
handler, and removes only its own handlers. The rest of the document
keeps its keys, their order and the file's indentation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from roost.base import cjson
from roost.base.errors import SetupError
from roost.services.integrate.common import is_hook_command, read_text, remove, write_text


def _indent(text: str) -> str | int:
    found = re.search(r"\n([ \t]+)\S", text)
    return found.group(1) if found else 2


MARK_HEADER = "X-Roost-Hook"
"""The header that marks an HTTP handler as roost's (its value says whose: ``rosterd``)."""


def _is_ours(handler: object) -> bool:
    if not isinstance(handler, dict):
        return False
    headers = handler.get("headers")
    marked = isinstance(headers, dict) and headers.get(MARK_HEADER) == "rosterd"
    return is_hook_command(handler.get("command")) or (handler.get("type") == "http" and marked)


def _handlers(group: object) -> list:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


class HooksDocument:
    """One hooks JSON file, read once; ``save`` writes it back only when asked."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = read_text(path)
        try:
            self.data = json.loads(self.text) if self.text and self.text.strip() else {}
        except json.JSONDecodeError as error:
            raise SetupError(f"{path} is not valid JSON ({error}); fix it or move it aside") from error
        if not isinstance(self.data, dict) or not isinstance(self.data.get("hooks", {}), dict):
            raise SetupError(f'{path} does not hold a JSON object with a "hooks" object; left untouched')

    @property
    def hooks(self) -> dict:
        return self.data.get("hooks", {})

    def groups(self, event: str) -> list:
        groups = self.hooks.get(event)
        return groups if isinstance(groups, list) else []

    def own_groups(self) -> dict[str, list[int]]:
        """For each event, the indexes of the groups holding one of roost's handlers."""
        found: dict[str, list[int]] = {}
        for event in self.hooks:
            indexes = [i for i, g in enumerate(self.groups(event)) if any(map(_is_ours, _handlers(g)))]
            if indexes:
                found[event] = indexes
        return found

    def has_own(self) -> bool:
        return bool(self.own_groups())

    def matches(self, desired: dict[str, dict]) -> bool:
        """True when roost's entries are exactly one ``desired`` group per event, nothing more."""
        own = self.own_groups()
        if set(own) != set(desired):
            return False
        return all(
            len(indexes) == 1 and self.groups(event)[indexes[0]] == desired[event]
            for event, indexes in own.items()
        )

    def strip(self) -> None:
        """Remove roost's handlers, then any group, event list or ``hooks`` they leave empty."""
        hooks = self.hooks
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            kept = []
            for group in groups:
                handlers = _handlers(group)
                remaining = [h for h in handlers if not _is_ours(h)]
                if len(remaining) == len(handlers):
                    kept.append(group)
                elif remaining:
                    kept.append({**group, "hooks": remaining})
            if kept:
                hooks[event] = kept
            elif groups:
                del hooks[event]
        if "hooks" in self.data and not hooks:
            del self.data["hooks"]

    def add(self, desired: dict[str, dict]) -> None:
        hooks = self.data.setdefault("hooks", {})
        for event, group in desired.items():
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise SetupError(f"{self.path}: hooks.{event} is not a list; left untouched")
            groups.append(group)

    def render(self) -> str:
        indent = _indent(self.text or "")
        return cjson.document(self.data, indent=indent)

    def save(self) -> None:
        """Write the document back; one left empty (``{}``) by removing roost's entries goes."""
        if self.data:
            write_text(self.path, self.render())
        else:
            remove(self.path, self.render())
