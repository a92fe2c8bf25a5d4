"""The one loader every reader of an agent's manifest goes through.

One concept: which files make an agent's manifest and what they say together, as a typed
:class:`~roost.agents.model.Manifest`. A manifest is the packaged file
``agents/manifests/<name>.toml`` with the user's ``${XDG_CONFIG_HOME}/roost/agents/<name>.toml``
merged over it (tables key by key, ``[[detect.rules]]`` by id, any other value replaced; see
:mod:`roost.agents.schema`). A user's file with a problem is left out whole and reported
(:func:`problems`), so the packaged manifest keeps working: the hook, the scan and ``close``
never lose an agent to a typo.

``load`` runs on every hook event, so it keeps clear of slow imports (tomllib, pathlib,
dataclasses, json): an agent's checked and merged table is kept in :mod:`roost.agents.cache`,
keyed by both files' identities, and TOML is parsed and checked again only once a file changes.
"""

from __future__ import annotations

import os

from roost.agents import cache
from roost.agents.model import Manifest
from roost.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_PACKAGED = os.path.join(os.path.dirname(__file__), "manifests")


def __getattr__(name: str) -> object:
    # ``PACKAGED`` (a Path) is made on first use: pathlib costs the hook ~3 ms.
    if name == "PACKAGED":
        from pathlib import Path

        return Path(_PACKAGED)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Resolved:
    """An agent's manifest (None when no usable file defines it) and the problems met."""

    __slots__ = ("manifest", "problems")

    def __init__(self, manifest: Manifest | None, problems: tuple[tuple[str, str], ...]) -> None:
        self.manifest = manifest
        self.problems = problems


def _user_dir() -> str:
    return os.path.join(paths.config_dir(), "agents")


_memo: dict[str, tuple[list, Resolved]] = {}


def resolve(name: str, user: bool = True) -> Resolved:
    """``name``'s manifest and its files' problems; ``user=False`` reads the packaged file alone.

    The cache key is both files' path, inode, size and modification and change times, so a
    manifest edited, replaced, renamed over, added or removed is read again. A cache entry that
    is missing, unreadable, stale or not owned by this user is ignored and rewritten.
    """
    packaged = os.path.join(_PACKAGED, f"{name}.toml")
    mine = os.path.join(_user_dir(), f"{name}.toml")
    key = [cache.identity(packaged), cache.identity(mine) if user else None]
    memo = f"{mine}\0{user}"
    hit = _memo.get(memo)
    if hit is not None and hit[0] == key:
        return hit[1]
    if key == [None, None]:
        return Resolved(None, ())
    source = mine if user else packaged
    entry = cache.read(source, key)
    if entry is None:
        from roost.agents import schema

        table, found = schema.resolve(name, packaged if key[0] else None, mine if key[1] else None)
        entry = {"table": table, "problems": found}
        cache.write(source, key, entry)
    table = entry["table"]
    resolved = Resolved(
        None if table is None else Manifest(table), tuple((agent, text) for agent, text in entry["problems"])
    )
    _memo[memo] = (key, resolved)
    return resolved


def load(name: str) -> Manifest | None:
    """One agent's manifest: the packaged file with the user's merged over it, or the packaged
    file alone while the user's has a problem (see :func:`problems`)."""
    return resolve(name).manifest


def names() -> list[str]:
    """Every agent with a file, packaged or the user's, by name."""
    found: set[str] = set()
    for directory in (_PACKAGED, _user_dir()):
        try:
            found.update(entry[:-5] for entry in os.listdir(directory) if entry.endswith(".toml"))
        except OSError:
            continue
    return sorted(found)


def _resolved() -> Iterator[Resolved]:
    for name in names():
        yield resolve(name)


def load_all() -> dict[str, Manifest]:
    """Every agent's manifest, by name."""
    return {r.manifest.name: r.manifest for r in _resolved() if r.manifest is not None}


def problems() -> tuple[tuple[str, str], ...]:
    """(agent, message) for every file left out, and for more than one default harness."""
    found = [problem for r in _resolved() for problem in r.problems]
    defaults = [m.name for m in load_all().values() if m.hook.default]
    if len(defaults) > 1:
        message = f"[hook] default = true in {', '.join(defaults)}: bare rosterd-hook serves {defaults[0]}"
        found.append((defaults[1], message))
    return tuple(found)


def ordered() -> list[Manifest]:
    """Every manifest in the launcher's order: by rank, then the unranked by name."""
    found = load_all().values()
    return sorted(found, key=lambda m: (m.rank is None, m.rank or 0, m.name))


def default_harness() -> str | None:
    """The agent whose manifest says ``[hook] default = true``: bare ``rosterd-hook`` serves it.

    The hook asks this on every event its host sends without an argument, so the answer is
    cached keyed by every manifest file's identity: a listing, a stat per file and one small
    read, rather than loading every manifest.
    """
    files = [os.path.join(d, f"{n}.toml") for n in names() for d in (_PACKAGED, _user_dir())]
    key = [found for found in map(cache.identity, files) if found is not None]
    source = os.path.join(_user_dir(), "default-harness")
    entry = cache.read(source, key)
    if entry is None:
        chosen = next((m.name for m in load_all().values() if m.hook.default), None)
        entry = {"default": chosen}
        cache.write(source, key, entry)
    return entry["default"]


def for_command(command: str) -> Manifest | None:
    """The agent whose binary or alias is ``command`` (a pane's current command)."""
    for manifest in load_all().values():
        if manifest.matches(command):
            return manifest
    return None
