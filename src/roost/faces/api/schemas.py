"""Every request body the API takes, as one model each: the check at the door and the OpenAPI
description are both read from here (the claim's model is the roster's own,
:class:`roost.truth.roster.claimschema.ClaimBody`).

What a model cannot know stays with its route: whether a session or an agent exists, whether a
folder does, whether the text fits in its byte limit (a 413, not a 400, declared to the document
as ``x-max-bytes``). Deadlines are checked against the daemon's clock, handed in as the
validation context's ``now``; which harnesses may start is the daemon's config, which the
document fills in where a field is marked :data:`CONFIGURED`.

It is one module past 400 lines on purpose: it is the door's whole list, each model short, and
the field shapes they share (a folder, a one-line name, a deadline) are defined once here, so
that one reading shows everything a client may send and the OpenAPI document says the same.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    model_validator,
)

from roost.actions.paneclose import DEFAULT_TIMEOUT
from roost.actions.prompt import TEXT_LIMIT
from roost.base import paths, statusrow
from roost.base.errors import UsageError
from roost.base.text import REFUSED_CLASS
from roost.base.validation import Strict, integer, refuse, text, words, writable
from roost.services.notify import destinations, registrations, urlshape
from roost.truth.roster import pending, records
from roost.truth.roster.changes import SWARM_EVENTS
from roost.truth.roster.claimschema import (
    CLAIMABLE_WORDS,
    COUNT_MAX,
    WHOLE,
    ClaimBody,
    ClaimFields,
    Pid,
    Ticks,
)
from roost.truth.roster.precedence import HOOK

CONFIGURED = "x-roost-configured"
"""Marks a field whose values the daemon's config decides: the document is built with them
(:func:`roost.faces.api.openapi.document`), as an ``enum`` in this key's place."""
HARNESSES = "harnesses"
"""The config's harnesses with an ACP adapter: what a headless session may run."""
DATA_LIMIT = 65_536
"""Bytes one raw input may write."""
LONGEST_MS = 300_000
"""A wait, or a prompt's wait for its turn, lasts at most five minutes."""
WINDOW_NAME = 64
"""Characters a launched window's name may hold (a name taken from a command is cut to it)."""
REGISTERED_FIELDS = (
    "harness",
    "session_id",
    "name",
    "cwd",
    "lane",
    "tty",
    "tmux",
    "permission_policy",
    "mode",
)
"""The record fields a launcher sets when it registers a process it started."""

Epoch = integer(0, COUNT_MAX, "the status_epoch of the row that was read")
Occupant = integer(1, COUNT_MAX, "the occupant_id of the row that was read")
Revision = integer(0, COUNT_MAX, "the revision of the row that was read")


_STATES = f"a nonempty list of distinct states from {', '.join(statusrow.STATES)}"


def _distinct(states: list[str]) -> list[str]:
    if len(set(states)) != len(states):
        raise refuse(f"must be {_STATES}")
    return states


Until = Annotated[
    list[words(statusrow.STATES)],
    Field(min_length=1, description=_STATES, json_schema_extra={"uniqueItems": True}),
    AfterValidator(_distinct),
]


def _ahead(deadline_ms: int, info: ValidationInfo) -> int:
    """A deadline already past is allowed: it is an outcome, not a bad request."""
    now = (info.context or {}).get("now")
    if now is not None and deadline_ms / 1000 > now + LONGEST_MS / 1000:
        raise refuse("is more than five minutes ahead")
    return deadline_ms


DeadlineMs = Annotated[
    int,
    Field(
        ge=0,
        le=COUNT_MAX,
        description="when the caller stops caring: Unix milliseconds, at most five minutes ahead",
        json_schema_extra={"x-most-ahead-ms": LONGEST_MS},
    ),
    AfterValidator(_ahead),
]


Register = create_model(
    "Register",
    __base__=Strict,
    __doc__="``POST /register``: a process a launcher started, and the record fields it sets "
    "(their types are a claim's, declared once in ClaimFields).",
    pid=(Pid, ...),
    start_ticks=(Ticks | None, None),
    **{name: (ClaimFields.model_fields[name].annotation, None) for name in REGISTERED_FIELDS},
)


class Name(Strict):
    """``POST /sessions/{key}/name``: a display name for every client, or null to clear it."""

    name: text(200, least=1, one_line=True, what="non-empty text") | None


