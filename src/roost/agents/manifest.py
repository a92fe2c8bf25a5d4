"""Loading agent manifests: the packaged ones, then the user's overrides on top.

``load`` runs on every hook event, so it keeps clear of slow imports (tomllib, pathlib,
dataclasses, json): a manifest's parsed table is cached as JSON in the private runtime
directory, keyed by the file's identity, read with :mod:`roost.cjson`, and TOML is parsed
again only once the file changes.
"""

from __future__ import annotations

import os

from roost import cjson, files, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

_PACKAGED = os.path.join(os.path.dirname(__file__), "manifests")
CACHE_FORMAT = 1

# What a hook event can make roost do; the engine knows these words and nothing per agent.
ACTIONS = ("prompt", "working", "tool", "blocked", "done", "interrupt", "error", "identify", "ignore")


def __getattr__(name: str) -> object:
    # ``PACKAGED`` (a Path) is made on first use, for the same reason: pathlib costs the hook ~3 ms.
    if name == "PACKAGED":
        from pathlib import Path

        return Path(_PACKAGED)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Manifest:
    """One agent's manifest, an immutable value.

    Written out rather than a frozen dataclass: importing ``dataclasses`` would cost the hook
    several milliseconds on every event.
    """

    name: str
    binaries: tuple[str, ...]
    aliases: tuple[str, ...]
    exit_command: str | None
    resume_command: str | None
    transcript: bool
    events: dict[str, str]
    notifications: dict[str, str]
    raw: dict

    def __init__(
        self,
        name: str,
        binaries: tuple[str, ...] = (),
        aliases: tuple[str, ...] = (),
        exit_command: str | None = None,
        resume_command: str | None = None,
        transcript: bool = False,
        events: dict[str, str] | None = None,
        notifications: dict[str, str] | None = None,
        raw: dict | None = None,
    ) -> None:
        values = {
            "name": name,
            "binaries": binaries,
            "aliases": aliases,
            "exit_command": exit_command,
            "resume_command": resume_command,
            "transcript": transcript,
            "events": {} if events is None else events,
            "notifications": {} if notifications is None else notifications,
            "raw": {} if raw is None else raw,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if other.__class__ is self.__class__ else NotImplemented

    def __repr__(self) -> str:
        return f"Manifest({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    def action(self, event: str, notification: str | None = None) -> str:
        if notification is not None and notification in self.notifications:
            return self.notifications[notification]
        return self.events.get(event, "ignore")

    def matches(self, command: str) -> bool:
        return command in self.binaries or command in self.aliases


def _from_toml(path: Path | str) -> Manifest:
    """Parse a manifest file (no cache: that is ``load``'s, for the hook)."""
    import tomllib

    with open(path) as f:
        return _from_table(tomllib.loads(f.read()), path)


def _from_table(data: dict, path: Path | str) -> Manifest:
    hook = data.get("hook", {})
    return Manifest(
        name=data.get("name", os.path.splitext(os.path.basename(path))[0]),
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
    for directory in (os.path.join(paths.config_dir(), "agents"), _PACKAGED):
        path = os.path.join(directory, f"{name}.toml")
        if os.path.isfile(path):
            return _from_table(_table(path), path)
    return None


def _table(path: str) -> dict:
    """The TOML table in ``path``, parsed once per version of the file.

    The cache key is the file's path, inode, size and modification and change times, so a
    manifest edited, replaced or renamed over is parsed again. A cache entry that is missing,
    unreadable, stale or not owned by this user is ignored and rewritten.
    """
    info = os.stat(path)
    key = [path, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]
    table = _cached(path, key)
    if table is None:
        import tomllib

        with open(path) as f:
            table = tomllib.loads(f.read())
        _store(path, key, table)
    return table


def _cache_file(path: str) -> str:
    name = path.replace("%", "%25").replace("/", "%2F")
    return os.path.join(paths.runtime_path(), "manifests", f"{name}.json")


def _cached(path: str, key: list) -> dict | None:
    try:
        with open(_cache_file(path), "rb") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                return None
            entry = cjson.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
        return None
    table = entry.get("table")
    return table if isinstance(table, dict) else None


def _store(path: str, key: list, table: dict) -> None:
    """Write the cache entry atomically; a table JSON cannot hold (a TOML date) is not cached."""
    try:
        text = cjson.dumps({"format": CACHE_FORMAT, "key": key, "table": table})
    except (TypeError, ValueError):
        return
    try:
        cache = _cache_file(path)
        os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
        files.replace(cache, text)
    except OSError:
        return  # no cache: the file is parsed again next time


def load_all() -> dict[str, Manifest]:
    from pathlib import Path

    found: dict[str, Manifest] = {}
    for directory in (Path(_PACKAGED), paths.config_home() / "agents"):
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
