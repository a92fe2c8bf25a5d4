"""What makes a headless session portable, as one document another node can take in.

A handoff (:mod:`roost.headless.runner.handoff`: ``hand_out`` on the owner, ``take_in`` on the target)
ships a :func:`bundle`: the session's
harness, adapter, session id, folder, name, policy, model, effort and recap setting, and the
harness's own files that ``session/load`` reads back. Where a harness keeps those files is data,
its manifest's ``[acp] transcripts`` (glob patterns relative to the home directory); the files
travel by the same relative paths, so a session opened in the same folder on the other node
finds its history where its harness looks.

Boundaries, as the target checks them (:func:`read`, :func:`place`):

- A bundle is another node's word: every field is checked, and a file is written only at a path
  the target's own manifest for that harness names (never ``~/.bashrc`` because a peer said so),
  never through a symbolic link, never outside the home directory.
- Nothing is overwritten: a file that is there with other content refuses the whole import
  (``transcript_differs``), before anything is written; one there with the same content is left.
- The session's folder must exist on the target (``no_cwd``): the repository has to be on both
  sides, and that is the caller's business.
- The environment given at start does not travel: it may hold a secret, and is the machine's.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost.base import files
from roost.base.errors import Conflict, TooLarge, UsageError
from roost.headless.runner.store import Entry

VERSION = 1
MAX_FILES = 16 << 20
"""Bytes of transcript files one handoff carries; a session past it is refused
(``transcript_too_large``, 413) and stays on its node."""
MAX_COUNT = 256
"""Files one handoff carries at most."""
MAX_PATH = 1024
FIELDS = frozenset(
    {
        "version",
        "harness",
        "adapter",
        "session_id",
        "cwd",
        "name",
        "policy",
        "model",
        "effort",
        "recap",
        "origin",
        "files",
    }
)


@dataclass(frozen=True)
class File:
    """One file of a session's transcript: its path relative to the home directory, its mode
    bits, its bytes."""

    path: str
    mode: int
    content: bytes


@dataclass(frozen=True)
class Arrival:
    """A bundle as the target read it: the session as the runner keeps it, and its files."""

    entry: Entry
    files: tuple[File, ...]
    origin: str
    """The session's key on the node it came from."""


def _matcher(pattern: str, session_id: str) -> re.Pattern[str]:
    """``pattern`` (``*`` within a path segment, ``**`` any number of segments) as one regex
    over a relative path, with ``{session_id}`` standing for the id exactly."""
    parts = []
    for segment in pattern.split("/"):
        if segment == "**":
            parts.append("(?:[^/]+/)*[^/]+")
            continue
        literal = [
            re.escape(piece).replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
            for piece in segment.split("{session_id}")
        ]
        parts.append(re.escape(session_id).join(literal))
    return re.compile("/".join(parts) + r"\Z")


def named(patterns: tuple[str, ...], session_id: str, path: str) -> bool:
    """Whether ``path`` (relative to the home directory) is one ``patterns`` name for the session."""
    return any(_matcher(pattern, session_id).match(path) for pattern in patterns)


def collect(patterns: tuple[str, ...], session_id: str, home: Path) -> list[File]:
    """The session's transcript files under ``home``: regular files only, each once; TooLarge
    when they are more than one handoff carries."""
    found: dict[str, File] = {}
    total = 0
    for pattern in patterns:
        concrete = pattern.replace("{session_id}", glob.escape(session_id))
        for relative in sorted(glob.glob(concrete, root_dir=home, recursive=True)):
            path = home / relative
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode) or relative in found:
                continue
            total += info.st_size
            if total > MAX_FILES or len(found) >= MAX_COUNT:
                raise TooLarge(
                    f"the session's transcript is larger than a handoff carries ({MAX_FILES >> 20} MiB "
                    f"in at most {MAX_COUNT} files): it stays on this node",
                    code="transcript_too_large",
                    limit=MAX_FILES,
                )
            found[relative] = File(relative, stat.S_IMODE(info.st_mode) & 0o700, path.read_bytes())
    return list(found.values())


def bundle(entry: Entry, adapter: list[str], found: list[File]) -> dict[str, Any]:
    """The document a handoff sends (canonical JSON: integers, no floats)."""
    return {
        "version": VERSION,
        "harness": entry.harness,
        "adapter": list(adapter),
        "session_id": entry.session_id,
        "cwd": entry.cwd,
        "name": entry.name,
        "policy": entry.policy,
        "model": entry.model,
        "effort": entry.effort,
        "recap": entry.recap,
        "origin": entry.key,
        "files": [
            {"path": f.path, "mode": f.mode, "content": base64.b64encode(f.content).decode("ascii")}
            for f in found
        ],
    }


def _text(document: dict[str, Any], name: str, limit: int, *, optional: bool = False) -> str | None:
    value = document.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= limit or "\n" in value:
        raise UsageError(f"{name} is one line of at most {limit} characters", field=name)
    return value


