"""What the API answers, as models: only ``/openapi.json`` reads them (loaded on its first
request), and the fuzz test holds real answers to them, so the document cannot promise a field
a route does not send.

The routes build their answers as plain dicts (the hot ones are built once per change for many
readers); these models describe those dicts. The record's model is derived from
:class:`roost.truth.roster.records.Record` itself, so a field added there appears here.
"""

from __future__ import annotations

import typing
from dataclasses import fields
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from roost.actions import close, fork, prompt, terminals, windows
from roost.base import statusrow
from roost.faces.api import rows, schemas, waits
from roost.pane.state import words
from roost.remote.swarm import feed, union
from roost.remote.swarm.peers import PEER_STATES
from roost.services.ledger import journal
from roost.truth.roster import pending, records
from roost.truth.roster.changes import EVENTS, SWARM_EVENTS

DateTime = typing.Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class Reply(BaseModel):
    """An answer's shape; a reader ignores what it does not know, so more keys may come."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class Error(Reply):
    """Every failure: ``error`` for a person, ``field`` for the body field a 400 is about, and
    what the failure adds (``candidates`` of an ambiguous name, a 413's ``limit``…)."""

    error: str
    field: str | None = None


def derived(name: str, shape: type, doc: str, **narrowed: Any) -> type[Reply]:
    """The answer model of a value an action returns (a dataclass): one field for each of its
    fields, typed as it is typed there, so a field added to the value appears in
    ``/openapi.json`` with no second spelling; ``narrowed`` gives a field the type the document
    states more exactly (a word from a closed list, a time as text, a record as its model)."""
    hints = typing.get_type_hints(shape)
    return create_model(
        name,
        __base__=Reply,
        __doc__=doc,
        **{field.name: (narrowed.get(field.name, hints[field.name]), ...) for field in fields(shape)},
    )


Record = derived(
    "Record",
    records.Record,
    "One session (rosterd.snapshot.v1 record): every field present, null when unknown.",
    **{name: DateTime if name == "started_at" else DateTime | None for name in records.TIMESTAMPS},
    activity=Literal[records.ACTIVITIES],
    liveness=Literal[records.LIVENESS],
    state=Literal[words.STATES] | None,
)


class Snapshot(Reply):
    """The whole roster."""

    schema_: Literal[records.SCHEMA] = Field(alias="schema")
    node: str
    node_id: str
    status_epoch: int
    seq: int
    generated_at: DateTime
    records: list[Record]  # type: ignore[valid-type]


class Change(Reply):
    """One frame of ``GET /changes``."""

    seq: int
    event: Literal[EVENTS]  # type: ignore[valid-type]
    at: DateTime
    status_epoch: int
    session_key: str | None = None
    record: Record | None = None  # type: ignore[valid-type]
    snapshot: Snapshot | None = None


class Gates(Reply):
    """Each harness that offers a permission gate: null where it is on, else the command that
    turns it on."""

    gates: dict[str, str | None]


class TerminalsChanged(Reply):
    """A ``terminals`` frame of ``GET /changes?terminals=1``: read ``GET /terminals`` again."""

    version: int


class Explain(Reply):
    """Which source set each field of one session, and what was shadowed or refused."""

    session_key: str
    fields: dict[str, Any]
    rejected: list[Any]


class Status(Reply):
    """This node: identity, status epoch, counts by activity, version, listeners."""

    node: str
    node_id: str
    status_epoch: int
    seq: int
    version: str
    counts: dict[str, int]


class ClaimResult(Reply):
    """A claim, a registration or a name the roster accepted (a refusal is a 409 Error)."""

    accepted: bool
    session_key: str | None
    reasons: list[str]
    seq: int
    record: Record | None = None  # type: ignore[valid-type]


class Row(BaseModel):
    """One pane's status row, the eleven fields ``roost api`` has always printed."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    session_id: str
    agent_id: str | None
    state: Literal[statusrow.STATES]  # type: ignore[valid-type]
    message: str | None
    status_epoch: int
    occupant_id: int
    source: Literal[rows.INTEGRATION_CLASS, rows.SCREEN_CLASS] | None  # type: ignore[valid-type]
    revision: int
    completed_revision: int
    updated_at: int = Field(description="Unix milliseconds")
    promptable: bool


class Rows(Reply):
    """Every status row, in session_id order."""

    agents: list[Row]


class WaitOutcome(Reply):
    """How a wait ended, with the row it was decided on (null once that ended)."""

    session_id: str | None = None
    outcome: Literal[waits.OUTCOMES] | None  # type: ignore[valid-type]
    row: Row | None


class PromptOutcome(Reply):
    """A prompt that was written (accepted) or may have been (ambiguous; never retried)."""

    session_id: str
    input: Literal[prompt.ACCEPTED, prompt.AMBIGUOUS, prompt.REJECTED]  # type: ignore[valid-type]
    code: str | None
    reason: str | None = Field(max_length=prompt.REASON_LIMIT)
    written_bytes: int = Field(ge=0, le=prompt.TEXT_LIMIT + 13)
    wait: WaitOutcome | None = None


class HeadlessWait(Reply):
    """What a headless prompt's wait came to."""

    until: Literal[schemas.HEADLESS_WAITS]  # type: ignore[valid-type]
    reached: bool


class HeadlessAnswer(Reply):
    """A headless session's record after the action (null once a stopped one is dropped)."""

    record: Record | None  # type: ignore[valid-type]
    input: Literal[prompt.ACCEPTED] | None = None  # type: ignore[valid-type]
    wait: HeadlessWait | None = None


class HandedOff(Reply):
    """A headless session handed to another node: its record here (ended ``handed_off``, its
    ``handed_to`` naming where it went) and the new session's record on that node."""

    record: Record  # type: ignore[valid-type]
    there: Record  # type: ignore[valid-type]


Closed = derived(
    "Closed",
    close.Closed,
    "A closed session: its record after (a headless one's ended; a pane's ends once the roster "
    "sees the pane gone), and how its pane was left (the pane, its badge as found, the agent, "
    "what was typed, whether ``force`` closed it unasked), each null for a headless session.",
    record=Record | None,  # type: ignore[valid-type]
)


Forked = derived(
    "Forked",
    fork.Forked,
    "A fork that started: which lane, the source (a pane's ``%N`` or a session's key) and the "
    "conversation id it came from; the fork's pane (a pane's fork) or record (a headless one's; "
    "null for a pane's, which the roster learns of a moment later), its name, its own session id "
    "where known yet, its folder, and the worktree and branch it was given (null without one).",
    lane=Literal["pane", "headless"],
    record=Record | None,  # type: ignore[valid-type]
)


class GateDecision(Reply):
    """What a gate tells its hook: the answer given from rosterd, or null (the hook decides
    nothing, and the harness's own dialog stays the person's to answer)."""

    decision: Literal[pending.ANSWERS] | None  # type: ignore[valid-type]
    reason: str | None = Field(default=None, max_length=1000)
    request_id: str | None


class InputResult(Reply):
    """Raw bytes written."""

    session_id: str
    written_bytes: int = Field(ge=1)


class LauncherAgent(Reply):
    """One agent the launcher offers."""

    name: str
    display: str
    binary: str
    installed: bool
    headless: bool = Field(description="whether it can also run headless (it is in the listing's headless)")


class Launcher(Reply):
    """What the launcher can start, and the folder it suggests."""

    home: str
    agents: list[LauncherAgent] = Field(
        description="every agent with a binary, those installed (found on the PATH of the person's "
        "login shell, of roost's tmux server or of rosterd, asked anew) first"
    )
    shell: str = Field(description="the person's login shell, which the launcher offers as a plain shell")
    custom: bool
    headless: list[str] = Field(
        description="the harnesses POST /sessions can start here (the runner has an ACP adapter "
        "for each), by name; may name a harness that no agent is"
    )


Launched = derived(
    "Launched",
    windows.Launched,
    "The window a launch opened: its pane, tmux session and name, the agent started in it (null "
    "for a command), its folder, and the git worktree (its folder) and branch it was given "
    "when one was asked for, else null.",
)


Terminal = derived(
    "Terminal",
    terminals.Terminal,
    "One live pane of roost's tmux server, with the session in it if there is one.",
    state=Literal[statusrow.STATES] | None,  # type: ignore[valid-type]
)


class Terminals(Reply):
    """Every live pane; ``socket`` is null when the daemon watches no tmux server."""

    socket: str | None
    terminals: list[Terminal]


class Tail(Reply):
    """A terminal's last non-blank screen lines, oldest first."""

    pane: str
    lines: list[str]


class VapidKey(Reply):
    """The key a browser subscribes with."""

    key: str


class Subscribed(Reply):
    """A device that now gets pushes."""

    endpoint: str


class Seen(Reply):
    """A session a device opened: its notifications up to ``revision`` are withdrawn."""

    session_key: str
    revision: int
    cancelled: bool


class LoginLink(Reply):
    """A one-time address that logs a browser in."""

    url: str


class Deliveries(Reply):
    """What became of a webhook's deliveries since the daemon started, and how many wait."""

    sent: int
    failed: int
    dropped: int
    queued: int


class Webhook(Reply):
    """A registered webhook, without its token. ``events`` empty: every kind of change."""

    id: str
    url: str
    events: list[Literal[SWARM_EVENTS]]  # type: ignore[valid-type]
    created_at: DateTime
    deliveries: Deliveries


class Webhooks(Reply):
    """Every registered webhook, oldest first."""

    hooks: list[Webhook]


class JournalEntry(Reply):
    """One line of the journal: the session and the kind's own fields, never agent text."""

    at: DateTime
    kind: Literal[journal.KINDS]  # type: ignore[valid-type]
    session_key: str
    name: str | None
    harness: str | None
    lane: str | None
    session_id: str | None
    reason: str | None = Field(default=None, description="start, end, suspend and resume lines")
    started_at: DateTime | None = Field(default=None, description="start lines")
    answer: Literal[journal.ANSWERS] | None = None  # type: ignore[valid-type]
    by: str | None = Field(default=None, description="answer lines: who answered")
    via: Literal[journal.VIA] | None = None  # type: ignore[valid-type]


class Journal(Reply):
    """The journal since a moment (``since``: null, everything kept), oldest first."""

    since: DateTime | None
    entries: list[JournalEntry]


class Tokens(Reply):
    """Token counts, each summed over the turns that reported it."""

    input: int
    output: int
    thought: int
    cached_read: int
    cached_write: int
    total: int


class UsageSum(Reply):
    """Turns counted, the sessions they were in, their tokens, their known cost by currency,
    and how many turns have no known cost (``unpriced``: a model the price table lacks)."""

    turns: int
    sessions: int
    tokens: Tokens
    cost: dict[str, float]
    unpriced: int


class UsageRow(UsageSum):
    """The sums for one group: one harness and model (``unknown`` where no one said), or with
    ``by`` one session (``session_key``, its ``name`` and ``harness``), folder, UTC day or node."""

    harness: str | None = None
    model: str | None = None
    session_key: str | None = None
    name: str | None = None
    folder: str | None = None
    day: str | None = None
    node: str | None = None


class UsageSummary(Reply):
    """Token usage and cost since a moment (``since``: null, everything kept), grouped ``by``
    what the query named (absent: harness and model)."""

    since: DateTime | None
    by: Literal["session", "folder", "node", "day"] | None = None
    rows: list[UsageRow]
    total: UsageSum


class Budget(Reply):
    """One budget and where its scope stands: its limit and warning fraction in ``currency``,
    what it is about, where it was set, what its scope spent (every node's, for a folder or the
    day), and its state (null below the warning level)."""

    scope: Literal["session", "folder", "day"]
    target: str | None
    limit: float
    warn: float
    currency: str
    origin: Literal["config", "api"]
    session_key: str | None = None
    period: str
    day: str | None
    spent: float
    state: Literal["warning", "exceeded", "lifted"] | None
    reason: str | None


class Lifted(Reply):
    period: str
    at: DateTime


class PeerHeard(Reply):
    node_id: str
    day: str
    heard_at: DateTime


class Budgets(Reply):
    """This node's budgets, in one currency, on the UTC ``day``: each with its spend and state,
    the periods a person lifted, and when each peer's spend was last heard."""

    currency: str
    warn: float
    day: str
    budgets: list[Budget]
    lifted: list[Lifted]
    peers: list[PeerHeard]


class LiftedNow(Reply):
    scope: Literal["session", "folder", "day"]
    target: str | None
    period: str
    lifted_at: DateTime


class BudgetsLifted(Budgets):
    """What a lift lifted (``lift``), and every budget after it."""

    lift: LiftedNow


class SwarmNode(Reply):
    """One member as this node knows it, with the last word from it."""

    node_id: str
    name: str
    address: str
    self: bool
    revoked: bool
    left: bool
    revoked_by: str | None
    admitted_by: str | None
    admitted_by_revoked: bool
    signer: str
    signed_at_ms: int
    public_key: str
    reachable: bool | None
    answered_at_ms: int | None
    error: str | None
    link_error: str | None


class SwarmRevoked(Reply):
    """Who revoked this node from its swarm, and when (Unix milliseconds)."""

    by: str
    at_ms: int


class SwarmConnections(Reply):
    """The swarm listener's connections: how many are open (``members``: presented a member's
    certificate), its limits, and how many were refused or closed, by why."""

    open: int
    members: int
    limits: dict[str, float]
    refused: dict[str, int]


class SwarmNodes(Reply):
    """This node, its swarm (null: none) and its members; ``listen_off`` says why no listener
    runs; ``revoked`` is set once another member revoked this node."""

    node_id: str
    name: str
    swarm_id: str | None
    revoked: SwarmRevoked | None
    listen: str | None
    listen_off: str | None
    discovery: Literal["tailscale", "static"]
    rounds: int
    refused: dict[str, int]
    records_dropped: dict[str, int]
    stream_refused: dict[str, int]
    connections: SwarmConnections | None
    nodes: list[SwarmNode]


SwarmRecord = create_model(
    "SwarmRecord",
    __base__=Record,
    __doc__="One session in the union roster: its record, and how its node stands.",
    peer_state=(Literal[PEER_STATES], ...),
    peer_age_ms=(int, ...),
)


class SwarmNodeState(Reply):
    """One node in the union roster: this node (``local``) or a peer as last heard."""

    node: str
    node_id: str
    peer_state: Literal[PEER_STATES]  # type: ignore[valid-type]
    peer_age_ms: int
    sessions: int
    dropped: int


class SwarmSnapshot(Reply):
    """The union roster: this node's records and every peer's, stamped with the swarm feed's
    epoch and head."""

    schema_: Literal[union.SCHEMA] = Field(alias="schema")
    node: str
    node_id: str
    status_epoch: int
    seq: int
    generated_at: DateTime
    nodes: list[SwarmNodeState]
    records: list[SwarmRecord]  # type: ignore[valid-type]


class SwarmChange(Reply):
    """One frame of ``GET /swarm/changes``: a session's change, a node's (``node``, with its
    standing; ``node_left``, with ``reason``), or the whole union (``snapshot``)."""

    seq: int
    event: Literal[feed.EVENTS]  # type: ignore[valid-type]
    at: DateTime
    status_epoch: int
    node: str
    node_id: str
    session_key: str | None = None
    record: SwarmRecord | None = None  # type: ignore[valid-type]
    peer_state: Literal[PEER_STATES] | None = None  # type: ignore[valid-type]
    peer_age_ms: int | None = None
    sessions: int | None = None
    dropped: int | None = None
    reason: Literal[feed.REASONS] | None = None  # type: ignore[valid-type]
    snapshot: SwarmSnapshot | None = None


class SwarmLedgerNode(Reply):
    """One node's part in a union of ledgers: whether its ledger is in it, and why not."""

    node: str
    node_id: str
    peer_state: Literal[PEER_STATES]  # type: ignore[valid-type]
    answered: bool
    error: str | None = Field(description="why its ledger is missing (its link is down, it did not answer)")
    dropped: int = Field(description="lines it sent that are not what roost writes, left out")


class SwarmJournalEntry(JournalEntry):
    """One journal line of one node."""

    node: str
    node_id: str


class SwarmJournal(Reply):
    """Every node's journal since a moment, oldest first."""

    since: DateTime | None
    nodes: list[SwarmLedgerNode]
    entries: list[SwarmJournalEntry]


class SwarmUsageRow(UsageRow):
    """One node's sums for one harness and model."""

    node: str
    node_id: str


class SwarmUsageNode(SwarmLedgerNode):
    """One node's part in the union of usage ledgers, with its own total (null: not heard)."""

    total: UsageSum | None


class SwarmUsage(Reply):
    """Every node's token usage and cost since a moment, and their sum over the nodes heard."""

    since: DateTime | None
    nodes: list[SwarmUsageNode]
    rows: list[SwarmUsageRow]
    total: UsageSum


class Invited(Reply):
    """A single-use invite token, when it expires, and the address the joiner gives
    ``rosterd join`` (the admitter's swarm listener, which the token names too)."""

    token: str
    swarm_id: str
    expires_at: int
    created: bool
    address: str
