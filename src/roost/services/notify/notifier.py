"""The daemon's notifier: follows the roster's changes and pushes background transitions.

It keeps each session's previous activity so a change can be classified (see
:mod:`roost.services.notify.classify`); a transition worth telling waits out the grace in
:class:`~roost.services.notify.delay.Delays`, then goes to every subscribed device that is not viewing
that session. Opening the session (:meth:`Notifier.seen`) cancels what is pending and
acknowledges the revision it saw, so a late timer never buzzes about something already looked at.

The payload names the session and its state as a person reads it (``needs input``, ``done``,
``error``), and for a session that needs input the request
it waits on (the one line saying what it asks, the answers rosterd can give): never a prompt or
a reply. A budget crossed by a session's own turn (:func:`roost.truth.roster.changes.budget_crossed`)
is told at once, once per crossing, as ``near budget`` or ``over budget`` with the budget's
reason: what was spent of what, never what was said. Push payloads are encrypted end to end
(RFC 8291): the push service reads none of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

from roost.services.notify import push
from roost.services.notify.classify import NEEDS_INPUT, classify
from roost.services.notify.delay import Delays
from roost.services.notify.store import Store, Subscription
from roost.services.notify.vapid import Keys
from roost.truth.roster import records
from roost.truth.roster.changes import SNAPSHOT, budget_crossed
from roost.truth.roster.live import Live, Stream
from roost.truth.roster.pending import answers_offered
from roost.truth.roster.records import Record

FOLLOW_TIMEOUT = 60.0
"""Seconds the follower sleeps on a quiet stream before looking again (it wakes on any change)."""


BUDGET_WORDS = {"warning": "near budget", "exceeded": "over budget"}
"""What a push says of a session whose turn took a budget past its warning level or its limit."""
ASKS_LIMIT = 120
"""Characters of what a request asks that a notification carries (one line on a lock screen)."""


def request_of(record: Record) -> dict[str, Any] | None:
    """What a notification says of the request a session waits on: its id, the line saying
    what it asks, and the answers rosterd can give it (none: it is answered in the terminal)."""
    pending = record.pending if record.activity == records.NEEDS_ATTENTION else None
    if not pending:
        return None
    asks = pending.get("summary") or pending.get("tool") or ""
    return {
        "id": pending.get("id"),
        "asks": " ".join(str(asks).split())[:ASKS_LIMIT],
        "answers": answers_offered(pending),
    }


class Notifier:
    """Use as ``async with``: following starts on entry and stops, pending timers with it, on exit."""

    def __init__(self, live: Live, store: Store, keys: Keys, delays: Delays | None = None) -> None:
        self.live = live
        self.store = store
        self.keys = keys
        self.delays = delays or Delays()
        self.viewing: dict[str, str | None] = {}
        """Which session each subscribed endpoint is looking at now (in memory, like the spec says)."""
        self.acknowledged: dict[str, int] = {}
        """The newest revision of each session that someone opened."""
        self._activity: dict[str, str] = {}
        self._state: dict[str, str | None] = {}
        """Each session's state in roost's words as last seen: a done found failed is news."""
        self._budgets: dict[str, Record] = {}
        """Each session's record as last seen, for the budget it showed."""
        self._stream: Stream | None = None
        self._follower: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[bool]] = set()

    async def __aenter__(self) -> Notifier:
        self._stream = self.live.subscribe(replay=False, own=True)
        self._remember_all()
        self._follower = asyncio.create_task(self._follow(self._stream))
        return self

    async def __aexit__(self, *_: object) -> None:
        self.delays.close()
        if self._stream is not None:
            self._stream.__exit__()
        for task in (self._follower, *self._sends):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def subscribe(self, subscription: Subscription, viewing: str | None) -> None:
        self.store.add(subscription)
        self.viewing[subscription.endpoint] = viewing

    def unsubscribe(self, endpoint: str) -> bool:
        """Forget ``endpoint``; whether it was subscribed."""
        self.viewing.pop(endpoint, None)
        return self.store.remove(endpoint)

    def subscribed(self, endpoint: str) -> bool:
        return any(subscription.endpoint == endpoint for subscription in self.store.all())

    def seen(self, key: str, revision: int) -> bool:
        """Someone opened ``key`` at ``revision``: cancel its pending push; whether one was pending."""
        self.acknowledged[key] = max(revision, self.acknowledged.get(key, revision))
        return self.delays.cancel(key)

    def observe(self, record: Record) -> None:
        """Classify one published record against the session's previous activity."""
        key = record.session_key
        if record.liveness == records.ENDED:
            self._activity.pop(key, None)
            self._state.pop(key, None)
            self._budgets.pop(key, None)
            self.delays.cancel(key)
            return
        if budget_crossed(self._budgets.get(key), record):
            self._send(record, BUDGET_WORDS[record.budget["state"]], budget=record.budget["reason"])
        self._budgets[key] = record
        before, was = self._activity.get(key), self._state.get(key)
        self._activity[key], self._state[key] = record.activity, record.state
        what = classify(before, record.activity, record.activity_event, record.state, was)
        if what is not None:
            self.delays.schedule(key, lambda: self._fire(record, what))
        elif before != record.activity:
            self.delays.cancel(key)  # what was pending is no longer true (a dialog answered or closed)

    async def _follow(self, stream: Stream) -> None:
        while (batch := await stream.next(FOLLOW_TIMEOUT)) is not None:
            for change in batch:
                if change.event == SNAPSHOT:
                    self._remember_all()
                elif change.record is not None:
                    self.observe(change.record)

    def _remember_all(self) -> None:
        """Start over from the roster as it is (at start, or after falling behind): no news."""
        present = [record for record in self.live.roster.records() if record.liveness != records.ENDED]
        self._activity = {record.session_key: record.activity for record in present}
        self._state = {record.session_key: record.state for record in present}
        self._budgets = {record.session_key: record for record in present}

    def _fire(self, record: Record, what: str) -> None:
        if self.acknowledged.get(record.session_key, -1) >= record.revision:
            return
        request = request_of(record) if what == NEEDS_INPUT else None
        self._send(record, what, **({"request": request} if request is not None else {}))

    def _send(self, record: Record, what: str, **told: Any) -> None:
        key = record.session_key
        payload: dict[str, Any] = {
            "session_key": key,
            "name": record.name,
            "state": what,
            "revision": record.revision,
            **told,
        }
        for subscription in self.store.all():
            if self.viewing.get(subscription.endpoint) == key:
                continue
            task = asyncio.create_task(
                asyncio.to_thread(push.send, self.store, self.keys, subscription, payload)
            )
            self._sends.add(task)
            task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task[bool]) -> None:
        """Forget a finished send; an unexpected failure is logged by its type, never its payload."""
        self._sends.discard(task)
        if not task.cancelled() and (error := task.exception()) is not None:
            sys.stderr.write(f"rosterd: a push failed: {type(error).__name__}\n")
