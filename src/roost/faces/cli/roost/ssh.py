"""``roost ssh HOST [subcommand…]``: the same roost, on another machine, over plain ssh.

No daemon is involved. A terminal is allocated on the remote side only when the verb needs a
person at one (a bare ``roost ssh HOST`` attaches; so does ``new`` without ``-d``) and this
side is one; every other verb runs with none, so its stdout, stderr and exit code come through
byte for byte (a terminal would turn ``\\n`` into ``\\r\\n`` and fold stderr into stdout), and
``roost ssh HOST status --json | jq`` reads what ``roost status --json`` prints there.

The remote side runs ``roost`` from its PATH, or from ``~/.local/bin`` where set-up links it
(an ssh command gets a non-interactive shell, whose PATH often lacks it). ``ROOST_SSH_COMMAND``
replaces ``ssh`` (a program and its options, as ``GIT_SSH_COMMAND`` does for git). Two
failures get a sentence of their own after ssh's: ssh's own (exit 255: the host could not be
reached or refused the login) and a host with no roost (exit 127); both exit codes stay as
ssh gave them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from roost.base.errors import SetupError, UsageError

USAGE = "usage: roost ssh HOST [subcommand…]"
SSH_FAILED = 255
NOT_FOUND = 127
REMOTE = 'PATH="$PATH:$HOME/.local/bin"; exec roost "$@"'
"""What the remote shell runs: roost from its PATH, else where set-up links it; the verb and
its arguments arrive as ``"$@"``, each one word whatever it holds."""


def _needs_terminal(rest: list[str]) -> bool:
    """Whether the remote verb attaches a person to tmux, so it needs a terminal there."""
    if not rest or rest[0] == "attach":
        return True
    return rest[0] == "new" and "-d" not in rest[1:]


def command(host: str, rest: list[str], terminal: bool) -> list[str]:
    """The ssh command line: ``ssh -t`` or ``-T``, the host, and one remote command string
    (ssh hands the remote shell a single string, so every argument is quoted into it)."""
    ssh = shlex.split(os.environ.get("ROOST_SSH_COMMAND") or "ssh")
    remote = shlex.join(["sh", "-c", REMOTE, "roost", *rest])
    return [*ssh, "-t" if terminal else "-T", "--", host, remote]


def run(verb: str, args: list[str]) -> int:
    # A host that starts with a dash would be read by ssh as one of its own options.
    if not args or not args[0] or args[0].startswith("-"):
        raise UsageError(USAGE)
    host, rest = args[0], args[1:]
    argv = command(host, rest, _needs_terminal(rest) and sys.stdin.isatty())
    try:
        proc = subprocess.Popen(argv)
    except OSError as error:
        raise SetupError(f"can't run {argv[0]}: {error.strerror}") from error
    while True:
        # Ctrl-C reaches ssh too (one process group) and ends the remote verb its own way:
        # roost waits for ssh's exit code rather than dying before it.
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:
            continue
    if code == SSH_FAILED:
        sys.stderr.write(f"roost ssh: ssh could not run the command on {host} (exit {code}; ssh said why)\n")
    elif code == NOT_FOUND:
        sys.stderr.write(
            f"roost ssh: {host} has no roost on its PATH or in ~/.local/bin: install it there first\n"
        )
    return code