class Wait(Strict):
    """``POST /sessions/{key}/wait``: the pinned occupant, the states that end the wait."""

    status_epoch: Epoch
    occupant_id: Occupant
    until: Until
    after_revision: Revision | None = None
    deadline_ms: DeadlineMs


class PromptWait(Strict):
    """A prompt's own wait for the turn it starts."""

    until: Until


NOT_ONLY_ESCAPES = "[^\x1b]"
"""What a regular expression can say of a terminal's prompt having something left to send: a
character other than ESC. The rest (a text of nothing but bracketed-paste markers, which are
stripped however deeply nested) is no regular language, so the description says it; the check
is the prompt's own (:func:`roost.actions.prompt.encoded`), for its words."""


class Prompt(Strict):
    """``POST /sessions/{key}/prompt``: one fenced prompt, pinned to the row that was read."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"wait": {"type": "object"}}, "required": ["wait"]},
            "then": {"properties": {"deadline_ms": {"type": "integer"}}, "required": ["deadline_ms"]},
        }
    )

    text: Annotated[
        str,
        Field(
            min_length=1,
            description=f"the prompt: nonempty text of at most {TEXT_LIMIT} UTF-8 bytes (more is a 413), "
            "with something left once bracketed-paste markers and ESC are stripped",
            json_schema_extra={"pattern": NOT_ONLY_ESCAPES, "x-max-bytes": TEXT_LIMIT},
        ),
        AfterValidator(writable),
    ]
    status_epoch: Epoch
    occupant_id: Occupant
    revision: Revision
    deadline_ms: DeadlineMs | None = None
    wait: PromptWait | None = None

    @model_validator(mode="after")
    def _wait_ends(self) -> Prompt:
        if self.wait is not None and self.deadline_ms is None:
            raise refuse('wait is {"until": [STATES]} and needs deadline_ms, when the wait ends')
        return self


def _base64(value: str) -> str:
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise refuse("is not valid base64") from None
    if not data:
        raise refuse("must hold at least one byte")
    return value


BASE64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
"""Base64 of one byte or more, padded: what ``b64decode(validate=True)`` takes and finds bytes in."""


class Input(Strict):
    """``POST /sessions/{key}/input``: raw bytes for a pane, written as they are."""

    data: Annotated[
        str,
        Field(
            description=f"the bytes to write, base64-encoded: at most {DATA_LIMIT} (more is a 413)",
            json_schema_extra={"pattern": BASE64, "x-max-decoded-bytes": DATA_LIMIT},
        ),
        AfterValidator(_base64),
    ]


def folder(start: str, what: str) -> Any:
    """A folder's path: one line of up to 4096 characters that begins as ``start`` says."""
    pattern = f"^{start}[^{REFUSED_CLASS}]*$"
    described = f"{what} of 1 to 4096 characters, one line"
    field = Field(min_length=1, max_length=4096, pattern=pattern, description=described)
    return Annotated[str, field, AfterValidator(writable)]


class Launch(Strict):
    """``POST /launch``: an agent (by its manifest's name) or a command line, in a folder."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "oneOf": [
                {"required": [one], "properties": {one: {"type": "string"}}} for one in ("agent", "command")
            ]
        },
    )

    agent: text(64, least=1, one_line=True, what="an agent's name") | None = None
    command: text(1024, least=1, one_line=True, what="a command line") | None = None
    cwd: folder("(?:/|~(?:/|$))", "an absolute path, ~ or ~/… (the daemon's home)")
    name: text(WINDOW_NAME, least=1, one_line=True, what="a window name") | None = None
    worktree: bool = Field(
        default=False, description="run it in a new git worktree and branch of its own, as spawn --worktree"
    )
    branch: text(255, least=1, one_line=True, what="a branch name") | None = Field(
        default=None, description="the worktree's new branch (default: the window's name); only with worktree"
    )

    @model_validator(mode="after")
    def _one_thing(self) -> Launch:
        if (self.agent is None) == (self.command is None):
            raise refuse("give exactly one of agent (an agent's name) or command (a command line)")
        if self.branch is not None and not self.worktree:
            raise refuse("branch goes with worktree")
        return self


HTTP_URL = r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\[\]:\x00-\x20\x7f]+(?::[0-9]*)?(?:[/?#][^\x00-\x20\x7f]*)?$"
"""An http(s) URL with a host (and no user, password or bracketed address): a push service's."""

