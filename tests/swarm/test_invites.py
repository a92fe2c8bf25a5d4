"""The invite token: made by a member, checked by the admitter, good once, refused with a code
for every way it can be wrong."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roost.base.errors import PeerRefused, UsageError
from roost.remote.swarm import invites
from tests.conftest import examples
from tests.swarm.helpers import NOW, SWARM_ID, SWARM_KEY, node

ADDRESS = "100.64.0.11:8791"


def token(ttl_minutes: int = 60, now: float = NOW) -> str:
    return invites.make(SWARM_ID, SWARM_KEY, node("alpha"), ADDRESS, now=now, ttl_minutes=ttl_minutes)


def issued_by_alpha(text: object) -> dict[str, int]:
    """What alpha keeps of a token it made: its nonce, open (nothing for what is no token)."""
    try:
        made = invites.read(text)
    except PeerRefused:
        return {}
    return {made.nonce: made.expires_at}


def check(
    text: object,
    *,
    now: float = NOW,
    burnt: dict[str, int] | None = None,
    burn: bool = False,
    admitter: str = "alpha",
    issued: dict[str, int] | None = None,
) -> invites.Invite:
    return invites.check(
        text,
        SWARM_ID,
        SWARM_KEY,
        {} if burnt is None else burnt,
        admitter=admitter,
        issued=issued_by_alpha(text) if issued is None else issued,
        now=now,
        burn=burn,
    )


def refusal(text: object, **kwargs: object) -> str:
    with pytest.raises(PeerRefused) as refused:
        check(text, **kwargs)  # type: ignore[arg-type]
    assert refused.value.status == 401 and refused.value.extra == {"code": refused.value.code}
    return refused.value.code


def body(text: str) -> dict[str, object]:
    encoded = text.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))


def remade(fields: dict[str, object], key: bytes = SWARM_KEY) -> str:
    """A token with this body, tagged under ``key``: what only a holder of the key can make."""
    encoded = base64.urlsafe_b64encode(json.dumps(fields).encode()).rstrip(b"=").decode()
    return encoded + "." + hmac.new(key, encoded.encode(), hashlib.sha256).hexdigest()


def test_a_token_says_who_admits_where_and_until_when() -> None:
    alpha = node("alpha")
    invite = check(token())
    assert invite.swarm_id == SWARM_ID and invite.admitter == "alpha"
    assert invite.admitter_public_key == alpha.public_key
    assert invite.admitter_address == ADDRESS
    assert invite.expires_at == int(NOW) + 3600
    assert len(invite.nonce) == 32
    assert set(body(token())) == {
        "swarm_id",
        "nonce",
        "expires_at",
        "admitter",
        "admitter_public_key",
        "admitter_address",
    }


def test_the_joiner_reads_it_without_the_key() -> None:
    text = token()
    assert invites.read(text) == check(text)


def test_every_token_has_its_own_nonce() -> None:
    assert check(token()).nonce != check(token()).nonce


def test_it_is_good_once_when_the_admitter_burns_it() -> None:
    text, burnt = token(), {}
    issued = issued_by_alpha(text)
    check(text, burnt=burnt, issued=issued)
    check(text, burnt=burnt, issued=issued)  # only looking: nothing burnt yet
    assert burnt == {}
    invite = check(text, burnt=burnt, burn=True, issued=issued)
    assert burnt == {invite.nonce: invite.expires_at} and issued == {}
    assert refusal(text, burnt=burnt, issued=issued) == "used"


def test_only_the_admitter_it_names_honours_it() -> None:
    """Another member holds the swarm key and could check the tag, but it did not make the
    invite: it refuses and names the node to ask, so a token admits once in the whole swarm."""
    text = token()
    with pytest.raises(PeerRefused) as refused:
        check(text, admitter="beta")
    assert refused.value.code == "not_admitter"
    assert "alpha" in refused.value.message and ADDRESS in refused.value.message


def test_a_token_the_admitter_never_made_is_refused_though_its_tag_is_good() -> None:
    """Whoever holds the swarm key (a revoked member still does) can tag a token naming the
    admitter; the admitter honours only a nonce it made and has not seen used."""
    forged = remade({**body(token()), "nonce": "5" * 32})
    assert refusal(forged, issued={}) == "not_issued"
    assert refusal(forged, issued=issued_by_alpha(token())) == "not_issued"


def test_expiry_is_the_first_second_it_is_refused() -> None:
    text = token(ttl_minutes=1)
    check(text, now=NOW + 59)
    assert refusal(text, now=NOW + 60) == "expired"


@pytest.mark.parametrize("ttl", [0, -1, 7 * 24 * 60 + 1, True, 1.5])
def test_a_ttl_outside_a_minute_to_seven_days_is_refused(ttl: int) -> None:
    with pytest.raises(UsageError, match="1 to 10080 minutes"):
        token(ttl_minutes=ttl)


@pytest.mark.parametrize("ttl", [1, 7 * 24 * 60])
def test_the_ttl_bounds_are_allowed(ttl: int) -> None:
    assert check(token(ttl_minutes=ttl)).expires_at == int(NOW) + ttl * 60


def test_another_swarms_token_is_other_swarm() -> None:
    other = invites.make("f" * 32, b"\x01" * 32, node("alpha"), ADDRESS, now=NOW)
    assert refusal(other) == "other_swarm"


def test_a_token_tagged_under_another_key_is_forged() -> None:
    assert refusal(remade(body(token()), key=b"\x01" * 32)) == "forged"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("nonce", "0" * 32),
        ("expires_at", int(NOW) + 10 * 86400),
        ("admitter", "mallory"),
        ("admitter_public_key", node("mallory").public_b64),
        ("admitter_address", "100.64.0.66:8791"),
    ],
)
def test_changing_any_field_is_forged(field: str, value: object) -> None:
    fields = body(token())
    fields[field] = value
    encoded = base64.urlsafe_b64encode(json.dumps(fields).encode()).rstrip(b"=").decode()
    assert refusal(encoded + "." + token().split(".")[1]) == "forged"


def test_changing_the_tag_is_forged() -> None:
    text = token()
    tag = text[-1]
    assert refusal(text[:-1] + ("0" if tag != "0" else "1")) == "forged"


@pytest.mark.parametrize(
    "text",
    [
        None,
        12,
        "",
        ".",
        "abc",
        "a.b.c",
        "!!!." + "0" * 64,
        "eyJ9." + "0" * 64,  # not JSON
        "e30." + "0" * 64,  # {} : every field missing
        "e30." + "0" * 63,
        "e30." + "G" * 64,
        "e30." + "A" * 64,  # upper-case hex
        "A" * (invites.MAX_TOKEN + 1),
    ],
)
def test_what_is_not_a_token_is_malformed(text: object) -> None:
    assert refusal(text) == "malformed"
    with pytest.raises(PeerRefused, match="not a token"):
        invites.read(text)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("swarm_id", "XYZ"),
        ("nonce", 12),
        ("nonce", "ab"),
        ("expires_at", True),
        ("expires_at", "1800003600"),
        ("expires_at", -1),
        ("admitter", ""),
        ("admitter", "a:b"),
        ("admitter_public_key", "AAAA"),
        ("admitter_address", "two\nlines"),
        ("admitter_address", ["list"]),
    ],
)
def test_a_field_of_the_wrong_type_or_shape_is_malformed_even_with_a_good_tag(
    field: str, value: object
) -> None:
    fields = body(token())
    fields[field] = value
    assert refusal(remade(fields)) == "malformed"


def test_unknown_fields_in_a_good_token_are_kept_out_of_the_way() -> None:
    fields = body(token())
    fields["later"] = {"anything": 1}
    assert check(remade(fields)).admitter == "alpha"


FIXED = token()


@settings(max_examples=examples(300), deadline=None, database=None)
@given(st.data())
def test_any_single_character_changed_is_refused(data: st.DataObject) -> None:
    text = FIXED
    index = data.draw(st.integers(0, len(text) - 1))
    replacement = data.draw(
        st.sampled_from("0123456789abcdefABCDEF-_.=+/ xyz").filter(lambda c: c != text[index])
    )
    changed = text[:index] + replacement + text[index + 1 :]
    with pytest.raises(PeerRefused) as refused:
        check(changed)
    assert refused.value.code in {"malformed", "forged", "other_swarm"}
