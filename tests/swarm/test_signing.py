"""Signed requests between nodes: a member's request is accepted once, and any change to what
is signed, a stranger, a revoked node, another swarm, a stale clock or a replay is refused."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.base.errors import PeerRefused
from roost.remote.swarm import signing
from roost.remote.swarm.fields import b64, unb64
from roost.remote.swarm.members import Member
from roost.remote.swarm.signing import Nonces, sign, verify_request
from tests.conftest import examples
from tests.swarm.helpers import NOW, SWARM_KEY, admit, checked, current, founded, node

PATH = "/swarm/beta/sessions/k1/prompt?wait=idle&timeout=5"
BODY = b'{"prompt":"run the tests"}'


def known() -> dict[str, Member]:
    swarm = current(founded("alpha", "beta", "delta"))
    swarm["gamma"] = checked(admit(node("alpha"), node("gamma"), NOW - 10, revoked=True))
    return swarm


def headers(
    sender: str = "beta", *, now: float = NOW, key: bytes = SWARM_KEY, to: str = "alpha"
) -> dict[str, str]:
    return sign(node(sender), key, "POST", PATH, BODY, to=to, now=now)


def verify(
    head: dict[str, str],
    *,
    method: str = "POST",
    path: str = PATH,
    body: bytes = BODY,
    now: float = NOW,
    nonces: Nonces | None = None,
    recipient: str = "alpha",
) -> Member:
    return verify_request(
        method,
        path,
        head,
        body,
        members=known(),
        swarm_key=SWARM_KEY,
        recipient=recipient,
        nonces=nonces or Nonces(),
        now=now,
    )


def code(head: dict[str, str], **kwargs: object) -> str:
    with pytest.raises(PeerRefused) as refused:
        verify(head, **kwargs)  # type: ignore[arg-type]
    return refused.value.code


def test_a_members_request_is_accepted_as_that_member() -> None:
    assert verify(headers()).node_id == "beta"


def test_the_headers_say_who_to_whom_when_and_which_swarm() -> None:
    head = headers()
    assert set(head) == set(signing.HEADERS)
    assert head["x-roost-node"] == "beta" and head["x-roost-timestamp"] == str(int(NOW))
    assert head["x-roost-to"] == "alpha"
    assert head["x-roost-swarm"] == hashlib.sha256(SWARM_KEY).hexdigest()
    assert len(head["x-roost-nonce"]) == 32 and head["x-roost-nonce"] != headers()["x-roost-nonce"]


def test_header_names_are_case_insensitive() -> None:
    assert verify({name.title(): value for name, value in headers().items()}).node_id == "beta"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"method": "PUT"}, "bad_signature"),
        ({"path": "/swarm/beta/sessions/k2/prompt?wait=idle&timeout=5"}, "bad_signature"),
        ({"path": "/swarm/beta/sessions/k1/prompt?wait=idle&timeout=50"}, "bad_signature"),
        ({"path": "/swarm/beta/sessions/k1/prompt"}, "bad_signature"),
        ({"body": b'{"prompt":"rm -rf /"}'}, "bad_signature"),
        ({"body": b""}, "bad_signature"),
    ],
)
def test_changing_the_method_path_query_or_body_is_refused(change: dict[str, object], expected: str) -> None:
    assert code(headers(), **change) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "value", "expected"),
    [
        ("x-roost-timestamp", str(int(NOW) + 1), "bad_signature"),
        ("x-roost-nonce", "0" * 32, "bad_signature"),
        ("x-roost-node", "alpha", "bad_signature"),
        ("x-roost-to", "delta", "wrong_recipient"),
        ("x-roost-swarm", hashlib.sha256(b"other").hexdigest(), "other_swarm"),
        ("x-roost-node", "mallory", "unknown_node"),
        ("x-roost-node", "gamma", "revoked"),
        ("x-roost-signature", b64(bytes(64)), "bad_signature"),
    ],
)
def test_changing_a_header_is_refused(header: str, value: str, expected: str) -> None:
    assert code({**headers(), header: value}) == expected


def test_a_request_signed_for_one_member_is_refused_by_every_other() -> None:
    """Replayed by the member it was meant for to a third one, or pointed at a third one by
    rewriting its recipient, it is no request of its sender's there."""
    for_alpha = headers(to="alpha")
    assert verify(for_alpha, recipient="alpha").node_id == "beta"
    assert code(for_alpha, recipient="delta") == "wrong_recipient"
    assert code({**for_alpha, "x-roost-to": "delta"}, recipient="delta") == "bad_signature"


def test_the_same_nonce_is_burnt_per_recipient() -> None:
    """Each member keeps the nonces it took: one request cannot be taken twice by its recipient,
    and the same nonce signed for another recipient is that recipient's to take once."""
    alpha_nonces, delta_nonces = Nonces(), Nonces()
    head = headers(to="alpha")
    verify(head, nonces=alpha_nonces)
    assert code(head, nonces=alpha_nonces) == "replayed"
    text = signing.signed_text("POST", PATH, "delta", head["x-roost-timestamp"], head["x-roost-nonce"], BODY)
    for_delta = {**head, "x-roost-to": "delta", "x-roost-signature": b64(node("beta").sign(text))}
    assert verify(for_delta, nonces=delta_nonces, recipient="delta").node_id == "beta"
    assert code(for_delta, nonces=delta_nonces, recipient="delta") == "replayed"