Endpoint = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2048,
        pattern=HTTP_URL,
        description="an http(s) URL with a host: the push service's, for this device",
    ),
    AfterValidator(writable),
]
POINT_BYTES = 65
"""An uncompressed P-256 point: 0x04, then x and y."""
AUTH_BYTES = 16


def _key(size: int, what: str) -> Any:
    def decoded(value: str) -> str:
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        except (binascii.Error, ValueError):
            raise refuse("is not base64url") from None
        if len(raw) != size or (size == POINT_BYTES and raw[0] != 4):
            raise refuse(f"is not {what}")
        return value

    return Annotated[
        str, Field(min_length=1, max_length=256, description=f"{what}, base64url"), AfterValidator(decoded)
    ]


class PushKeys(Strict):
    """The subscription's keys, as the browser gives them."""

    p256dh: _key(POINT_BYTES, "a P-256 point")
    auth: _key(AUTH_BYTES, "a 16-byte secret")


Session = text(256, least=1, one_line=True, what="a session key")


class Subscribe(Strict):
    """``POST /push/subscribe``: what ``PushSubscription.toJSON()`` gives, and the session the
    device shows now (its notifications are held back while it does)."""

    endpoint: Endpoint
    keys: PushKeys
    viewing: Session | None = None


class Unsubscribe(Strict):
    """``DELETE /push/subscribe``: the device that no longer wants pushes."""

    endpoint: Endpoint


class Viewing(Strict):
    """``POST /push/viewing``: the session a device shows now, or null for none."""

    endpoint: Endpoint
    session: Session | None


ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,127}"
HEADLESS_WAITS = ("idle", "needs_attention", "ended")
HEADLESS_LONGEST_S = 86_400
"""A headless prompt's wait lasts at most a day: a long turn is a normal turn."""


HOLDER_ENV = ("XDG_RUNTIME_DIR", paths.HOLDER_MARK_ENV)
"""What a headless session's env may not set: where its holder's socket lives (the daemon would
never find it), and the mark by which a dead holder's adapter is known."""


class Start(Strict):
    """``POST /sessions``: a headless session of ``harness`` in ``cwd``, over its ACP adapter."""

    model_config = ConfigDict(extra="forbid")

    harness: Annotated[
        text(64, least=1, one_line=True, what="a harness's name"),
        Field(json_schema_extra={CONFIGURED: HARNESSES}),
    ]
    cwd: Annotated[
        folder("/", "an absolute path"),
        Field(json_schema_extra={"x-existing-folder": True}),
    ]
    name: text(200, least=1, one_line=True, what="non-empty text") | None = None
    policy: words(("auto", "attention")) | None = None
    model: text(200, least=1, one_line=True, what="a model's name") | None = None
    effort: text(64, least=1, one_line=True, what="an effort level") | None = None
    env: dict[str, text(32_768)] = Field(
        default={},
        max_length=64,
        description="up to 64 environment variables (NAME: value) for the adapter",
        json_schema_extra={"propertyNames": {"pattern": f"^{ENV_NAME}$", "not": {"enum": list(HOLDER_ENV)}}},
    )

    @model_validator(mode="after")
    def _env_names(self) -> Start:
        for name in self.env:
            if not re.fullmatch(ENV_NAME, name):
                raise refuse(f"env names are letters, digits and _, not starting with a digit: {name!r}")
            if name in HOLDER_ENV:
                raise refuse(f"env may not set {name}: the session's holder keeps its socket and marks by it")
        return self


class Spawn(Start):
    """``POST /sessions/{key}/spawn``: a child of a headless session; the parent's policy unless
    ``policy`` names one."""


class HeadlessPrompt(Strict):
    """``POST /sessions/{key}/prompt`` for a headless session: the text, and what to wait for."""

    model_config = ConfigDict(extra="forbid")

    text: Annotated[
        str, Field(min_length=1, description="the prompt: nonempty text"), AfterValidator(writable)
    ]
    wait: words(HEADLESS_WAITS) | None = None
    timeout_s: integer(1, HEADLESS_LONGEST_S, f"seconds from 1 to {HEADLESS_LONGEST_S}") = 600


CLOSE_LONGEST_S = 300
"""Seconds a close may wait for an agent to leave its pane."""


class Close(Strict):
    """``POST /sessions/{key}/close``: whether to close a pane whose agent is busy, blocked or
    unknown without asking it, and how long its agent has to leave."""

    model_config = ConfigDict(extra="forbid")

    force: bool = False
    timeout_s: integer(0, CLOSE_LONGEST_S, f"whole seconds from 0 to {CLOSE_LONGEST_S}") = DEFAULT_TIMEOUT


