"""What each tool takes: one model per tool, made of the typed checks in :mod:`roost.base.validation`.

A model is both the check at the door and the ``inputSchema`` a client (and its model) reads in
``tools/list``, so a limit is declared once. Every string is bounded, every one-line value
refuses control characters, and an argument a tool does not know is refused, not ignored: an
agent that misspells ``wait_until`` should hear so rather than get a prompt that never waits.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, ConfigDict, Field

from roost.base.validation import Strict, integer, text, words, writable
from roost.truth.roster import records

PROMPT_LIMIT = 65_536
"""Characters a prompt may hold (the API's headless prompt body holds as many, escaped)."""
LONGEST_WAIT_S = 86_400
"""A send's wait lasts at most a day, as the API's: a long turn is a normal turn."""
WAITS = ("idle", "needs_attention", "ended")

Session = text(256, least=1, one_line=True, what="a session's key, a pid on this node, or a display name")


class Input(Strict):
    """A tool's arguments: unknown ones are refused."""

    model_config = ConfigDict(extra="forbid")


class Listing(Input):
    """``session.list``."""

    include_ended: bool = Field(default=False, description="list sessions that ended too")


class Nothing(Input):
    """A tool that takes no argument (``budget.list``)."""


class Which(Input):
    """``session.find``, ``session.read_state``, ``session.cancel``: one session."""

    name: Session


class Spawn(Input):
    """``session.spawn``: a headless session, the caller's child when the caller is a session."""

    harness: text(
        64, least=1, one_line=True, what="the name of a harness with an ACP adapter (claude, codex…)"
    )
    cwd: text(4096, least=1, one_line=True, what="an absolute folder or ~/…") | None = Field(
        default=None, description="an absolute folder or ~/…; the caller's own folder if left out"
    )
    name: text(200, least=1, one_line=True, what="a display name") | None = None
    policy: words(records.PERMISSION_POLICIES) | None = Field(
        default=None,
        description="auto or attention (stricter); the caller's own policy if left out, and never "
        "looser than the caller's",
    )
    model: text(200, least=1, one_line=True, what="a model's name") | None = None
    effort: text(64, least=1, one_line=True, what="an effort level") | None = None
    node: text(64, least=1, one_line=True, what="a node's name or id") | None = Field(
        default=None,
        description="the node of the swarm to start it on, by its name or id; this node if left out",
    )
    parent_session_key: text(256, least=1, one_line=True, what="a session's key") | None = Field(
        default=None,
        description="set by the node a spawn comes through, never by a caller: the calling session there",
    )


class Send(Input):
    """``session.send``: a prompt, and optionally what to wait for."""

    name: Session
    prompt: Annotated[
        str,
        Field(min_length=1, max_length=PROMPT_LIMIT, description=f"text of 1 to {PROMPT_LIMIT} characters"),
        AfterValidator(writable),
    ]
    wait_until: words(WAITS) | None = Field(
        default=None, description="idle (the turn ended), needs_attention or ended; no wait if left out"
    )
    timeout_s: integer(1, LONGEST_WAIT_S, f"the seconds the wait may last, from 1 to {LONGEST_WAIT_S}") = 600


class Fork(Input):
    """``session.fork``: a new session from one's conversation."""

    name: Session
    new_name: text(64, least=1, one_line=True, what="the fork's name, which no session has")
    worktree: bool = Field(
        default=False, description="run the fork in a new git worktree and branch of the source's repository"
    )
    branch: text(255, least=1, one_line=True, what="a branch name") | None = Field(
        default=None, description="the worktree's new branch (default: new_name); only with worktree"
    )


RequestId = text(64, least=1, one_line=True, what="a request's id")
READ = "the pending request's id as read: refused when another is open"


class Allow(Input):
    """``session.allow``: allow the pending permission, once or always."""

    name: Session
    always: bool = Field(
        default=False,
        description="allow always, where the harness offers it: a person's answer, refused unless "
        "rosterd's [mcp] allow_always is on",
    )
    request_id: RequestId | None = Field(default=None, description=READ)


class Deny(Input):
    """``session.deny``: refuse the pending permission."""

    name: Session
    reason: text(1000, least=1) | None = Field(
        default=None, description="why, sent to the harness beside the answer"
    )
    request_id: RequestId | None = Field(default=None, description=READ)


class Budget(Input):
    """``budget.lift``: a budget, by its scope and what it is about."""

    scope: words(("session", "folder", "day"))
    target: (
        text(4096, least=1, one_line=True, what="a session (key, pid or name) or an absolute folder") | None
    ) = Field(default=None, description="the session (key, pid or name) or the absolute folder; none for day")
