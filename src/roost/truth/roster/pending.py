"""A pending request: what a session waits on a person for, in one shape whatever reported it.

A hook, the screen reader, an integration, the runner's ACP stream and the permission gate
all say "this session waits on you" with a ``pending`` object of their own. The roster gives
every one the same fields, so a client (the web app, a phone, a script) reads one shape and
answers one way:

=============  ===================================================================================
``kind``       what is asked: ``permission`` (a tool wants to run) unless the reporter says more
``id``         this request's identity: an answer names it, so a stale one is refused
``tool``       the tool asking, or null
``summary``    one line saying what it asks, or null
``options``    the answers offered, ``[{id, name, kind}]`` (kinds as ACP's: ``allow_once``,
               ``allow_always``, ``reject_once``…); empty when they cannot be given from here
``opened_at``  when the request opened (RFC 3339)
``answerable`` whether rosterd can answer it (a headless session, a gated pane); false means
               the person answers in the terminal
=============  ===================================================================================

A source that says the same wait again (Claude Code's ``Notification`` after its
``PermissionRequest``, the screen reading the same dialog twice) keeps the request's identity:
the same id, options and opening time, so an answer prepared against the first report still
names the request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from roost.truth.roster.times import to_wire

KIND = "permission"
ALLOW, ALLOW_ALWAYS, REJECT = "allow", "allow_always", "reject"
ANSWERS = (ALLOW, ALLOW_ALWAYS, REJECT)
"""What a person may answer a request, whatever its lane: the words of every face's answer."""
KINDS_OF_ANSWER = {
    ALLOW: ("allow_once",),
    ALLOW_ALWAYS: ("allow_always",),
    REJECT: ("reject_once", "reject_always"),
}
"""The option kinds (ACP's) whose presence makes each answer possible."""
ROSTERD_ONLY = ("id", "answerable")
"""Keys only rosterd itself may set: a claim over HTTP that sets them is refused."""
_IDENTITY = ("id", "kind", "tool", "options", "opened_at", "answerable")


def rosterd_only(asked: object) -> str | None:
    """The first key of a claimed pending request that only rosterd may set, or None."""
    return next((name for name in ROSTERD_ONLY if isinstance(asked, Mapping) and name in asked), None)


def answers_offered(pending: Mapping[str, Any]) -> list[str]:
    """The answers rosterd can give ``pending``, in :data:`ANSWERS`' order; none when only its
    terminal can answer it."""
    if pending.get("answerable") is not True:
        return []
    kinds = {o.get("kind") for o in pending.get("options") or [] if isinstance(o, Mapping)}
    return [answer for answer in ANSWERS if kinds.intersection(KINDS_OF_ANSWER[answer])]


def new_id() -> str:
    """A request id nobody can guess or collide with by chance."""
    return os.urandom(8).hex()


def normalized(pending: Mapping[str, Any], earlier: Mapping[str, Any] | None, at: float) -> dict[str, Any]:
    """``pending`` with every field present; ``earlier`` is the same source's request still
    open, whose identity a repeat of it keeps."""
    given = dict(pending)
    if earlier is not None and "id" not in given and given.get("summary") in (None, earlier.get("summary")):
        kept = {name: earlier[name] for name in _IDENTITY if name in earlier}
        return {**earlier, **{k: v for k, v in given.items() if v is not None}, **kept}
    return {
        **given,
        "kind": given.get("kind") or KIND,
        "id": given.get("id") or new_id(),
        "tool": given.get("tool"),
        "summary": given.get("summary"),
        "options": list(given.get("options") or []),
        "opened_at": given.get("opened_at") or to_wire(at),
        "answerable": given.get("answerable") is True,
    }