def read(document: object, clock: float) -> Arrival:
    """A bundle another node sent, checked field by field; UsageError (400) naming the first
    field that is not what roost sends. What the target's own state decides (the folder, its
    adapter, the files already there) is :func:`place`'s and the runner's."""
    if not isinstance(document, dict) or set(document) != FIELDS:
        raise UsageError(f"a handoff holds exactly {', '.join(sorted(FIELDS))}", field="handoff")
    if document["version"] != VERSION:
        raise UsageError(f"this node reads handoff version {VERSION}", field="version")
    harness = _text(document, "harness", 64)
    session_id = _text(document, "session_id", 256)
    cwd = _text(document, "cwd", 4096)
    assert harness is not None and session_id is not None and cwd is not None
    if not os.path.isabs(cwd):
        raise UsageError("cwd is an absolute path", field="cwd")
    policy = document["policy"]
    if policy not in ("auto", "attention"):
        raise UsageError("policy is auto or attention", field="policy")
    if not isinstance(document["recap"], bool):
        raise UsageError("recap is true or false", field="recap")
    adapter = document["adapter"]
    if not isinstance(adapter, list) or not all(isinstance(part, str) for part in adapter):
        raise UsageError("adapter is the origin's argv, a list of strings", field="adapter")
    raw = document["files"]
    if not isinstance(raw, list) or len(raw) > MAX_COUNT:
        raise UsageError(f"files is a list of at most {MAX_COUNT}", field="files")
    carried, total = [], 0
    for item in raw:
        if not isinstance(item, dict) or set(item) != {"path", "mode", "content"}:
            raise UsageError("a file is {path, mode, content}", field="files")
        path, mode, content = item["path"], item["mode"], item["content"]
        if not isinstance(path, str) or not _relative(path):
            raise UsageError(
                f"a file's path is relative to the home directory, plainly: {path!r}", field="files"
            )
        if not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o700:
            raise UsageError("a file's mode is owner bits only", field="files")
        try:
            data = base64.b64decode(content, validate=True) if isinstance(content, str) else None
        except ValueError:
            data = None
        if data is None:
            raise UsageError("a file's content is base64", field="files")
        total += len(data)
        if total > MAX_FILES:
            raise TooLarge(
                "the transcript is larger than a handoff carries",
                code="transcript_too_large",
                limit=MAX_FILES,
            )
        carried.append(File(path, mode | 0o600, data))
    entry = Entry(
        key="",
        harness=harness,
        cwd=cwd,
        started_at=clock,
        policy=policy,
        recap=document["recap"],
        name=_text(document, "name", 200, optional=True),
        session_id=session_id,
        model=_text(document, "model", 200, optional=True),
        effort=_text(document, "effort", 64, optional=True),
        suspended=True,
    )
    origin = _text(document, "origin", 256)
    assert origin is not None
    return Arrival(entry, tuple(carried), origin)


def _relative(path: str) -> bool:
    """A plain relative path: no leading ``/``, no ``.`` or ``..`` or empty segment."""
    if not 0 < len(path) <= MAX_PATH or path.startswith("/") or "\\" in path or "\0" in path:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def place(arrival: Arrival, patterns: tuple[str, ...], home: Path, node: str) -> list[Path]:
    """Write the arrival's files under ``home``, after checking everything first: the folder
    is there, each path is one this node's manifest names for the session, none would replace
    a different file or go through a link. Returns the files written (a file already there
    with the same bytes is left, and not among them), for :func:`unplace` should the session
    not open after all."""
    entry = arrival.entry
    if not os.path.isdir(entry.cwd):
        raise Conflict(
            f"{entry.cwd} is not a folder on {node}: the repository has to exist on both sides; "
            "the session stays where it was",
            code="no_cwd",
        )
    assert entry.session_id is not None
    writes = []
    for carried in arrival.files:
        if not named(patterns, entry.session_id, carried.path):
            raise UsageError(
                f"{carried.path} is not a transcript {entry.harness}'s manifest names on {node}",
                code="not_a_transcript",
            )
        target = home / carried.path
        if _through_link(home, target):
            raise Conflict(
                f"~/{carried.path} goes through a symbolic link on {node}", code="transcript_differs"
            )
        try:
            there = target.read_bytes()
        except FileNotFoundError:
            writes.append((target, carried))
            continue
        if there != carried.content:
            raise Conflict(
                f"~/{carried.path} on {node} holds a different transcript: nothing was overwritten",
                code="transcript_differs",
            )
    made: list[Path] = []
    try:
        for target, carried in writes:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            files.replace(target, carried.content, mode=carried.mode)
            made.append(target)
    except OSError:
        unplace(made)
        raise
    return made


def unplace(written: list[Path]) -> None:
    """Remove what :func:`place` wrote: a handoff refused after its files were placed leaves
    nothing behind (the folders it made stay; they hold nothing of the session's)."""
    for path in written:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _through_link(home: Path, target: Path) -> bool:
    """Whether any existing part of ``target`` below ``home`` is a symbolic link."""
    current = home
    for part in target.relative_to(home).parts:
        current = current / part
        if current.is_symlink():
            return True
        if not current.exists():
            return False
    return False
