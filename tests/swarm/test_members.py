"""Member records and the merge rule, walked case by case as ``docs/swarm.md`` tables it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from roost.base.errors import PeerRefused
from roost.remote.swarm import canonical, members
from roost.remote.swarm.members import Standing, merge
from tests.swarm.helpers import NOW, admit, checked, current, founded, node

DOC = Path(__file__).resolve().parents[2] / "docs" / "swarm.md"

alpha, beta, gamma, delta, mallory = (node(name) for name in ("alpha", "beta", "gamma", "delta", "mallory"))


def revoked_beta() -> dict[str, Standing]:
    known = founded("alpha", "beta")
    known["beta"] = Standing(checked(admit(alpha, beta, NOW - 40, revoked=True)), known["beta"].introduction)
    return known


def beta_left() -> dict[str, Standing]:
    known = founded("alpha", "beta")
    known["beta"] = Standing(checked(moved(beta, beta, NOW - 40, revoked=True)), known["beta"].introduction)
    return known


def moved(signer: object, who: object, at: float, *, revoked: bool = False, key: bytes | None = None) -> dict:
    return members.record(
        signer,  # type: ignore[arg-type]
        node_id=who.node_id,  # type: ignore[attr-defined]
        name="renamed",
        public_key=key or who.public_key,  # type: ignore[attr-defined]
        x25519_public_key=who.x25519_public_key,  # type: ignore[attr-defined]
        address="100.64.0.99:8791",
        now=at,
        revoked=revoked,
    )


def tampered() -> dict:
    record = admit(alpha, gamma, NOW)
    return {**record, "address": "100.64.0.66:8791"}


# (case, known, incoming, members whose record is accepted, dropped (node, reason))
Case = tuple[
    str, Callable[[], dict[str, Standing]], Callable[[], list[object]], list[str], list[tuple[str, str]]
]
CASES: list[Case] = [
    (
        "a member introduces a node",
        lambda: founded("alpha", "beta"),
        lambda: [admit(beta, gamma)],
        ["gamma"],
        [],
    ),
    (
        "an unknown signer",
        lambda: founded("alpha"),
        lambda: [admit(mallory, gamma)],
        [],
        [("gamma", "unknown_signer")],
    ),
    (
        "a node introduces itself",
        lambda: founded("alpha"),
        lambda: [admit(gamma, gamma)],
        [],
        [("gamma", "unknown_signer")],
    ),
    (
        "a node changes its own record",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, beta, NOW)],
        ["beta"],
        [],
    ),
    (
        "an older own record loses",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, beta, NOW - 60)],
        [],
        [("beta", "stale")],
    ),
    (
        "a member changes another's record",
        lambda: founded("alpha", "beta", "mallory"),
        lambda: [moved(mallory, beta, NOW)],
        [],
        [("beta", "not_own")],
    ),
    (
        "the admitter changes the node it introduced",
        lambda: founded("alpha", "beta"),
        lambda: [moved(alpha, beta, NOW)],
        [],
        [("beta", "not_own")],
    ),
    (
        "a member revokes another",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, alpha, NOW, revoked=True)],
        ["alpha"],
        [],
    ),
    (
        "a revocation wins whatever its date",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, beta, NOW), moved(alpha, beta, NOW - 99, revoked=True)],
        ["beta"],
        [],
    ),
    (
        "a revoked node's own newer record",
        revoked_beta,
        lambda: [moved(beta, beta, NOW + 59)],
        [],
        [("beta", "revoked_signer")],
    ),
    (
        "a revoked node introduced again",
        revoked_beta,
        lambda: [moved(alpha, beta, NOW)],
        [],
        [("beta", "revoked")],
    ),
    (
        "a revoked signer's record",
        revoked_beta,
        lambda: [admit(beta, gamma)],
        [],
        [("gamma", "revoked_signer")],
    ),
    (
        "a revoked member revokes a third",
        lambda: {**revoked_beta(), **{k: v for k, v in founded("alpha", "gamma").items() if k == "gamma"}},
        lambda: [moved(beta, gamma, NOW, revoked=True)],
        [],
        [("gamma", "revoked_signer")],
    ),
    (
        "two members revoke each other, in either order",
        lambda: founded("alpha", "beta", "mallory"),
        lambda: [moved(mallory, beta, NOW, revoked=True), moved(beta, mallory, NOW, revoked=True)],
        ["beta", "mallory"],
        [],
    ),
    (
        "a revocation of a node not known yet keeps its introduction out",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, gamma, NOW - 10, revoked=True), admit(alpha, gamma, NOW)],
        ["gamma"],
        [("gamma", "revoked")],
    ),
    (
        "a node leaves",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, beta, NOW, revoked=True)],
        ["beta"],
        [],
    ),
    (
        "a member introduces a node that left",
        beta_left,
        lambda: [moved(alpha, beta, NOW)],
        ["beta"],
        [],
    ),
    (
        "a node that left signs its own record",
        beta_left,
        lambda: [moved(beta, beta, NOW)],
        [],
        [("beta", "revoked_signer")],
    ),
    ("a changed record", lambda: founded("alpha"), lambda: [tampered()], [], [("gamma", "bad_signature")]),
    (
        "another key for a known node",
        lambda: founded("alpha", "beta"),
        lambda: [moved(beta, beta, NOW, key=mallory.public_key)],
        [],
        [("beta", "wrong_key")],
    ),
    (
        "a revocation with another key for a known node",
        lambda: founded("alpha", "beta"),
        lambda: [moved(alpha, beta, NOW, revoked=True, key=mallory.public_key)],
        [],
        [("beta", "wrong_key")],
    ),
    (
        "a record from the future",
        lambda: founded("alpha"),
        lambda: [admit(alpha, gamma, NOW + 61)],
        [],
        [("gamma", "future")],
    ),
    (
        "not a record",
        lambda: founded("alpha"),
        lambda: [{"node_id": "gamma"}, "text", None],
        [],
        [("?", "malformed")] * 3,
    ),
    (
        "an introduction and its introduced node's records, in any order",
        lambda: founded("alpha"),
        lambda: [admit(delta, gamma), admit(gamma, delta), admit(alpha, delta)],
        ["delta", "gamma"],
        [("delta", "not_own")],
    ),
    (
        "the same record again",
        lambda: founded("alpha", "beta"),
        lambda: [admit(alpha, beta, NOW - 50)],
        [],
        [],
    ),
]


@pytest.mark.parametrize(
    ("known", "incoming", "accepted", "dropped"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_merge_rule(
    known: Callable[[], dict[str, Standing]],
    incoming: Callable[[], list[object]],
    accepted: list[str],
    dropped: list[tuple[str, str]],
) -> None:
    before = known()
    copy = dict(before)
    documents = incoming()
    merged = merge(before, documents, now=NOW)
    assert sorted(merged.changed) == accepted
    assert merged.dropped == dropped
    assert before == copy  # the caller's members are left as they were
    for node_id in accepted:
        assert merged.members[node_id].document in documents
    for node_id in set(before) - set(accepted):
        assert merged.standings[node_id] is before[node_id]


def test_the_docs_table_walks_the_same_cases() -> None:
    table = DOC.read_text().split("<!-- merge cases -->")[1].split("\n\n")[0]
    named = [row.split("|")[1].strip() for row in table.strip().splitlines()[2:]]
    assert named == [c[0] for c in CASES]
    for row, case in zip(table.strip().splitlines()[2:], CASES, strict=True):
        reasons = {reason for _, reason in case[4]} | ({"counts"} if case[3] else set()) or {"same"}
        assert set(re.findall(r"`(\w+)`", row.split("|")[2])) == reasons, row


def test_a_revoked_member_is_refused_and_an_unknown_one_too() -> None:
    known = current(revoked_beta())
    assert members.member(known, "alpha").node_id == "alpha"
    with pytest.raises(PeerRefused) as revoked:
        members.member(known, "beta")
    with pytest.raises(PeerRefused) as unknown:
        members.member(known, "gamma")
    assert (revoked.value.code, unknown.value.code) == ("revoked", "unknown_node")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("node_id", "delta"),
        ("name", "other"),
        ("public_key", mallory.public_b64),
        ("x25519_public_key", mallory.x25519_public_b64),
        ("address", "100.64.0.66:8791"),
        ("signed_at", int(NOW * 1000) + 1),
        ("signer", "beta"),
        ("revoked", True),
        ("extra", "added"),
    ],
)
def test_changing_any_field_of_a_record_is_refused(field: str, value: object) -> None:
    record = {**admit(alpha, gamma), field: value}
    merged = merge(founded("alpha", "beta"), [record], now=NOW)
    assert merged.changed == [] and [reason for _, reason in merged.dropped] == ["bad_signature"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("node_id", 5),
        ("node_id", "a:b"),
        ("name", ""),
        ("name", "x" * 65),
        ("public_key", "AAAA"),
        ("signed_at", True),
        ("signed_at", -1),
        ("revoked", 0),
        ("revoked", "false"),
        ("signature", 1),
        ("address", "a\nb"),
    ],
)
def test_a_record_of_the_wrong_shape_is_malformed(field: str, value: object) -> None:
    assert members.parse({**admit(alpha, gamma), field: value}) is None


def test_a_record_missing_its_signature_is_malformed() -> None:
    record = admit(alpha, gamma)
    del record["signature"]
    assert members.parse(record) is None


def test_unknown_fields_in_a_signed_record_are_kept_and_verify() -> None:
    record = canonical.sign({**admit(alpha, gamma), "later": [1, 2]}, alpha)
    merged = merge(founded("alpha"), [record], now=NOW)
    assert merged.changed == ["gamma"] and merged.members["gamma"].document["later"] == [1, 2]


def test_two_own_records_equal_in_time_pick_the_same_winner_in_either_order() -> None:
    one, two = moved(beta, beta, NOW), admit(beta, beta, NOW)
    first = merge(founded("alpha", "beta"), [one, two], now=NOW).members["beta"]
    second = merge(founded("alpha", "beta"), [two, one], now=NOW).members["beta"]
    assert first.document == second.document


def test_the_number_of_members_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(members, "MAX_MEMBERS", 2)
    merged = merge(founded("alpha", "beta"), [admit(alpha, gamma)], now=NOW)
    assert merged.dropped == [("gamma", "too_many")]


def test_a_record_carries_its_nodes_certificate_and_refuses_another_nodes() -> None:
    alpha, beta = node("alpha"), node("beta")
    own = checked(members.own_record(alpha, "alpha", "100.64.0.11:8791", NOW))
    assert own.certificate == alpha.certificate()
    assert checked(admit(alpha, beta)).certificate is None  # a record made without one
    wrong = members.record(
        alpha,
        node_id="beta",
        name="beta",
        public_key=beta.public_key,
        x25519_public_key=beta.x25519_public_key,
        address="100.64.0.12:8791",
        now=NOW,
        certificate=beta.certificate(),
    )
    assert checked(wrong).certificate == beta.certificate()
    with pytest.raises(ValueError):
        members.record(
            alpha,
            node_id="beta",
            name="beta",
            public_key=beta.public_key,
            x25519_public_key=beta.x25519_public_key,
            address="100.64.0.12:8791",
            now=NOW,
            certificate=alpha.certificate(),  # another node's key: not this record's
        )