class Handoff(Strict):
    """``POST /sessions/{key}/handoff``: the member of this node's swarm to hand the session to."""

    model_config = ConfigDict(extra="forbid")

    to: text(64, least=1, one_line=True, what="a node's id or name")


class Fork(Strict):
    """``POST /sessions/{key}/fork``: a new session from this one's conversation, named ``name``,
    in a new git worktree and branch when ``worktree`` says so."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "if": {"properties": {"branch": {"type": "string"}}, "required": ["branch"]},
            "then": {"properties": {"worktree": {"const": True}}, "required": ["worktree"]},
        },
    )

    name: text(WINDOW_NAME, least=1, one_line=True, what="the fork's name (a window's and a session's)")
    worktree: bool = Field(
        default=False,
        description="run it in a new git worktree and branch of the source's repository, as spawn --worktree",
    )
    branch: text(255, least=1, one_line=True, what="a branch name") | None = Field(
        default=None, description="the worktree's new branch (default: the fork's name); only with worktree"
    )

    @model_validator(mode="after")
    def _branch(self) -> Fork:
        if self.branch is not None and not self.worktree:
            raise refuse("branch goes with worktree")
        return self


class NoBody(Strict):
    """An action that takes nothing but the session: its body is ``{}``."""

    model_config = ConfigDict(extra="forbid")


class Permission(Strict):
    """``POST /sessions/{key}/permission``: answer the pending request, pinning what was read."""

    model_config = ConfigDict(extra="forbid")

    option: words(pending.ANSWERS)
    reason: text(1000, least=1) | None = Field(
        default=None, description="why, for a reject: sent to the agent beside the answer"
    )
    request_id: text(64, least=1, one_line=True) | None = Field(
        default=None, description="the pending request's id as read: refused when another is open"
    )
    status_epoch: Epoch | None = None
    occupant_id: Occupant | None = None


WAITING = tuple(sorted(w for w in CLAIMABLE_WORDS if records.to_activity(w) == records.NEEDS_ATTENTION))
"""The activity words a gate's claim may say: those that mean the session waits on a person."""
HELD = {
    "required": ["activity", "fields"],
    "properties": {
        "source": {"const": HOOK},
        "activity": {"enum": list(WAITING)},
        "fields": {"required": ["pending"], "properties": {"pending": {"type": "object"}}},
    },
    "description": "a hook's claim that the session waits on a person, with its pending request",
}


def _held_schema(schema: dict[str, Any]) -> None:
    schema.setdefault("allOf", []).extend((*WHOLE, HELD))


class GateClaim(ClaimBody):
    """A gate's claim: the hook's word that the session waits on a person, and what it waits on."""

    model_config = ConfigDict(json_schema_extra=_held_schema)

    @model_validator(mode="after")
    def _held(self) -> GateClaim:
        if self.source != HOOK or self.activity not in WAITING or self.fields.pending is None:
            raise refuse("must be a hook's claim that the session waits on a person, with its request")
        return self


class Gate(Strict):
    """``POST /gate``: a harness's permission request, held open for an answer from anywhere.

    ``claim`` is the hook's claim of the wait (as ``POST /claim`` takes it, and no other);
    ``always`` says whether the harness offered a way to always allow this request."""

    model_config = ConfigDict(extra="forbid")

    always: bool = False
    claim: GateClaim = Field(description="the hook's claim that the session waits on a person")


def _destination(url: str) -> str:
    try:
        destinations.parse(url)
    except UsageError as error:
        raise refuse(error.message.removeprefix("url ")) from None
    return url


def _not_too_long(value: object) -> object:
    """A URL over the limit gets the URL rule's words for it (too long, and the limit) before
    the field's own length check, which would say only what a URL must be."""
    if isinstance(value, str) and len(value) > destinations.LONGEST:
        return _destination(value)
    return value


def _change_kinds(events: list[str]) -> list[str]:
    for index, name in enumerate(events):
        if name not in SWARM_EVENTS:
            raise refuse(
                f"holds {name!r}, which is not a change kind; the kinds are {', '.join(SWARM_EVENTS)}"
            )
        if name in events[:index]:
            raise refuse(f"names {name!r} twice")
    return events


