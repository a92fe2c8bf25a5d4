"""The daemon's secrets, kept beside its config with mode 0600 and created on first run.

- ``loopback.token``: the bearer every TCP client must present (unix-socket peers need none,
  the socket itself is 0600).
- ``node.key``: this node's identity, ``{"id": …, "key": …}``. The id is part of every session
  key, so it must survive restarts: a daemon rebuilt after ``kill -9`` derives the same keys.
  The key is 32 random bytes: the Ed25519 seed of the node's swarm identity, so the id
  never changes with it.

A secret file readable by anyone else is refused, not repaired: whoever could read it may
already hold it, and the owner should know.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from roost.base import cjson, files, paths
from roost.base.errors import SetupError

TOKEN = "loopback.token"
NODE_KEY = "node.key"


class SecretError(SetupError):
    """A secret file is unsafe or unreadable."""


@dataclass(frozen=True)
class Secrets:
    token: str
    node_id: str


def _read(path: Path, make: str) -> str:
    if not path.exists():
        files.create(path, make)  # mode 0600; a racing daemon's file wins
    try:
        info = path.stat()
    except OSError as error:
        raise SecretError(f"cannot read {path}: {error}") from None
    problem = files.unsafe(path, info)
    if problem:
        raise SecretError(problem)
    return path.read_text().strip()


def token(directory: Path) -> str:
    """The loopback bearer token, created if missing."""
    value = _read(directory / TOKEN, secrets.token_urlsafe(32) + "\n")
    if len(value) < 16:
        raise SecretError(f"{directory / TOKEN} holds no usable token")
    return value


def _node(directory: Path) -> tuple[Path, dict[str, object], str]:
    """``node.key``'s path, document and id (the file created if missing)."""
    fresh = cjson.document({"id": secrets.token_hex(8), "key": secrets.token_hex(32)})
    path = directory / NODE_KEY
    try:
        doc = json.loads(_read(path, fresh))
        ident = doc["id"]
    except (ValueError, KeyError, TypeError):
        raise SecretError(f"{path} is not a node key") from None
    if not isinstance(ident, str) or not ident or ":" in ident:
        raise SecretError(f"{path} holds no usable node id")
    return path, doc, ident


def node_id(directory: Path) -> str:
    """This node's id, from ``node.key`` (created if missing)."""
    return _node(directory)[2]


def node_key(directory: Path) -> tuple[str, bytes]:
    """This node's id and its 32-byte key, from ``node.key`` (created if missing). The key is
    the Ed25519 seed of the node's swarm identity (``roost.remote.swarm.identity``); the id stays
    the one stored, whatever the key, and a daemon that needs only the id never reads it."""
    path, doc, ident = _node(directory)
    key = doc.get("key")
    try:
        seed = bytes.fromhex(key) if isinstance(key, str) else b""
    except ValueError:
        seed = b""
    if len(seed) != 32:
        raise SecretError(f"{path} holds no usable key (64 hex digits)")
    return ident, seed


def load(directory: Path) -> Secrets:
    """Both secrets, creating the directory (0700) and the files on first run."""
    paths.private_mkdir(directory)
    return Secrets(token(directory), node_id(directory))
