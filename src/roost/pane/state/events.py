"""The events log: one JSON line per state change, resumable by cursor.

One file holds every server's lines (each names its server's boot key). A small meta file
beside it holds the log's id, the next sequence number and the first one still kept, so an
append never has to read the log and a cursor can be checked without scanning it.
Cursors are ``<log id>:<rotation generation>:<sequence>``; clearing the log makes a new id,
so an old cursor is recognisably gone rather than silently pointing at other lines.
"""

from __future__ import annotations

import fcntl
import os
import time

from roost.base import cjson, files, paths
from roost.base.errors import Expired

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from os import PathLike

LOG, META, LOCK = "log.jsonl", "meta.json", "log.lock"


class CursorGone(Expired):
    """The cursor's line was rotated away or the log was cleared."""


class BadCursor(ValueError):
    """The string is not a cursor at all."""


class Cursor:
    """A position in the log, an immutable value.

    Written out rather than a frozen dataclass: the hook appends a line on every state
    change, and importing ``dataclasses`` would cost it several milliseconds.
    """

    log_id: str
    gen: int
    seq: int

    def __init__(self, log_id: str, gen: int, seq: int) -> None:
        object.__setattr__(self, "log_id", log_id)
        object.__setattr__(self, "gen", gen)
        object.__setattr__(self, "seq", seq)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.log_id, self.gen, self.seq) == (other.log_id, other.gen, other.seq)

    def __hash__(self) -> int:
        return hash((self.log_id, self.gen, self.seq))

    def __repr__(self) -> str:
        return f"Cursor(log_id={self.log_id!r}, gen={self.gen!r}, seq={self.seq!r})"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        parts = text.split(":")
        if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2].isdigit():
            raise BadCursor(f"not a cursor: {text!r}")
        return cls(parts[0], int(parts[1]), int(parts[2]))

    def __str__(self) -> str:
        return f"{self.log_id}:{self.gen}:{self.seq}"


class _Locked:
    """The log's lock, held for a ``with`` block. A class rather than a ``contextmanager``:
    contextlib, with the functools and collections it imports, would cost the hook ~3 ms."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)


class Log:
    """The log in one directory; every method takes the lock it needs.

    Its files are named with ``os.path``, not pathlib: the hook appends a line on every state
    change, and importing pathlib (with the ``re`` it brings) would cost it ~10 ms each time.
    """

    def __init__(self, directory: str | PathLike[str]) -> None:
        self.dir = directory

    @classmethod
    def from_env(cls) -> Log | None:
        directory = paths.events_path()
        return cls(directory) if directory is not None else None

    def _file(self, name: str) -> str:
        return os.path.join(self.dir, name)

    def _text(self, name: str) -> str:
        with open(self._file(name), encoding="utf-8") as f:
            return f.read()

    def _locked(self) -> _Locked:
        paths.private_mkdir(self.dir)
        return _Locked(self._file(LOCK))

    def _meta(self) -> dict:
        try:
            return cjson.loads(self._text(META))
        except (OSError, ValueError):
            # Random, not time and pid: a process that clears and appends within one second
            # must still make a new id, or an old cursor would silently point at new lines.
            # os.urandom is what secrets.token_hex reads, without importing secrets (hmac,
            # hashlib, random: ~10 ms), which every reconcile of a server with no log yet paid.
            return {"id": f"{int(time.time())}-{os.urandom(4).hex()}", "gen": 1, "first": 1, "next": 1}

    def _write_meta(self, meta: dict) -> None:
        files.replace(self._file(META), cjson.document(meta))

    def append(self, record: dict) -> dict:
        """Add one line; returns the record with its ``ts`` and ``cursor`` filled in."""
        with self._locked():
            meta = self._meta()
            line = self._append(meta, record)
            self._write_meta(meta)
            return line

    def append_derived(self, derive: Callable[[list[dict]], list[dict]]) -> list[dict]:
        """Append the records ``derive`` makes from every kept line, all under one lock.

        For a line that depends on what the log already says (one ``closed`` line per gone
        pane): two callers deciding outside the lock would both see the pane open and both
        close it.
        """
        with self._locked():
            meta = self._meta()
            records = derive(self._lines())
            written = [self._append(meta, record) for record in records]
            if written:
                self._write_meta(meta)
            return written

    def _append(self, meta: dict, record: dict) -> dict:
        line = {"schema": 1, "ts": int(time.time()), **record}
        line["cursor"] = str(Cursor(meta["id"], meta["gen"], meta["next"]))
        fd = os.open(self._file(LOG), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(cjson.document(line))
        meta["next"] += 1
        keep = paths.events_keep()
        if meta["next"] - meta["first"] > keep + keep // 4:
            self._rotate(meta, keep)
        return line

    def _rotate(self, meta: dict, keep: int) -> None:
        lines = self._text(LOG).splitlines(keepends=True)
        kept = lines[-keep:]
        files.replace(self._file(LOG), "".join(kept))
        meta["first"] = meta["next"] - len(kept)
        meta["gen"] += 1

    def read(self, since: Cursor | None = None) -> list[dict]:
        """Every kept line after ``since`` (all of them without it).

        Raises ``CursorGone`` when the cursor's log was cleared or its line rotated away.
        """
        with self._locked():
            meta = self._meta()
            if since is not None:
                exists = os.path.exists(self._file(META))
                if not exists or since.log_id != meta["id"] or since.seq < meta["first"] - 1:
                    raise CursorGone(str(since))
                if since.seq >= meta["next"]:
                    raise CursorGone(str(since))
            lines = self._lines()
        return [line for line in lines if since is None or Cursor.parse(line["cursor"]).seq > since.seq]

    def _lines(self) -> list[dict]:
        try:
            text = self._text(LOG)
        except FileNotFoundError:
            return []
        out = []
        for raw in text.splitlines():
            try:
                out.append(cjson.loads(raw))
            except ValueError:
                continue
        return out

    def position(self) -> tuple[str, int] | None:
        """The log's id and next sequence number, without the lock or the lines.

        It changes with every line added and with a clear, so a follower checking twice a
        second reads the log only when there is something new in it.
        """
        try:
            meta = cjson.loads(self._text(META))
        except (OSError, ValueError):
            return None
        return meta["id"], meta["next"]

    def clear(self) -> None:
        with self._locked():
            for name in (LOG, META):
                try:  # noqa: SIM105 -- contextlib is not otherwise imported on the hook's path
                    os.unlink(self._file(name))
                except FileNotFoundError:
                    pass
