"""The contexts :class:`roost.remote.mesh.tls.Trust` keeps as membership changes: an admission
adds to the contexts in use, a revocation makes new ones that trust the revoked no more."""

from __future__ import annotations

import ssl

from roost.remote.mesh import tls
from roost.remote.swarm.identity import Identity


def trusted(context: ssl.SSLContext) -> int:
    """How many certificates ``context`` trusts (a node's is no CA's: ``get_ca_certs`` lists none)."""
    return context.cert_store_stats()["x509"]


def test_an_admission_adds_to_the_contexts_in_use_and_a_revocation_makes_new_ones() -> None:
    me = Identity.generate("me")
    a, b, c = (Identity.generate(name).certificate() for name in "abc")
    trust = tls.Trust(me, {"a": a}, [a])
    listener, dialing, pinned = trust._current, trust.client, trust.client_for("a")
    assert trusted(listener) == trusted(dialing) == 1

    trust.update({"a": a, "b": b}, [a, b])  # b admitted
    assert (trust._current, trust.client, trust.client_for("a")) == (listener, dialing, pinned)
    assert trusted(listener) == trusted(dialing) == 2
    assert trusted(trust.server) == 0  # the listening socket's own context trusts nobody

    trust.update({"b": b, "c": c}, [a, b, c])  # a revoked (still known, so its door can say so)
    assert trust._current is listener and trusted(listener) == 3
    assert trust.client is not dialing and trusted(trust.client) == 2
    assert trust.client_for("a") is None

    trust.update({"c": c}, [c])  # a and b forgotten
    assert trust._current is not listener and trusted(trust._current) == 1
    assert trust.generation == 4
