"""Claims no one chose: every body is either refused with a ``BadClaim`` (nothing changed) or
applied, and whatever was applied, the roster still writes its snapshot, its changes and its
explanation as strict JSON.

Any process of the user can post a claim, an agent in a pane included, and one value the wire
format cannot write (``NaN``, a lone surrogate, a moment past year 9999) used to fail every
snapshot and stream until a restart. These are the properties that keep it from coming back,
over every top-level key and every claimable field.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from roost.truth.roster import claims, claimschema
from roost.truth.roster.claims import BadClaim
from tests.conftest import examples
from tests.roster.helpers import Clock, roster

EXAMPLES = examples(500)

ANY_TEXT = st.one_of(
    st.text(max_size=20),
    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"]), max_size=6),
    st.just("\ud800"),  # a lone surrogate: no UTF-8 can write it
    st.sampled_from(["x" * 70_000, "claude", "working", "idle", "blocked", "hook", "scan", "screen"]),
    st.sampled_from(["\x1b]0;pwned\x07", "semi;", "a\nb", "\u202e", "\x00"]),
)
ANY_NUMBER = st.one_of(
    st.integers(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(),  # NaN and the infinities included
    st.sampled_from([0, 1, -1, 1 << 22, (1 << 22) + 1, 1e20, -1e12, 1_700_000_000, 253_402_300_800]),
)
SCALAR = st.one_of(st.none(), st.booleans(), ANY_NUMBER, ANY_TEXT)
VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=12,
)
PROCESS = st.one_of(
    st.fixed_dictionaries({"pid": ANY_NUMBER, "start_ticks": ANY_NUMBER}),
    st.tuples(ANY_NUMBER, ANY_NUMBER).map(list),
    VALUE,
)
FIELD_NAMES = st.one_of(st.sampled_from(sorted(claimschema.CLAIMABLE)), ANY_TEXT)
HOSTILE = st.fixed_dictionaries(
    {},
    optional={
        "source": VALUE,
        "session_key": VALUE,
        "pid": st.one_of(ANY_NUMBER, VALUE),
        "start_ticks": st.one_of(ANY_NUMBER, VALUE),
        "ancestors": st.one_of(st.lists(PROCESS, max_size=3), VALUE),
        "activity": VALUE,
        "event": VALUE,
        "seq": st.one_of(ANY_NUMBER, VALUE),
        "occupant_id": st.one_of(ANY_NUMBER, VALUE),
        "fields": st.one_of(st.dictionaries(FIELD_NAMES, VALUE, max_size=4), VALUE),
        "ended": VALUE,
        "started_at": st.one_of(ANY_NUMBER, ANY_TEXT, VALUE),
    },
)
"""Any value for any top-level key."""
FAIR_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "harness": st.sampled_from(["claude", "codex"]),
        "cwd": st.text(max_size=30).map(lambda tail: "/src/" + tail),
        "name": st.text(max_size=20),
        "recap": st.text(max_size=50),
        "lane": st.sampled_from(sorted(claims.records.LANES)),
    },
)
FAIR = st.fixed_dictionaries(
    {
        "source": st.sampled_from(["hook", "scan", "screen", "integration", "launcher", "files"]),
        "pid": st.integers(min_value=1, max_value=4),
        "start_ticks": st.just(1000),
    },
    optional={
        "activity": st.sampled_from(sorted(claimschema.CLAIMABLE_WORDS)),
        "seq": st.integers(min_value=0, max_value=10),
        "fields": FAIR_FIELDS,
        "started_at": st.floats(min_value=1.6e9, max_value=1.8e9),
        "ended": st.booleans(),
    },
)
"""A claim a sender could mean, so the roster holds records for the hostile ones to meet."""
ONE_BAD_FIELD = st.builds(
    lambda fair, name, value: {
        **fair,
        "activity": "working",
        "fields": {**fair.get("fields", {}), name: value},
    },
    FAIR,
    st.sampled_from(sorted(claimschema.CLAIMABLE)),
    VALUE,
)
"""A claim a sender could mean but for one field: the value each field's check must judge."""
BODY = st.one_of(
    FAIR,
    ONE_BAD_FIELD,
    st.builds(lambda fair, hostile: {**fair, **hostile}, FAIR, HOSTILE),
    HOSTILE,
)


def strict(document: object) -> None:
    """Written the way every reader gets it: strict JSON, UTF-8."""
    json.dumps(document, allow_nan=False, ensure_ascii=False).encode("utf-8")


@settings(max_examples=EXAMPLES, deadline=None, database=None)
@given(bodies=st.lists(BODY, min_size=1, max_size=6))
def test_every_claim_is_refused_or_applied_and_the_roster_still_writes(bodies: list[dict]) -> None:
    clock = Clock()
    hub = roster(clock)
    for body in bodies:
        before = hub.snapshot()
        try:
            claim = claims.parse(body, clock.now)
        except BadClaim as refusal:
            assert str(refusal)  # says why, for the 400 to carry
            assert hub.snapshot() == before  # and nothing changed
            continue
        hub.apply(claim)
        clock.advance(0.5)
    strict(hub.snapshot())
    strict([change.to_json() for change in hub.changes_since(0)])
    for record in hub.records():
        strict(hub.explain(record.session_key))
