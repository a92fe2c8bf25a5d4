"""Every failure a caller can act on, with the exit code and the HTTP status it maps to.

This is the one table: each failure is a class with ``exit_code`` (what ``roost`` and
``rosterd`` exit with) and ``status`` (what the API answers, as ``{"error": message, …}``).
Any layer raises these; the faces translate them in one place each (``cli.roost.main``,
``cli.rosterd.main``, ``api.errors.HANDLERS``), so no call site picks a number.
``docs/contracts.md`` holds the same table and ``tests/contracts`` checks that they agree.

A class is a failure, not a face: the API raises :class:`TargetGone` where a CLI verb does,
and ``roost.faces.api.errors`` only gives some of them their HTTP names (``NotFound``…).
``RoostError`` itself is never raised: a failure without its own class would answer 500.
This module imports nothing, because the hook and every verb load it.
"""

from __future__ import annotations


class RoostError(Exception):
    """A failure with a message meant for a person; ``extra`` adds fields beside ``error`` in
    the API's answer (``candidates``, ``limit``…)."""

    exit_code = 1
    status = 500

    def __init__(self, message: str, **extra: object) -> None:
        super().__init__(message)
        self.extra = extra

    @property
    def message(self) -> str:
        return str(self.args[0])


class UsageError(RoostError):
    """A malformed call: a caller bug. Printed as is when it begins ``usage: …``."""

    exit_code = 1
    status = 400


class InvalidValue(RoostError):
    """A value a verb's rules refuse (an ``identify`` identity, a ``send --from`` label):
    exit 2, as those verbs have always done, apart from a malformed call's 1."""

    exit_code = 2
    status = 400


class Unauthorized(RoostError):
    """No credentials, or the wrong ones (the API's loopback listener)."""

    exit_code = 1
    status = 401


class PeerRefused(Unauthorized):
    """A token, request, record or sealed key of the swarm that a node will not accept;
    ``code`` says why (``malformed``, ``forged``, ``expired``, ``used``, ``other_swarm``,
    ``unknown_node``, ``revoked``, ``bad_signature``, ``skew``, ``replayed``, ``too_many``,
    ``wrong_key``, ``unsealable``). A caller acts on every one alike (answer 401 with the code,
    drop the document, log it), so the reason is data, not a class."""

    def __init__(self, message: str, *, code: str | None = None, **extra: object) -> None:
        super().__init__(message, **({"code": code} if code else {}), **extra)
        self.code = code


class Forbidden(RoostError):
    """A caller the kernel names, who is not the one that may do this: an HTTP hook whose
    poster is not the agent of the pane it names."""

    exit_code = 1
    status = 403


class TargetGone(RoostError):
    """What the call names does not exist, or its pane is dead: re-resolve it."""

    exit_code = 2
    status = 404


class NotRecorded(RoostError):
    """What was asked for was never kept: a turn's reply, or replies at all (recording off)."""

    exit_code = 1
    status = 404


class Ambiguous(RoostError):
    """A name matches more than one pane or session; ``candidates`` may list them."""

    exit_code = 2
    status = 409


class Conflict(RoostError):
    """A well-formed call that the present state refuses (a busy pane ``close`` will not
    interrupt, a session that ended, a stale claim, a daemon already running)."""

    exit_code = 1
    status = 409


class Blocked(RoostError):
    """The target shows a permission dialog meant for a person: wait, then retry."""

    exit_code = 3
    status = 409


class OverBudget(RoostError):
    """A budget's limit is reached (a session's, its folder's, the day's): no prompt is sent to
    a session it holds until a person lifts it. ``code`` is ``over_budget`` and ``budget`` the
    record's budget (its scope, limit and the reason a person reads). Nothing was sent."""

    exit_code = 1
    status = 409


class Expired(RoostError):
    """What the caller holds names nothing any more (an events cursor rotated away)."""

    exit_code = 3
    status = 410


class TooLarge(RoostError):
    """The text or body is larger than its limit (``limit`` says how large it may be)."""

    exit_code = 1
    status = 413


class TooMany(RoostError):
    """Too many streams or waits are open already; close one first."""

    exit_code = 1
    status = 429


class AgentFailed(RoostError):
    """The agent reports an error state (``wait-done`` saw it end its turn in error)."""

    exit_code = 1
    status = 502


class AdapterFailed(RoostError):
    """A headless session's holder or ACP adapter would not start, or failed a step (``code``
    ``holder_failed`` or ``adapter_failed``); the message quotes what the adapter said last.
    Not the agent's turn ending in error (:class:`AgentFailed`): look at the adapter, its
    install, or the harness it runs."""

    exit_code = 1
    status = 502


class SetupError(RoostError):
    """Something on this machine roost reads or needs is not usable as it is (a config,
    manifest or settings file, a socket path, ``HOME``, ``ssh``, a service manager): fix the
    thing named."""

    exit_code = 1
    status = 503


class NotDelivered(RoostError):
    """The text did not reach the pane; nothing was submitted, so a retry is safe."""

    exit_code = 1
    status = 503


