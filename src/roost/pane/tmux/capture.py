"""What is on a pane's screen: its visible rows as tmux draws them, escapes left out.

Lines are bytes, as tmux returns them: a screen is terminal output, and turning it into text
is the caller's decision (``roost screen`` prints it byte for byte, ``--json`` decodes it).
"""

from __future__ import annotations

from roost.base.errors import TargetGone
from roost.pane.tmux.server import Server, TmuxError


def capture(server: Server, pane_id: str, *, dead: bool = False) -> list[bytes]:
    """The rows of the pane's visible screen, top to bottom, trailing spaces trimmed by tmux.

    A ``dead`` pane (its program exited, the pane kept) is its last screen as it was: tmux
    wrote the exit's line at its bottom by scrolling it one row, so the row that scrolled off
    the top, often the one error a failing program printed, comes first."""
    scrolled = ["-S", "-1"] if dead else []
    try:
        out = server.run("capture-pane", "-p", *scrolled, "-t", pane_id).stdout
    except TmuxError as error:
        raise TargetGone(f"can't capture pane '{pane_id}': {error}") from error
    return out.split(b"\n")[:-1] if out.endswith(b"\n") else out.split(b"\n")


def _blank(line: bytes) -> bool:
    return not line.strip()


def last_lines(rows: list[bytes], count: int) -> bytes:
    """The last ``count`` non-blank rows, joined by newlines: what a tail of the screen shows."""
    kept = [row for row in rows if not _blank(row)]
    return b"\n".join(kept[-count:])


def from_row(rows: list[bytes], first: int) -> bytes:
    """Rows ``first`` (1 = the top of the screen) to the end, without the blank rows below."""
    rest = rows[first - 1 :]
    while rest and _blank(rest[-1]):
        rest.pop()
    return b"\n".join(rest)
