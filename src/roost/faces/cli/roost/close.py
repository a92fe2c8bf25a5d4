"""``roost close [--force] [--json] [--remove-worktree] TARGET [TIMEOUT]``: end one agent its own
way, close its pane.

close asks the agent to leave with its harness's exit command, waits for it to go, then
closes that one pane: never the window's other panes, never a session, never the server.
Everything it refuses, it refuses before typing or closing anything (the steps and refusals are
:mod:`roost.actions.paneclose`'s, which rosterd's close action takes too). Kept replies stay:
only ``roost forget`` deletes them. A git worktree ``spawn --worktree`` gave the agent stays too,
unless ``--remove-worktree`` asks and it holds no work (no uncommitted change, no commit its
repository's HEAD lacks): what is kept is said, and why.
"""

from __future__ import annotations

from roost.actions.paneclose import DEFAULT_TIMEOUT, leave
from roost.base.errors import UsageError
from roost.faces.cli.output import complain, document
from roost.pane.tmux.server import Server

USAGE = "usage: roost close [--force] [--json] [--remove-worktree] TARGET [TIMEOUT]"
FLAGS = ("--force", "--json", "--remove-worktree")
NOT_ASKED = "--remove-worktree was not given"


def _parse(args: list[str]) -> tuple[set[str], str, int]:
    flags, rest = set(), list(args)
    while rest and rest[0] in FLAGS:
        flags.add(rest.pop(0))
    if not rest or len(rest) > 2 or rest[0].startswith("-"):
        raise UsageError(USAGE)
    timeout = DEFAULT_TIMEOUT
    if len(rest) == 2:
        if not rest[1].isdigit():
            raise UsageError(f"{USAGE} (TIMEOUT is a whole number of seconds, not '{rest[1]}')")
        timeout = int(rest[1])
    return flags, rest[0], timeout


def _worktree(path: str, branch: str, remove: bool) -> str | None:
    """Remove the agent's worktree when asked and it holds no work; why it was kept, else None."""
    from roost.pane.state import worktrees

    if not remove:
        return NOT_ASKED
    kept = worktrees.unfinished(path, branch)
    if kept is None:
        worktrees.remove(path, branch)
    return kept


def run(verb: str, args: list[str]) -> int:
    flags, target, timeout = _parse(args)
    left = leave(Server.from_env(), target, force="--force" in flags, timeout=timeout)
    kept = None
    if left.worktree and left.branch:
        kept = _worktree(left.worktree, left.branch, "--remove-worktree" in flags)
        if kept is not None and "--json" not in flags:
            complain(f"roost close: kept the worktree {left.worktree} (branch {left.branch}): {kept}\n")
    if "--json" in flags:
        document(
            "close",
            target=target,
            pane=left.pane,
            state=left.state,
            harness=left.harness,
            exit_command=left.exit_command,
            forced=left.forced,
            worktree=left.worktree,
            branch=left.branch,
            worktree_removed=bool(left.worktree) and kept is None,
            worktree_kept=kept,
        )
    return 0
