"""``swarm.json``: written whole with mode 0600, read back as it was, refused when others can
read it or it is not roost's."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from roost.remote.swarm import canonical, members, state
from roost.remote.swarm.members import Standing
from roost.remote.swarm.state import SwarmFileError
from tests.swarm.helpers import NOW, admit, checked, node


def made(directory: Path) -> state.SwarmState:
    swarm = state.create(node("alpha"), "alpha", "100.64.0.11:8791", now=NOW)
    intro = checked(admit(node("alpha"), node("beta")))
    swarm.standings = {**swarm.standings, "beta": Standing(intro, intro)}
    swarm.burnt = {"a" * 32: int(NOW) + 60}
    swarm.issued = {"b" * 32: int(NOW) + 120}
    state.save(directory, swarm, now=NOW)
    return swarm


def test_a_new_swarm_has_its_founder_as_its_one_member() -> None:
    alpha = node("alpha")
    swarm = state.create(alpha, "alpha", "100.64.0.11:8791", now=NOW)
    assert list(swarm.members) == ["alpha"]
    assert swarm.members["alpha"].signer == "alpha" and swarm.members["alpha"].public_key == alpha.public_key
    assert len(swarm.swarm_key) == 32 and len(swarm.swarm_id) == 32
    assert state.create(alpha, "alpha", "x:1", now=NOW).swarm_key != swarm.swarm_key


def test_it_is_written_0600_and_read_back(tmp_path: Path) -> None:
    swarm = made(tmp_path)
    assert (tmp_path / "swarm.json").stat().st_mode & 0o777 == 0o600
    loaded = state.load(tmp_path)
    assert loaded is not None
    assert (loaded.swarm_id, loaded.swarm_key, loaded.burnt, loaded.issued) == (
        swarm.swarm_id,
        swarm.swarm_key,
        swarm.burnt,
        swarm.issued,
    )
    assert loaded.standings == swarm.standings
    assert {k: m.document for k, m in loaded.members.items()} == {
        k: m.document for k, m in swarm.members.items()
    }
    assert loaded.swarm_hash == swarm.swarm_hash == state.swarm_hash(swarm.swarm_key)
    assert [name for name in os.listdir(tmp_path)] == ["swarm.json"]


def test_no_file_is_no_swarm(tmp_path: Path) -> None:
    assert state.load(tmp_path) is None


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    made(tmp_path)
    (tmp_path / "swarm.json").chmod(mode)
    with pytest.raises(SwarmFileError, match="readable by others"):
        state.load(tmp_path)
    assert (tmp_path / "swarm.json").stat().st_mode & 0o777 == mode  # refused, not repaired


def test_a_symlink_is_refused(tmp_path: Path) -> None:
    made(tmp_path)
    os.rename(tmp_path / "swarm.json", tmp_path / "real.json")
    (tmp_path / "swarm.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(SwarmFileError, match="cannot read"):
        state.load(tmp_path)


@pytest.mark.parametrize(
    "change",
    [
        lambda doc: "not json {",
        lambda doc: [],
        lambda doc: {**doc, "version": 2},
        lambda doc: {**doc, "swarm_key": "ab"},
        lambda doc: {**doc, "swarm_id": 5},
        lambda doc: {**doc, "members": [{"node_id": "x"}]},
        lambda doc: {**doc, "members": {}},
        lambda doc: {**doc, "burnt": {"nonce": 1}},
        lambda doc: {**doc, "burnt": {"a" * 32: "soon"}},
        lambda doc: {**doc, "burnt": []},
    ],
)
def test_a_file_that_is_not_roosts_is_refused(tmp_path: Path, change: object) -> None:
    made(tmp_path)
    path = tmp_path / "swarm.json"
    changed = change(json.loads(path.read_text()))  # type: ignore[operator]
    path.write_text(changed if isinstance(changed, str) else json.dumps(changed))
    with pytest.raises(SwarmFileError, match=r"swarm\.json is not"):
        state.load(tmp_path)


def test_expired_burnt_nonces_are_pruned_on_save(tmp_path: Path) -> None:
    swarm = made(tmp_path)
    swarm.burnt = {"a" * 32: int(NOW) - 1, "b" * 32: int(NOW), "c" * 32: int(NOW) + 1}
    state.save(tmp_path, swarm, now=NOW)
    loaded = state.load(tmp_path)
    assert loaded is not None and loaded.burnt == {"c" * 32: int(NOW) + 1}


def test_burnt_nonces_are_bounded_keeping_the_latest_to_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(state, "MAX_BURNT", 2)
    kept = state.prune({"a" * 32: int(NOW) + 1, "b" * 32: int(NOW) + 3, "c" * 32: int(NOW) + 2}, NOW)
    assert kept == {"b" * 32: int(NOW) + 3, "c" * 32: int(NOW) + 2}


def test_a_swarm_of_max_members_with_the_longest_fields_is_written_read_and_sent_whole(
    tmp_path: Path,
) -> None:
    """Each member is its introduction and its own record, so ``swarm.json``, a join's answer and
    a hello to a node never heard from (every record) pass the 1 MiB every other peer document
    is held to long before MAX_MEMBERS: they are held to MAX_SET_DOCUMENT."""
    founder = node("f" * 64)
    swarm = state.create(founder, "f" * 64, "a" * 250 + ":8791", now=NOW)
    grown = dict(swarm.standings)
    for number in range(1, members.MAX_MEMBERS):
        joiner = node(f"{number:064x}")
        name, address = f"{number:064x}"[-64:], f"{number:0250x}:8791"
        intro = members.record(
            founder, node_id=joiner.node_id, name=name, public_key=joiner.public_key,
            x25519_public_key=joiner.x25519_public_key, address=address, now=NOW,
            certificate=joiner.certificate(),
        )  # fmt: skip
        own = members.own_record(joiner, name, address, NOW + 1)
        grown[joiner.node_id] = Standing(checked(intro), checked(own))
    swarm.standings = grown
    state.save(tmp_path, swarm, now=NOW)

    size = (tmp_path / "swarm.json").stat().st_size
    assert canonical.MAX_DOCUMENT < size <= members.MAX_SET_DOCUMENT
    loaded = state.load(tmp_path)
    assert loaded is not None and len(loaded.members) == members.MAX_MEMBERS
    every = canonical.encode(members.documents(loaded.standings))
    assert (
        canonical.MAX_DOCUMENT < len(every) <= members.MAX_SET_DOCUMENT - (64 << 10)
    )  # room for a hello's own fields
    assert len(canonical.parse(every, members.MAX_SET_DOCUMENT)) == 2 * members.MAX_MEMBERS - 1  # type: ignore[arg-type]


def test_the_members_are_made_once_for_each_set_of_standings() -> None:
    """A round reads the members for every hello it sends and takes; they are made again only
    when a merge replaces the standings, and nobody may change the ones handed out."""
    swarm = state.create(node("alpha"), "alpha", "100.64.0.11:8791", now=NOW)
    first = swarm.members
    assert swarm.members is first
    with pytest.raises(TypeError):
        first["beta"] = first["alpha"]  # type: ignore[index]
    merged = members.merge(swarm.standings, [admit(node("alpha"), node("beta"))], now=NOW)
    swarm.standings = merged.standings
    assert list(swarm.members) == ["alpha", "beta"] and list(first) == ["alpha"]
