"""``roost help`` and ``roost --version``: the verb list, one line each, and the version."""

from __future__ import annotations

from roost import __version__
from roost.base.errors import UsageError

VERBS = (
    ("", "attach to session main, starting the server if needed"),
    ("new [-d] [-s NAME] [-n WINDOW] [cmd]", "a new session; prints its %N"),
    ("spawn [--worktree [--branch B]] NAME [cmd]", "a co-agent window, not attached; prints its %N"),
    ("split [-h|-v] [-t P] [-n NAME] [cmd]", "a helper pane in your window; prints its %N"),
    ("fork [--worktree [--branch B]] TARGET NAME", "a new agent from TARGET's conversation; prints its %N"),
    ("view [-n NAME] cmd…", "show cmd to a person, without stealing focus"),
    ("send [--force] [--from L] TARGET TEXT", "paste a prompt, submit it, name the turn"),
    ("read [--render] [--turn N] TARGET", "the reply that agent just gave"),
    ("screen TARGET [LINES]", "what is on that pane's screen"),
    ("wait-done [--turn N] TARGET [TIMEOUT]", "block until the target is done"),
    ("close [--force] [--remove-worktree] TARGET [SECONDS]", "end one agent its own way, close its pane"),
    ("whoami", "this pane's own %N"),
    ("state STATE [REASON]", "badge this pane: working blocked done idle error"),
    ('reply "TEXT"', "record your reply, for another agent's read"),
    ("identify --session ID --cwd DIR --harness H", "say which agent session runs here"),
    ("status", "every session and pane, with badges"),
    ("events [--follow] [--since C] [--pane %N]", "every state change, one JSON line each"),
    ("forget TARGET | --gone | --all", "delete kept replies (--all: and the events log)"),
    ("doctor", "check the setup; names the fix for each problem"),
    ("ls", "list sessions"),
    ("kill [SESSION]", "end one session, or the whole server"),
    ("restore [--dry-run] [--json]", "bring back the last server's sessions and resume its agents"),
    ("ssh HOST [VERB …]", "run roost on another machine"),
    ("api VERB …", "status rows, waits and fenced prompts via rosterd (roost api help)"),
    ("completion bash|zsh|fish", "print the shell's completion script (set-up installs it)"),
    ("help", "this list; roost --version prints the version"),
)


def run(verb: str, args: list[str]) -> int:
    if args:
        raise UsageError(f"usage: roost {verb}")
    if verb == "--version":
        print(f"roost {__version__}")
        return 0
    lines = [(f"roost {usage}".rstrip(), what) for usage, what in VERBS]
    width = max(len(usage) for usage, _ in lines)
    print(f"roost {__version__}: drive coding agents in persistent tmux sessions\n")
    for usage, what in lines:
        print(f"  {usage:<{width}}  {what}")
    print("\nTARGET: %N, @N, [SESSION:]WINDOW[.PANE] or a pane name. status, whoami, read, screen, send,")
    print("close, fork and state take --json. The socket is ROOST_SOCKET (a name or a path; default roost).")
    return 0
