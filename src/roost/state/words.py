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
"""An activity in the web app's words, which ``roost.agentrow.STATES`` lists (the base layer
cannot import this one); ``unknown`` has none: such a session has no row yet."""

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
