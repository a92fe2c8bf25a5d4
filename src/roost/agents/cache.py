"""The manifests' cache: checked tables kept as JSON in the private runtime directory.

One concept: an entry stands for the files it was made from, named by their identities
(:func:`identity`), and is trusted only while they still match. The hook loads a manifest on
every event, and parsing and checking TOML costs more than the rest of an unchanged event, so
the loader (:mod:`roost.agents.manifest`) keeps what it made here and pays a ``stat`` per
file and one small read instead. A cache that cannot be read or written only costs the parse.
"""

from __future__ import annotations

import os

from roost.base import cjson, files, paths

FORMAT = 2
"""The layout of an entry; an entry of another format is a miss."""


def identity(path: str) -> list | None:
    """What tells one version of ``path`` from another: the path, inode, size, modification
    and change times; None when there is no such file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [path, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def _file(source: str) -> str:
    name = source.replace("%", "%25").replace("/", "%2F")
    return os.path.join(paths.runtime_path(), "manifests", f"{name}.json")


def read(source: str, key: list) -> dict | None:
    """The entry kept for ``source`` under ``key``, or None when it is missing, unreadable,
    of another format or key, or not owned by this user."""
    try:
        with open(_file(source), "rb") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                return None
            entry = cjson.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
        return None
    return entry


def write(source: str, key: list, entry: dict) -> None:
    """Keep ``entry`` for ``source`` under ``key``, atomically; when it cannot be written the
    files are read again next time."""
    try:
        text = cjson.dumps({"format": FORMAT, "key": key, **entry})
        cache = _file(source)
        os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
        files.replace(cache, text)
    except (OSError, TypeError, ValueError):
        return