def test_a_stranger_a_revoked_node_and_another_swarm_are_refused() -> None:
    assert code(headers("mallory")) == "unknown_node"
    assert code(headers("gamma")) == "revoked"
    assert code(headers(key=b"\x01" * 32)) == "other_swarm"


@pytest.mark.parametrize("offset", [-59, 59, -60, 60])
def test_a_clock_within_sixty_seconds_is_accepted(offset: int) -> None:
    assert verify(headers(now=NOW + offset)).node_id == "beta"


@pytest.mark.parametrize("offset", [-61, 61, 3600])
def test_a_clock_further_off_is_skew(offset: int) -> None:
    assert code(headers(now=NOW + offset)) == "skew"


def test_a_request_is_accepted_once() -> None:
    nonces, head = Nonces(), headers()
    verify(head, nonces=nonces)
    assert code(head, nonces=nonces) == "replayed"
    assert code(head, nonces=nonces, now=NOW + 60) == "replayed"  # still within the window
    assert verify(headers(), nonces=nonces).node_id == "beta"  # a fresh nonce is fine


def test_the_same_nonce_from_another_node_is_its_own() -> None:
    nonces, beta = Nonces(), headers("beta")
    text = signing.signed_text("POST", PATH, "alpha", beta["x-roost-timestamp"], beta["x-roost-nonce"], BODY)
    alpha = {**beta, "x-roost-node": "alpha", "x-roost-signature": b64(node("alpha").sign(text))}
    verify(beta, nonces=nonces)
    assert verify(alpha, nonces=nonces).node_id == "alpha"
    assert code(alpha, nonces=nonces) == "replayed"


def test_a_forged_request_does_not_use_up_a_nonce() -> None:
    nonces, head = Nonces(), headers()
    assert code({**head, "x-roost-signature": b64(bytes(64))}, nonces=nonces) == "bad_signature"
    assert verify(head, nonces=nonces).node_id == "beta"


def test_nonces_older_than_the_window_are_forgotten_and_the_cache_is_bounded() -> None:
    nonces = Nonces(limit=2)
    verify(headers(now=NOW - 60), nonces=nonces, now=NOW)
    verify(headers(now=NOW), nonces=nonces, now=NOW)
    assert (
        code(headers(now=NOW), nonces=nonces, now=NOW) == "too_many"
    )  # full: refused, nothing forgotten early
    verify(headers(now=NOW + 1), nonces=nonces, now=NOW + 1)  # the first is 61 s old now: forgotten
    assert len(nonces.seen) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"x-roost-node": ""},
        {"x-roost-node": "a:b"},
        {"x-roost-to": ""},
        {"x-roost-to": "a b"},
        {"x-roost-timestamp": "+1800000000"},
        {"x-roost-timestamp": "01800000000"},
        {"x-roost-timestamp": "1800000000.5"},
        {"x-roost-timestamp": "１８００"},
        {"x-roost-timestamp": "9" * 13},
        {"x-roost-nonce": "ab"},
        {"x-roost-nonce": "G" * 32},
        {"x-roost-swarm": "AB" * 32},
        {"x-roost-signature": "not base64!"},
        {"x-roost-signature": b64(bytes(63))},
    ],
)
def test_a_header_of_the_wrong_shape_is_malformed(change: dict[str, str]) -> None:
    assert code({**headers(), **change}) == "malformed"


@pytest.mark.parametrize("missing", signing.HEADERS)
def test_a_missing_header_is_malformed(missing: str) -> None:
    head = headers()
    del head[missing]
    assert code(head) == "malformed"


def test_a_header_given_twice_is_malformed() -> None:
    head = headers()
    assert code({**head, "X-Roost-Node": "alpha"}) == "malformed"


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", PATH), ("BREW", PATH), ("POST", "swarm/x"), ("POST", "/a b"), ("POST", "/a\nb"), ("POST", "")],
)
def test_a_method_or_path_that_cannot_be_signed_is_malformed(method: str, path: str) -> None:
    assert code(headers(), method=method, path=path) == "malformed"
    with pytest.raises(ValueError, match="cannot sign"):
        sign(node("beta"), SWARM_KEY, method, path, BODY, to="alpha", now=NOW)


SIGNED = headers()
FIELDS = ["method", "path", "body", *signing.HEADERS]


def _flip(data: bytes, bit: int) -> bytes:
    changed = bytearray(data)
    changed[bit // 8] ^= 1 << (bit % 8)
    return bytes(changed)


@settings(max_examples=examples(400), deadline=None, database=None)
@given(st.data())
def test_any_single_bit_changed_is_refused(data: st.DataObject) -> None:
    """A bit flipped in the method, the path and query, the body, or any header's value (the
    signature's bytes, not its text) never passes as the same member's request."""
    field = data.draw(st.sampled_from(FIELDS))
    request = {"method": b"POST", "path": PATH.encode(), "body": BODY}
    head = dict(SIGNED)
    if field == "x-roost-signature":
        raw = unb64(head[field]) or b""
        head[field] = b64(_flip(raw, data.draw(st.integers(0, len(raw) * 8 - 1))))
    elif field in signing.HEADERS:
        raw = head[field].encode()
        head[field] = _flip(raw, data.draw(st.integers(0, len(raw) * 8 - 1))).decode("latin-1")
    else:
        raw = request[field]
        request[field] = _flip(raw, data.draw(st.integers(0, len(raw) * 8 - 1)))
    with pytest.raises(PeerRefused):
        verify(
            head,
            method=request["method"].decode("latin-1"),
            path=request["path"].decode("latin-1"),
            body=request["body"],
        )
