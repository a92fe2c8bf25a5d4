"""``roost fork [--worktree [--branch B]] [--json] TARGET NAME``: a new agent that starts from the
conversation of TARGET's agent, in a new window NAME beside it, TARGET left as it was.

The agent's manifest says how its CLI forks (``[fork]``: Claude Code resumes the conversation
under a new session id); the fork runs as TARGET's agent was started, with its flags and
endpoint, in the same folder or, with ``--worktree``, in a new git worktree and branch of that
folder's repository (where ``roost spawn --worktree`` puts one). It prints the new pane's ``%N``,
as ``spawn`` does, and never changes what the person is looking at. Every refusal comes before
anything is made (:mod:`roost.actions.fork` tables them): a target whose agent has no
conversation yet, an agent that cannot fork, a NAME a pane or window has, ``--worktree`` outside
a git repository. It needs no daemon; ``rosterd fork`` is the same for any session the daemon
knows, headless ones too.
"""

from __future__ import annotations

import os

from roost.base.errors import UsageError
from roost.base.text import control, utf8
from roost.faces.cli.output import document, notice

USAGE = "usage: roost fork [--worktree [--branch B]] [--json] TARGET NAME"


def _parse(args: list[str]) -> tuple[set[str], str | None, list[str]]:
    flags: set[str] = set()
    branch, words, rest = None, [], list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            words += rest
            break
        if arg in ("--worktree", "--json"):
            flags.add(arg)
        elif arg == "--branch":
            if not rest:
                raise UsageError(f"{USAGE} (--branch needs a value)")
            branch = rest.pop(0)
        elif arg.startswith("-") and arg != "-":
            raise UsageError(f"{USAGE} (unknown {arg})")
        else:
            words.append(arg)
    if len(words) != 2:
        raise UsageError(USAGE)
    if branch is not None and "--worktree" not in flags:
        raise UsageError(f"{USAGE} (--branch goes with --worktree)")
    name = words[1]
    if not name or control(name) is not None or not utf8(name):
        raise UsageError(f"{USAGE} (NAME must be non-empty, one line, valid UTF-8, no control characters)")
    return flags, branch, words


def run(verb: str, args: list[str]) -> int:
    from roost.actions.fork import fork_pane
    from roost.pane.tmux.server import Server

    flags, branch, (target, name) = _parse(args)
    forked, left_out = fork_pane(
        Server.from_env(), target, name, worktree="--worktree" in flags, branch=branch, caller=os.environ
    )
    if left_out:
        notice(
            "fork",
            f"{len(left_out)} of this environment's variables are too large for one tmux command "
            f"and keep the server's values in the new pane: {', '.join(left_out)}",
        )
    if "--json" in flags:
        document(
            "fork",
            target=target,
            pane=forked.pane,
            source=forked.source,
            forked_from=forked.forked_from,
            harness=forked.harness,
            name=forked.name,
            session_id=forked.session_id,
            cwd=forked.cwd,
            worktree=forked.worktree,
            branch=forked.branch,
        )
        return 0
    print(forked.pane)
    return 0
