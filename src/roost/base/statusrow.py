"""The ``roost api`` status row: its eleven fields and its three state words.

Shared by the daemon that builds the row and the CLI that prints it; it lives here, with no
imports, because the CLI must not pull in the server stack to learn a column list.
"""

FIELDS = (
    "session_id",
    "agent_id",
    "state",
    "message",
    "status_epoch",
    "occupant_id",
    "source",
    "revision",
    "completed_revision",
    "updated_at",
    "promptable",
)
WORKING, BLOCKED, IDLE = "working", "blocked", "idle"
STATES = (IDLE, WORKING, BLOCKED)