class TmuxError(RoostError):
    """tmux refused a command; the message is tmux's own stderr.

    Raised by the terminal layer (``roost.pane.tmux.server`` re-exports it). Exit 1, as a verb has
    always failed on it (nothing was done; look, or retry); 503 in the API, because the
    request was fine and the daemon's tmux failed it.
    """

    exit_code = 1
    status = 503


class Unavailable(RoostError):
    """What roost relies on does not answer: the daemon, or its tmux server."""

    exit_code = 2
    status = 503


class NoServer(Unavailable):
    """No roost tmux server answers on this socket."""


class PeerUnreachable(RoostError):
    """A node this call needs (an admitter, a session's owner) did not answer: it is off the
    tailnet, its listener is down, or it is not the node it should be at the handshake. Nothing
    is queued or retried. Raised with ``code="peer_unreachable"`` for a caller that branches."""

    exit_code = 3
    status = 502


class Relayed(RoostError):
    """Another node, the owner of the session, refused the act this node forwarded: its status,
    message and fields (``code``…) are the owner's, passed on unchanged. Exit 1 (a CLI reads
    the owner's status itself, through the API); the status is the owner's, 502 when unknown."""

    exit_code = 1
    status = 502

    def __init__(self, message: str, *, status: int = 502, **extra: object) -> None:
        super().__init__(message, **extra)
        self.status = status


class TimedOut(RoostError):
    """The thing waited for did not happen within the bound (a wait, an agent's exit)."""

    exit_code = 1
    status = 504


class DeliveredNoTurn(RoostError):
    """The text may have reached the agent but no turn is proven inside the bound: never
    resend it. 504 in the API: the pane took the text, the agent did not answer in time."""

    exit_code = 4
    status = 504


FAILURES: tuple[type[RoostError], ...] = (
    UsageError,
    InvalidValue,
    Unauthorized,
    PeerRefused,
    Forbidden,
    TargetGone,
    NotRecorded,
    Ambiguous,
    Conflict,
    Blocked,
    OverBudget,
    Expired,
    TooLarge,
    TooMany,
    AgentFailed,
    AdapterFailed,
    SetupError,
    NotDelivered,
    TmuxError,
    Unavailable,
    NoServer,
    PeerUnreachable,
    Relayed,
    TimedOut,
    DeliveredNoTurn,
)
"""The table, in the order ``docs/contracts.md`` lists it."""


PEER_UNREACHABLE = "peer_unreachable"
"""The code a caller most often branches on: the session's owner, another node, did not answer."""

OVER_BUDGET = "over_budget"
"""A budget holds the session: raised by the ledger's judge and by ``roost send`` reading a pane."""

CODES: dict[str, type[RoostError]] = {
    "adapter_failed": AdapterFailed,
    "adapter_missing": Conflict,
    "adapter_version_changed": Conflict,
    "allow_always_off": Conflict,
    "answer_in_terminal": Conflict,
    "bad_argument": UsageError,
    "bad_cwd": UsageError,
    "bad_signature": PeerRefused,
    "busy": Conflict,
    "cannot_fork": Conflict,
    "cannot_resume": Conflict,
    "expired": PeerRefused,
    "extension_missing": Conflict,
    "forged": PeerRefused,
    "handing_off": Conflict,
    "holder_failed": AdapterFailed,
    "holder_slow": Conflict,
    "lift_off": Conflict,
    "malformed": PeerRefused,
    "name_taken": Conflict,
    "needs_attention": Conflict,
    "no_certificate": PeerRefused,
    "no_conversation": Conflict,
    "no_cwd": Conflict,
    "no_session_id": Conflict,
    "no_such_node": TargetGone,
    "no_such_option": Conflict,
    "no_such_verb": TargetGone,
    "not_a_transcript": UsageError,
    "not_admitter": PeerRefused,
    "not_closable": Conflict,
    "not_headless": TargetGone,
    "not_issued": PeerRefused,
    "not_live": Conflict,
    "not_owner": Conflict,
    "not_portable": Conflict,
    "not_running": Conflict,
    "nothing_pending": Conflict,
    "occupant_changed": Conflict,
    "other_kind": Conflict,
    "other_swarm": PeerRefused,
    OVER_BUDGET: OverBudget,
    "owned_elsewhere": Conflict,
    PEER_UNREACHABLE: PeerUnreachable,
    "policy_too_loose": Conflict,
    "refused": PeerRefused,
    "replayed": PeerRefused,
    "request_changed": Conflict,
    "resume_limit": Conflict,
    "revoked": PeerRefused,
    "same_node": UsageError,
    "session_ended": Conflict,
    "session_here": Conflict,
    "skew": PeerRefused,
    "starting": Unavailable,
    "status_epoch_changed": Conflict,
    "too_many": PeerRefused,
    "transcript_differs": Conflict,
    "transcript_too_large": TooLarge,
    "unknown_harness": UsageError,
    "unknown_node": PeerRefused,
    "unsealable": PeerRefused,
    "used": PeerRefused,
    "wrong_key": PeerRefused,
    "wrong_node": PeerRefused,
    "wrong_recipient": PeerRefused,
}
"""Every refusal ``code`` roost answers with, and the failure that carries it: the one home of
a code (``docs/contracts.md``, "Refusal codes", says what each means). A caller branches on
the code; ``tests/contracts/test_failures.py`` finds every ``code=`` in the tree here."""
