"""``swarm.json``: the swarm this node belongs to, kept beside ``node.key`` with mode 0600.

It holds the swarm's id, its 32-byte key (it names the swarm on the wire and tags invites),
the member records as signed (each node's introduction and the record it counts by now), the
nonces of the invites this node made that are still open, and those already used, each with
its expiry. An invite is honoured only by the node that made it and only while its nonce is
open here, so a copy of the swarm key makes no invite anyone honours. A nonce is kept until
its invite expires (after that the invite is refused as ``expired`` anyway), so each list is
bounded by the invites of one longest TTL; beyond ``MAX_BURNT`` the soonest to expire go first.

A file another user owns or others can read is refused, not repaired: whoever could read it
may already hold the key, and the owner should know.

Records are read back as written, not verified again: the file is this node's own, and every
record in it passed :func:`roost.remote.swarm.members.merge` (or was signed here) on its way in.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from roost.base import files
from roost.base.errors import SetupError
from roost.remote.swarm import canonical, fields, members
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.members import Member, Standing

FILE = "swarm.json"
VERSION = 1
KEY_BYTES = 32
MAX_BURNT = 4096


class SwarmFileError(SetupError):
    """``swarm.json`` is unsafe or unreadable."""


@dataclass
class SwarmState:
    swarm_id: str
    swarm_key: bytes = field(repr=False)
    standings: dict[str, Standing]
    """Each node as this node knows it: replaced whole by a merge, never changed in place."""
    burnt: dict[str, int]
    """Nonce of a used invite → the Unix second it expires."""
    issued: dict[str, int] = field(default_factory=dict)
    """Nonce of an invite this node made and nobody has used yet → the Unix second it expires."""
    _members: tuple[dict[str, Standing], Mapping[str, Member]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def members(self) -> Mapping[str, Member]:
        """Each node's record as it counts now. Made once for each set of standings (a merge
        replaces the set whole, never changes it): a round greets every member and each hello
        looks its sender up, so making it on every read cost O(N) a greeting, O(N²) a round."""
        made = self._members
        if made is None or made[0] is not self.standings:
            made = self._members = (self.standings, MappingProxyType(members.current(self.standings)))
        return made[1]

    @property
    def swarm_hash(self) -> str:
        """hex sha256 of the swarm key: names the swarm on the wire without giving the key away."""
        return swarm_hash(self.swarm_key)


def swarm_hash(swarm_key: bytes) -> str:
    return hashlib.sha256(swarm_key).hexdigest()


def create(identity: Identity, name: str, address: str, *, now: float) -> SwarmState:
    """A new swarm with this node as its one member (self-signed: the first ``invite`` does this)."""
    own = members.parse(members.own_record(identity, name, address, now))
    assert own is not None  # own_record checked it
    return SwarmState(secrets.token_hex(16), secrets.token_bytes(KEY_BYTES), {own.node_id: Standing(own)}, {})


def prune(burnt: dict[str, int], now: float) -> dict[str, int]:
    """The burnt nonces still worth keeping at ``now``: unexpired, at most ``MAX_BURNT``."""
    kept = sorted(((expires, nonce) for nonce, expires in burnt.items() if expires > now), reverse=True)
    return {nonce: expires for expires, nonce in kept[:MAX_BURNT]}


def save(directory: Path, state: SwarmState, *, now: float) -> None:
    """Write ``swarm.json`` whole (0600, fsynced), its nonces pruned."""
    state.burnt = prune(state.burnt, now)
    state.issued = prune(state.issued, now)
    document = {
        "version": VERSION,
        "swarm_id": state.swarm_id,
        "swarm_key": state.swarm_key.hex(),
        "members": members.documents(state.standings),
        "burnt": state.burnt,
        "issued": state.issued,
    }
    files.replace(directory / FILE, canonical.encode(document) + b"\n", durable=True)


def load(directory: Path) -> SwarmState | None:
    """This node's swarm, or None when it belongs to none (no ``swarm.json``);
    :class:`SwarmFileError` for a file that is unsafe or not one roost wrote."""
    path = directory / FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SwarmFileError(f"cannot read {path}: {error.strerror}") from None
    with open(fd, "rb") as handle:
        problem = files.unsafe(path, os.fstat(handle.fileno()))
        if problem:
            raise SwarmFileError(problem)
        data = handle.read(members.MAX_SET_DOCUMENT + 1)
    try:
        document = canonical.parse(data, limit=members.MAX_SET_DOCUMENT)
    except ValueError:
        raise SwarmFileError(f"{path} is not JSON roost wrote") from None
    state = _state(document)
    if state is None:
        raise SwarmFileError(f"{path} is not a swarm file roost wrote")
    return state


def _state(document: object) -> SwarmState | None:
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return None
    swarm_id = fields.hex_text(document.get("swarm_id"), 32)
    key = fields.hex_text(document.get("swarm_key"), 2 * KEY_BYTES)
    records, burnt = document.get("members"), document.get("burnt")
    issued = document.get("issued", {})  # absent in a file from before invites were kept
    if swarm_id is None or key is None or not isinstance(records, list):
        return None
    known = members.standings(records)
    nonces = _nonces(burnt), _nonces(issued)
    if known is None or nonces[0] is None or nonces[1] is None:
        return None
    return SwarmState(swarm_id, bytes.fromhex(key), known, *nonces)


def _nonces(value: object) -> dict[str, int] | None:
    if not isinstance(value, dict) or any(
        fields.hex_text(nonce, 32) is None or fields.integer(expires) is None
        for nonce, expires in value.items()
    ):
        return None
    return dict(value)
