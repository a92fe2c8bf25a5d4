"""One headless session as the runner drives it now: the value every part of the runner acts on.

It joins what must survive a reboot (the store's :class:`~roost.headless.runner.store.Entry`) to what
lives only while the daemon does: what the ACP stream has said (:class:`Traffic`), the link to
the holder and the holder's process, and the flags and the lock that keep two steps on one
session from crossing. It holds no behaviour, so launching, the lifecycle, a rebuild and the
door's verbs each read it the same way.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from roost.headless.runner import holders
from roost.headless.runner.link import Link
from roost.headless.runner.store import Entry
from roost.headless.runner.traffic import Traffic
from roost.truth.roster import ProcessId


@dataclass
class Headless:
    """One headless session as the runner drives it now."""

    entry: Entry
    traffic: Traffic
    link: Link | None = None
    process: ProcessId | None = None
    started: holders.Started | None = None
    stopping: bool = False
    """Its holder is being stopped, or started: an exit then is not a crash to act on."""
    exited: asyncio.Event = field(default_factory=asyncio.Event)
    last_active: float = 0.0
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    answered: asyncio.Event | None = None
    """Set once a holder the daemon found at its start has answered (or is known gone); None
    when there was nothing to wait for."""