class Hook(Strict):
    """``POST /hooks``: where to POST each change, which kinds (none or empty: every kind), and
    the bearer token to send with each."""

    model_config = ConfigDict(extra="forbid")

    url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=destinations.LONGEST,
            description=f"an http(s) URL on {destinations.WHERE}, with no user or password; a name "
            "must resolve, when the webhook is registered, only to addresses there",
            json_schema_extra={"pattern": urlshape.PATTERN, "x-resolved-host": True},
        ),
        BeforeValidator(_not_too_long),
        AfterValidator(writable),
        AfterValidator(_destination),
    ]
    events: (
        Annotated[
            list[
                Annotated[
                    text(64, least=1, one_line=True, what="a change kind"),
                    Field(json_schema_extra={"enum": list(SWARM_EVENTS)}),
                ]
            ],
            Field(
                max_length=len(SWARM_EVENTS),
                description=f"distinct change kinds from {', '.join(SWARM_EVENTS)}",
                json_schema_extra={"uniqueItems": True},
            ),
            AfterValidator(_change_kinds),
        ]
        | None
    ) = None
    token: Annotated[
        str,
        Field(
            min_length=registrations.TOKEN_SHORTEST,
            max_length=registrations.TOKEN_LONGEST,
            pattern=f"^{registrations.TOKEN.pattern}$",
            description=f"a bearer token of {registrations.TOKEN_SHORTEST} to {registrations.TOKEN_LONGEST} "
            "characters: letters, digits and -._~+/, then any = padding",
        ),
    ]


class Invite(Strict):
    """``POST /swarm/invite``: how long the token lasts (the first invite makes the swarm)."""

    ttl_minutes: integer(1, 7 * 24 * 60, "minutes the token lasts") = 60


class Join(Strict):
    """``POST /swarm/join``: the admitter's swarm listener and the token it printed."""

    address: text(300, least=1, one_line=True, what="host:port of the admitter's swarm listener")
    token: text(2048, least=1, one_line=True, what="the invite token")


class Revoke(Strict):
    """``POST /swarm/revoke``: the member to take out of the swarm; with ``admitted``, every node
    it admitted too (and every node those admitted)."""

    node_id: text(64, least=1, one_line=True, what="a member's node id")
    admitted: bool = False


Scope = words(("session", "folder", "day"))
BudgetTarget = text(4096, least=1, one_line=True, what="a session (key, pid or name) or an absolute folder")


TARGETS = {
    "anyOf": [
        {"properties": {"scope": {"const": "day"}, "target": {"type": "null"}}},
        {
            "required": ["target"],
            "properties": {"scope": {"const": "folder"}, "target": {"type": "string", "pattern": "^/"}},
        },
        {"required": ["target"], "properties": {"scope": {"const": "session"}, "target": {"type": "string"}}},
    ],
    "description": "a day budget has no target, a folder budget's is an absolute folder",
}
"""What :func:`roost.services.ledger.budgets.check_target` holds a budget's target to, as the JSON
Schema the document states (a schema-valid body is one the route takes)."""


def _targets(schema: dict[str, Any]) -> None:
    schema.setdefault("allOf", []).append(TARGETS)


class BudgetWhich(Strict):
    """``POST /budgets/lift`` and ``POST /budgets/clear``: a budget, by its scope and what it is
    about (a session, a folder; nothing for the day)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_targets)

    scope: Scope
    target: BudgetTarget | None = Field(
        default=None, description="the session (key, pid or name) or the absolute folder; none for day"
    )


class BudgetSet(BudgetWhich):
    """``POST /budgets``: set (or replace) a budget's limit, in the budgets' currency, and the
    fraction of it at which a person is told (the config's ``[budget] warn`` if left out)."""

    limit: Annotated[
        float, Field(gt=0, le=1e9, description="a limit greater than 0, in the budgets' currency")
    ]
    warn: (
        Annotated[
            float, Field(gt=0, le=1, description="a fraction of the limit, greater than 0 and at most 1")
        ]
        | None
    ) = None


BODIES = (
    Register,
    Name,
    Wait,
    Prompt,
    Input,
    Launch,
    Subscribe,
    Unsubscribe,
    Viewing,
    Start,
    Spawn,
    HeadlessPrompt,
    Handoff,
    Fork,
    Close,
    Permission,
    Gate,
    NoBody,
    Hook,
    Invite,
    Join,
    Revoke,
    BudgetSet,
    BudgetWhich,
)
"""Every body model, for the OpenAPI document."""
