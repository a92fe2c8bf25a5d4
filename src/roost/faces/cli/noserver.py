"""What both doctors say while roost's tmux server has not started yet.

That is no fault: roost starts its server with the first session (bare ``roost``, ``roost
new``, ``roost spawn``), and the daemon finds it then, so right after ``make run`` there is
none. ``roost doctor`` says it as ``ok`` and ``rosterd doctor`` as ``skip`` (nothing to check
yet), in the same words, so the two never disagree about it.
"""

from __future__ import annotations


def not_yet(socket: str) -> str:
    """The one sentence for "no server yet" on ``socket``."""
    return (
        f"no roost tmux server on socket '{socket}' yet, which is fine: the first session starts it "
        "(`roost` to work in one, or `roost new -d`)"
    )
