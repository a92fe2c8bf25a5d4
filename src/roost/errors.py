"""The failures a caller can act on, and the exit code each one maps to.

Faces raise these; ``cli.roost`` turns them into a stderr line and an exit status in one
place, so no verb picks exit codes by hand.
"""

from __future__ import annotations


class RoostError(Exception):
    """A failure with a message meant for stderr and an exit status."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self.args[0])


class UsageError(RoostError):
    """A malformed call: a caller bug. Printed as ``usage: …``."""

    exit_code = 1


class TargetGone(RoostError):
    """The target does not exist or its pane is dead."""

    exit_code = 2


class NoServer(RoostError):
    """No roost tmux server answers on this socket."""

    exit_code = 2


class Blocked(RoostError):
    """The target shows a permission dialog."""

    exit_code = 3


class DeliveredNoTurn(RoostError):
    """The text was submitted but no turn began inside the bound: never resend."""

    exit_code = 4
