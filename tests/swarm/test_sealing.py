"""The swarm key sealed to one joiner: it opens for that node only, and any change is refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.base.errors import PeerRefused
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.sealing import open_sealed, seal
from tests.conftest import examples
from tests.swarm.helpers import SWARM_KEY, node


def sealed_to(joiner: Identity) -> str:
    return seal(SWARM_KEY, joiner.x25519_public_key, joiner.node_id)


def code(sealed: object, joiner: Identity) -> str:
    with pytest.raises(PeerRefused) as refused:
        open_sealed(sealed, joiner)
    return refused.value.code


def test_the_joiner_opens_it() -> None:
    beta = node("beta")
    assert open_sealed(sealed_to(beta), beta) == SWARM_KEY


def test_each_seal_is_different() -> None:
    beta = node("beta")
    assert sealed_to(beta) != sealed_to(beta)


def test_another_node_cannot_open_it() -> None:
    assert code(sealed_to(node("beta")), node("gamma")) == "unsealable"


def test_sealed_to_the_right_key_under_another_node_id_is_refused() -> None:
    beta = node("beta")
    sealed = seal(SWARM_KEY, beta.x25519_public_key, "gamma")
    assert code(sealed, beta) == "unsealable"


def test_a_node_with_the_same_id_and_another_key_cannot_open_it() -> None:
    beta, impostor = node("beta"), Identity.from_seed("beta", bytes(32))
    assert code(sealed_to(beta), impostor) == "unsealable"


def test_sealed_to_the_signing_key_is_refused() -> None:
    beta = node("beta")
    assert code(seal(SWARM_KEY, beta.public_key, beta.node_id), beta) == "unsealable"


SEALED = sealed_to(node("beta"))


@settings(max_examples=examples(300), deadline=None, database=None)
@given(st.data())
def test_any_single_bit_changed_is_refused(data: st.DataObject) -> None:
    raw = bytearray(unb64(SEALED) or b"")
    bit = data.draw(st.integers(0, len(raw) * 8 - 1))
    raw[bit // 8] ^= 1 << (bit % 8)
    assert code(b64(bytes(raw)), node("beta")) == "unsealable"


@pytest.mark.parametrize("sealed", [None, 12, "", "AAAA", "!" * 80, b64(bytes(59)), "A" * 5000])
def test_what_is_not_a_sealed_key_is_malformed(sealed: object) -> None:
    assert code(sealed, node("beta")) == "malformed"


def test_a_low_order_ephemeral_key_is_refused() -> None:
    assert code(b64(bytes(32) + bytes(12) + bytes(48)), node("beta")) == "unsealable"


def test_a_truncated_or_extended_seal_is_refused() -> None:
    raw = unb64(SEALED) or b""
    assert code(b64(raw[:-1]), node("beta")) == "unsealable"
    assert code(b64(raw + b"\0"), node("beta")) == "unsealable"
