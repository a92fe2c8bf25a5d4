"""The hello: made and verified; any changed field, another swarm, or a known node's id with
another key is refused; the member records it carries merge by the rule."""

from __future__ import annotations

import pytest

from roost.base.errors import PeerRefused
from roost.remote.swarm import canonical, hello, members
from roost.remote.swarm.fields import b64
from roost.remote.swarm.identity import Identity
from tests.swarm.helpers import NOW, SWARM_ID, admit, current, founded, node


def greeting(sender: Identity | None = None, **change: object) -> dict[str, object]:
    known = current(founded("alpha", "beta"))
    values: dict[str, object] = {
        "name": "beta",
        "version": "0.1.0",
        "swarm_id": SWARM_ID,
        "address": "100.64.0.12:8791",
        "capabilities": ["handoff", "events"],
        "members": [member.document for member in known.values()],
        **change,
    }
    return hello.make(sender or node("beta"), now=NOW, **values)  # type: ignore[arg-type]


def code(document: object, swarm_id: str = SWARM_ID) -> str:
    with pytest.raises(PeerRefused) as refused:
        hello.verify(document, swarm_id=swarm_id, members=current(founded("alpha", "beta")))
    return refused.value.code


def test_a_hello_verifies_and_says_who_sent_it() -> None:
    beta = node("beta")
    said = hello.verify(greeting(), swarm_id=SWARM_ID, members=current(founded("alpha", "beta")))
    assert (said.node_id, said.name, said.version, said.address) == (
        "beta",
        "beta",
        "0.1.0",
        "100.64.0.12:8791",
    )
    assert said.public_key == beta.public_key and said.x25519_public_key == beta.x25519_public_key
    assert said.capabilities == ("handoff", "events") and said.signed_at == int(NOW * 1000)


def test_its_fields_are_the_documented_ones() -> None:
    assert set(greeting()) == {
        "node_id",
        "name",
        "public_key",
        "x25519_public_key",
        "version",
        "swarm_id",
        "address",
        "capabilities",
        "members",
        "signed_at",
        "certificate",
        "signature",
    }


def test_a_hello_carries_the_senders_certificate_and_refuses_another_nodes() -> None:
    beta = node("beta")
    said = hello.verify(greeting(), swarm_id=SWARM_ID, members=current(founded("alpha", "beta")))
    assert said.certificate == beta.certificate()
    fields = {k: v for k, v in greeting().items() if k != canonical.SIGNATURE}
    swapped = canonical.sign({**fields, "certificate": b64(node("gamma").certificate())}, beta)
    assert code(swapped) == "malformed"


def test_a_joiners_hello_with_another_key_is_refused() -> None:
    mallory = node("mallory")
    document = {
        **greeting(node("gamma")),
        "public_key": mallory.public_b64,
        "certificate": b64(mallory.certificate()),
    }
    assert code(document) == "bad_signature"


def test_a_joiners_hello_passes_before_it_is_a_member() -> None:
    said = hello.verify(greeting(node("gamma")), swarm_id=SWARM_ID, members=current(founded("alpha", "beta")))
    assert said.node_id == "gamma"


def test_the_members_it_carries_merge_by_the_rule() -> None:
    document = greeting()
    document["members"] = [*document["members"], admit(node("beta"), node("gamma"))]  # type: ignore[misc]
    document = canonical.sign(document, node("beta"))
    said = hello.verify(document, swarm_id=SWARM_ID, members=current(founded("alpha")))
    merged = members.merge(founded("alpha"), said.members, now=NOW)
    assert sorted(merged.changed) == ["beta", "gamma"]


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("node_id", "gamma", "bad_signature"),
        ("name", "other", "bad_signature"),
        ("public_key", node("mallory").public_b64, "wrong_key"),  # a known node's id
        ("x25519_public_key", node("mallory").x25519_public_b64, "bad_signature"),
        ("version", "9.9.9", "bad_signature"),
        ("address", "100.64.0.66:8791", "bad_signature"),
        ("capabilities", ["handoff"], "bad_signature"),
        ("members", [], "bad_signature"),
        ("signed_at", int(NOW * 1000) + 1, "bad_signature"),
        ("later", "added", "bad_signature"),
    ],
)
def test_changing_any_field_is_refused(field: str, value: object, expected: str) -> None:
    assert code({**greeting(), field: value}) == expected


def test_changing_the_swarm_is_refused() -> None:
    assert code({**greeting(), "swarm_id": "f" * 32}) == "other_swarm"
    assert code(greeting(), swarm_id="f" * 32) == "other_swarm"


def test_a_known_nodes_id_with_another_key_is_wrong_key() -> None:
    impostor = Identity.from_seed("beta", bytes(32))
    assert code(greeting(impostor)) == "wrong_key"


def test_unknown_fields_are_covered_and_kept() -> None:
    document = canonical.sign({**greeting(), "later": {"x": 1}}, node("beta"))
    said = hello.verify(document, swarm_id=SWARM_ID, members=current(founded("alpha", "beta")))
    assert said.document["later"] == {"x": 1}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("node_id", None),
        ("name", ""),
        ("public_key", "AAAA"),
        ("x25519_public_key", 5),
        ("version", "a\nb"),
        ("swarm_id", "XY"),
        ("address", ""),
        ("capabilities", "handoff"),
        ("capabilities", [1]),
        ("capabilities", ["x"] * 65),
        ("members", {}),
        ("members", [{}] * (2 * members.MAX_MEMBERS + 1)),
        ("digest", "ab"),
        ("digest", 7),
        ("signed_at", 1.5),
        ("signed_at", False),
    ],
)
def test_a_field_of_the_wrong_shape_is_malformed(field: str, value: object) -> None:
    assert code({**greeting(), field: value}) == "malformed"


@pytest.mark.parametrize("document", [None, [], "hello", {}])
def test_what_is_not_a_hello_is_malformed(document: object) -> None:
    assert code(document) == "malformed"


def test_a_hello_missing_its_signature_is_refused() -> None:
    document = greeting()
    del document["signature"]
    assert code(document) == "bad_signature"


def test_making_a_hello_of_bad_values_is_refused() -> None:
    with pytest.raises(ValueError, match="one line"):
        greeting(address="two\nlines")


def test_a_digest_names_the_senders_set_and_may_come_with_no_records() -> None:
    """A settled swarm's hello carries no records, only the digest of the set its sender holds;
    one from an older node says none, and carries every record."""
    digest = members.digest(members.held(founded("alpha", "beta")))
    said = hello.verify(
        greeting(members=[], digest=digest), swarm_id=SWARM_ID, members=current(founded("alpha", "beta"))
    )
    assert (said.digest, said.members) == (digest, [])
    assert (
        hello.verify(greeting(), swarm_id=SWARM_ID, members=current(founded("alpha", "beta"))).digest is None
    )


def test_a_hello_of_every_record_of_a_full_swarm_parses() -> None:
    """Each member's introduction beside its own record: twice as many records as members."""
    document = {**greeting(), "members": [{}] * (2 * members.MAX_MEMBERS)}
    assert hello._parse(document) is not None
