"""The state words roost records, their badges, and the pane options that hold them."""

from __future__ import annotations

WORKING, BLOCKED, DONE, IDLE, ERROR = "working", "blocked", "done", "idle", "error"
STATES = (WORKING, BLOCKED, DONE, IDLE, ERROR)
BUSY = (WORKING, BLOCKED)
BADGES = {WORKING: "⏳", BLOCKED: "🛑", DONE: "✅", ERROR: "💥", IDLE: "💤"}

# One state, three vocabularies (docs/contracts.md), defined here: the badge words above,
# rosterd's activity, and which of the web app's (and ``roost api``'s) words each activity is.
ACTIVE, NEEDS_ATTENTION, UNKNOWN = "active", "needs_attention", "unknown"
ACTIVITY_OF_STATE: dict[str, str] = {
    WORKING: ACTIVE,
    BLOCKED: NEEDS_ATTENTION,
    DONE: IDLE,
    IDLE: IDLE,
    ERROR: IDLE,
}
WEB_OF_ACTIVITY: dict[str, str] = {ACTIVE: WORKING, NEEDS_ATTENTION: BLOCKED, IDLE: IDLE}
"""An activity in the web app's words, which ``roost.base.statusrow.STATES`` lists (the base layer
cannot import this one); ``unknown`` has none: such a session has no row yet."""
STATE_OF_ACTIVITY: dict[str, str] = {ACTIVE: WORKING, NEEDS_ATTENTION: BLOCKED, IDLE: IDLE}
"""The state a claim in rosterd's activity words says: ``idle`` stays idle (such a source
cannot tell a turn just done from an agent at rest), ``unknown`` says none."""

NEEDS_INPUT = "needs input"
HUMAN: dict[str, str] = {WORKING: WORKING, BLOCKED: NEEDS_INPUT, DONE: DONE, IDLE: IDLE, ERROR: ERROR}
"""What a person reads for each state, the same words in every face: ``roost status``,
``rosterd list``, notifications, the web app. The machine words of each contract (every
``--json`` and API field, the exit codes) stay the contract's own."""


BEING: dict[str, str] = {
    WORKING: "is working",
    BLOCKED: "needs input",
    DONE: "is done",
    IDLE: "is idle",
    ERROR: "is in error state",
}
"""A state said of a pane in a sentence, in the words of :data:`HUMAN`: ``'api' needs input``."""


def state_of(word: str | None) -> str | None:
    """The state a claim's activity word says, in either vocabulary; None for no state."""
    if word in STATES:
        return word
    return STATE_OF_ACTIVITY.get(word or "")


def human(state: str | None) -> str | None:
    """``state`` (a pane badge's word) as a person reads it; an unknown word as it is."""
    return HUMAN.get(state, state) if state else None


# Pane options, one fact each. Names are part of the contract: other tmux clients read them.
STATE = "@roost-state"
SINCE = "@roost-since"
REASON = "@roost-reason"
TURN = "@roost-turn"  # the last turn that began in this pane
TURN_DONE = "@roost-turn-done"  # the last turn that ended
REPLY_TURN = "@roost-reply-turn"  # the kept turn whose reply is current; empty once cleared
REPLY = "@roost-reply"  # the reply itself, when replies are not kept in files
SESSION_ID = "@roost-session-id"
CWD = "@roost-cwd"
HARNESS = "@roost-harness"
TRANSCRIPT = "@roost-transcript-path"
DIALOG = "@roost-transcript"  # "<epoch> <transcript path>": when a dialog opened, for declines
JOB = "@roost-job"  # process group holding the pane's terminal while the agent is busy
NAME = "@roost-name"
WORKTREE = "@roost-worktree"  # the git worktree `roost spawn --worktree` made for the pane's agent
BRANCH = "@roost-branch"  # and its branch
VIEW = "@roost-view"  # "1" on a pane `roost view` opened: the only panes a later view replaces
SPEND = "@roost-spend"  # what the pane's session has used and cost, as rosterd counted it (JSON)
BUDGET = "@roost-budget"  # the budget the session is over or near, as rosterd holds it (JSON)

PANE_OPTIONS = (
    STATE,
    SINCE,
    REASON,
    TURN,
    TURN_DONE,
    REPLY_TURN,
    SESSION_ID,
    CWD,
    HARNESS,
    TRANSCRIPT,
    DIALOG,
    JOB,
    NAME,
)
IDENTITY = (SESSION_ID, CWD, HARNESS, TRANSCRIPT)


def normalise(word: str) -> str:
    """An unknown state word is recorded as idle, as the contract says."""
    return word if word in STATES else IDLE


def to_int(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None
