"""Sending one Web Push (RFC 8030, payload encrypted per RFC 8291, signed per RFC 8292).

pywebpush does the encryption and the VAPID JWT (its ``aud`` is the endpoint's origin); it
blocks, so callers run it in a thread. A push service answering 404 or 410 says the browser
dropped the subscription: it is removed from the store.

pywebpush, py_vapid and requests are imported by the first push, not with this module: with
aiohttp and cryptography they cost every daemon start (and every test run that imports the
daemon) ~0.3 s, and most daemons never push.
"""

from __future__ import annotations

import json
from typing import Any

from roost.services.notify.store import Store, Subscription
from roost.services.notify.vapid import Keys

SUBJECT = "mailto:roost@localhost"
TTL = 60
"""Seconds a push service may hold a notification for an offline device: later, it is stale."""
GONE = frozenset({404, 410})


def send(store: Store, keys: Keys, subscription: Subscription, payload: dict[str, Any]) -> bool:
    """Push ``payload`` to one subscription; whether the push service took it."""
    import requests
    from py_vapid import Vapid
    from pywebpush import WebPushException, webpush

    try:
        webpush(
            subscription.info(),
            json.dumps(payload, separators=(",", ":")),
            vapid_private_key=Vapid.from_pem(keys.pem),
            vapid_claims={"sub": SUBJECT},
            ttl=TTL,
            timeout=10,
        )
    except WebPushException as error:
        status = getattr(error.response, "status_code", None)
        if status in GONE:
            store.remove(subscription.endpoint)
        return False
    except requests.RequestException:
        return False
    return True
