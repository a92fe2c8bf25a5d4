"""Putting text into a pane as one bracketed paste, proving it arrived, then submitting it.

Text travels through one tmux buffer (``roost-send``) loaded from standard input, so its
length is not limited by a command line, and it is pasted with ``-p`` (bracketed only when
the program asked for it) and ``-d`` (the buffer is deleted as it is pasted). ``-w`` is never
passed: a send is not copied to the system clipboard. Every send on one server shares that
buffer, so loading and pasting happen under a lock on the server; a second lock per pane
keeps two senders from typing into one input line at once.

Arrival is judged from the outside: a pane's screen (its text, cursor and scrollback size)
changes when its program takes a paste or a key. The text is pasted exactly once, whatever
the screen shows: a program may read input and draw nothing (``stty -echo``, a raw reader, a
slow consumer), and a second paste to it would arrive as a second copy. After the paste only
the looks are repeated; what they could not see is reported as unproven, never "fixed" by
pasting again.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from roost.base import paths
from roost.base.errors import NotDelivered
from roost.pane.tmux.server import SEP, THEN, PaneGone, Server, fields

TYPE_CHECKING = False  # for annotations only: a send spawns tmux without subprocess
if TYPE_CHECKING:
    import subprocess

    from roost.pane.tmux.server import Completed

BUFFER = "roost-send"
ENTER_BUFFER = "roost-enter"
MARKERS = (b"\x1b[200~", b"\x1b[201~")

BLANK_GRACE = 5.0  # how long a pane that has drawn nothing yet is left to finish booting
QUIET_AFTER = 1.5  # a paste read whole with no visible effect for this long will show nothing
ENTER_AFTER = 1.0  # an Enter read with no visible effect for this long was swallowed
EXTRA_ENTERS = 3
SETTLE_MAX = 0.5  # how long to let a paste finish drawing before pressing Enter
ENTER_GAP = 0.1
"""Seconds from the moment the program was seen to have read the paste to its Enter, a person's
beat at least: programs that tell a typed Enter from one inside a burst of keys take an Enter
that follows the text too closely for a newline (Gemini CLI does, within 30 ms of the previous
key), and the prompt is then left unsubmitted in its input box. Waiting for the paste to settle
on screen counts towards it: the beat is one gap, not a sleep added after the settling. A
program that reads its terminal a line at a time (:func:`cooked`: a plain shell, ``cat``, a
script's ``read``) gets no beat: the kernel hands it the text and the Enter as one line, so it
cannot tell how close they came."""
POLLS = (0.005, 0.01, 0.02, 0.03, 0.05)  # quick first looks, then a steady pace

_LOOK = ("#{pane_id}", "#{pane_dead}", "#{pane_tty}", "#{cursor_x}", "#{cursor_y}", "#{history_size}")


class GoneWithText(PaneGone):
    """The pane went away after the text was pasted: its program may have read it."""


class EnterUnread(Exception):
    """Enter was pressed but the program has not read it: the text may still be submitted."""


class Look:
    """One moment of a pane: what is drawn, where the cursor is, and the watched options.
    (A plain class: importing ``dataclasses`` would cost every send ~10 ms at start.)"""

    __slots__ = ("dead", "pane_id", "screen", "tty", "values")

    def __init__(
        self, pane_id: str, dead: bool, tty: str, screen: tuple[str, str, str, str], values: dict[str, str]
    ) -> None:
        self.pane_id = pane_id
        self.dead = dead
        self.tty = tty
        self.screen = screen
        self.values = values

    @property
    def blank(self) -> bool:
        return not self.screen[0].strip()


class Pasted:
    """The pane after the one paste, and whether the program was seen to take it.

    ``shown`` is True when the text was read off the terminal and the screen changed; False
    when it was read (or is still waiting unread) and nothing on screen says it arrived.
    """

    __slots__ = ("look", "read_at", "shown")

    def __init__(self, look: Look, shown: bool, read_at: float) -> None:
        self.look = look
        self.shown = shown
        self.read_at = read_at
        """When a look found the paste read (``time.monotonic()``): the program read it no
        later, so an Enter a beat after this moment is a beat after the text."""


def clean(data: bytes) -> bytes:
    """Remove bracketed-paste markers, so the text cannot end the paste early and be typed."""
    while any(marker in data for marker in MARKERS):
        for marker in MARKERS:
            data = data.replace(marker, b"")
    return data


def encode(text: str) -> bytes:
    """A prompt's text as a terminal's composer pastes it, for every sender alike (``roost
    send``, the API's fenced prompt, MCP's ``session.send``): UTF-8 (an argument's undecodable
    bytes as they came), bracketed-paste markers and then every other ESC removed, so the text
    can neither end the paste early nor reach the program as a key, and CR LF or a lone CR as
    one line feed, which tmux's paste turns into the CR a terminal sends. The bracketed-paste
    markers and the Enter are tmux's to add (:func:`paste_once`)."""
    data = clean(text.encode(errors="surrogateescape")).replace(b"\x1b", b"")
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


def look(server: Server, pane_id: str, watch: tuple[str, ...] = ()) -> Look | None:
    """The pane now, in one tmux call; None when it is gone.

    ``capture-pane`` goes first because it fails on a missing pane, which stops the chain;
    ``display-message`` alone would answer for some other pane.
    """
    fmt = SEP.join([*_LOOK, *(f"#{{{name}}}" for name in watch)])
    proc = server.run(
        "capture-pane", "-p", "-t", pane_id, THEN, "display-message", "-p", "-t", pane_id, fmt, check=False
    )
    if proc.returncode != 0:
        return None
    lines = proc.stdout.decode(errors="replace").split("\n")
    if len(lines) < 2:
        return None
    values = fields(lines[-2], len(_LOOK) + len(watch))
    if values[0] != pane_id:
        return None
    return Look(
        pane_id=pane_id,
        dead=values[1] == "1",
        tty=values[2],
        screen=("\n".join(lines[:-2]), values[3], values[4], values[5]),
        values=dict(zip(watch, values[len(_LOOK) :], strict=False)),
    )


def unread(tty: str) -> int:
    """Bytes waiting on the pane's terminal that its program has not read yet (0 if unknown)."""
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return 0
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return 0
    finally:
        os.close(fd)


def cooked(tty: str) -> bool:
    """Whether the pane's program reads its terminal a line at a time (``ICANON``): the kernel
    then edits the line and hands it over at the Enter, so no key's timing reaches the program.
    False when the terminal cannot be asked (a beat then costs little and may be needed)."""
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return bool(termios.tcgetattr(fd)[3] & termios.ICANON)
    except termios.error:
        return False
    finally:
        os.close(fd)


def _lock_path(server: Server, suffix: str) -> str:
    socket = os.path.realpath(server.socket) if server.kind == "path" else server.socket
    key = socket.replace("%", "%25").replace("/", "%2F")
    return os.path.join(paths.runtime_path(), f"send.{key}{suffix}.lock")


@contextmanager
def _locked(path: str) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def pane_lock(server: Server, pane_id: str) -> AbstractContextManager[None]:
    """One sender at a time per pane, so two prompts never share an input line or a turn."""
    return _locked(_lock_path(server, "." + pane_id.lstrip("%")))


def _buffer_lock(server: Server) -> AbstractContextManager[None]:
    return _locked(_lock_path(server, ""))


def drop_buffer(server: Server) -> None:
    """Delete the send buffer if a failed paste left it behind; nothing else is touched."""
    with _buffer_lock(server):
        server.run("delete-buffer", "-b", BUFFER, check=False)


def paste_once(
    server: Server, pane_id: str, data: bytes, *, bracket: bool = True, raw: bool = False, enter: bool = False
) -> Completed | subprocess.CompletedProcess[bytes]:
    """Paste ``data`` into the pane in one tmux call and, with ``enter``, one Enter after it in
    that same call. Nothing is confirmed or repeated here, so a caller that must never write
    twice knows exactly what was attempted: once.

    ``bracket`` wraps the text in bracketed-paste markers when the pane's program asked for
    them; tmux turns each line feed into a carriage return, as a terminal's paste does, unless
    ``raw``. The Enter is pasted too (a raw CR), not sent as a key: a key would be taken by a
    pane in copy mode, while a paste reaches the program whatever mode the pane is in. A
    failed call leaves no buffer behind: text must not linger in tmux's buffer list.
    """
    flags = [*(["-p"] if bracket else []), *(["-r"] if raw else [])]
    then = [THEN, "set-buffer", "-b", ENTER_BUFFER, "\r"]
    then += [THEN, "paste-buffer", "-r", "-d", "-b", ENTER_BUFFER]
    then = [*then, "-t", pane_id] if enter else []
    with _buffer_lock(server):
        proc = server.run(
            "load-buffer",
            "-b",
            BUFFER,
            "-",
            THEN,
            "paste-buffer",
            *flags,
            "-d",
            "-b",
            BUFFER,
            "-t",
            pane_id,
            *then,
            input=data,
            check=False,
        )
        if proc.returncode != 0:
            for name in (BUFFER, ENTER_BUFFER):  # separately: tmux stops a list at its first error
                server.run("delete-buffer", "-b", name, check=False)
    return proc


def _paste(server: Server, pane_id: str, data: bytes) -> None:
    """Paste once. A failed call pasted nothing: tmux stops a command list at its first error,
    and ``paste-buffer`` fails only on finding its pane or buffer, before it writes a byte."""
    proc = paste_once(server, pane_id, data)
    if proc.returncode != 0:
        if look(server, pane_id) is None:
            raise PaneGone(pane_id)
        reason = proc.stderr.decode(errors="replace").strip()
        raise NotDelivered(f"could not paste into {pane_id}: {reason}")


def _pause(step: int) -> None:
    time.sleep(POLLS[min(step, len(POLLS) - 1)])


def _next(server: Server, pane_id: str, watch: tuple[str, ...]) -> Look:
    now = look(server, pane_id, watch)
    if now is None or now.dead:
        raise PaneGone(pane_id)
    return now


def _drawn(server: Server, first: Look, until: float) -> Look:
    """A pane that has drawn nothing yet is usually still booting, and may drop input."""
    current, step = first, 0
    while current.blank and time.monotonic() < until:
        _pause(step)
        step += 1
        current = _next(server, first.pane_id, tuple(first.values))
    return current


def deliver(server: Server, first: Look, data: bytes, deadline: float) -> Pasted:
    """Paste ``data`` into the pane once and watch for the program to take it.

    The paste shows when the program has read it (nothing is left unread on the terminal) and
    the screen changed: a change while the text still waits unread was the program's own doing.
    Looking stops, unshown, once the text has been read and the screen stayed still for
    ``QUIET_AFTER`` (the program draws nothing for it), or at ``deadline`` with text unread
    (it has not been read yet, which is not lost). It is never pasted again: a program that
    read it without drawing has it. Raises ``NotDelivered`` or ``PaneGone`` only when nothing
    was pasted, ``GoneWithText`` when the pane goes after the paste.
    """
    watch = tuple(first.values)
    before = _drawn(server, first, min(deadline, time.monotonic() + BLANK_GRACE))
    _paste(server, first.pane_id, data)
    busy = pasted = time.monotonic()
    deadline = max(deadline, pasted + QUIET_AFTER)  # a paste always gets a fair look
    step = 0
    try:
        while True:
            _pause(step)
            step += 1
            current = _next(server, first.pane_id, watch)
            now = time.monotonic()
            if unread(current.tty) > 0:
                busy = now
            elif current.screen != before.screen:
                return Pasted(_settled(server, current, deadline), shown=True, read_at=now)
            elif now - busy >= QUIET_AFTER:
                return Pasted(current, shown=False, read_at=now)
            if now >= deadline:
                return Pasted(current, shown=False, read_at=now)
    except PaneGone as error:
        raise GoneWithText(first.pane_id) from error


def _settled(server: Server, current: Look, deadline: float) -> Look:
    """Let the paste finish drawing, so its own echo is not mistaken for the submit."""
    until = min(deadline, time.monotonic() + SETTLE_MAX)
    step = 0
    while True:
        _pause(step)
        step += 1
        following = _next(server, current.pane_id, tuple(current.values))
        if following.screen == current.screen or time.monotonic() >= until:
            return following
        current = following


def submit(server: Server, pasted: Pasted, patience: float) -> tuple[Look, bool]:
    """Press Enter; return the pane after it and whether the text visibly left its input line.

    Left means the program read the Enter and then the screen moved or a watched option (the
    badge) changed. An Enter still unread after ``patience`` seconds raises ``EnterUnread``: it
    may yet submit the text, so the text counts as sent.

    A paste that showed gets up to ``EXTRA_ENTERS`` more Enters, each only after the one before
    was read and changed nothing: such a program draws, so an Enter it took without any visible
    effect was swallowed (as an agent does while it still takes a paste). A second Enter cannot
    submit the text twice: the text is pasted once, an Enter submits what the input line holds
    and empties it, so an Enter after a submit that drew nothing submits an empty line, which
    an agent ignores. A paste that did not show gets exactly one Enter: its program draws
    nothing, so "no effect" proves nothing, and to a line reader such as ``cat`` each extra
    Enter would be an extra empty line.
    """
    at_paste = pasted.look
    pane_id, watch = at_paste.pane_id, tuple(at_paste.values)
    if not cooked(at_paste.tty):
        time.sleep(max(0.0, pasted.read_at + ENTER_GAP - time.monotonic()))
    give_up = time.monotonic() + patience
    for _ in range(1 + (EXTRA_ENTERS if pasted.shown else 0)):
        if server.run("send-keys", "-t", pane_id, "Enter", check=False).returncode != 0:
            raise PaneGone(pane_id)
        pressed, step = time.monotonic(), 0
        while True:
            _pause(step)
            step += 1
            current = _next(server, pane_id, watch)
            changed = current.screen != at_paste.screen or current.values != at_paste.values
            now = time.monotonic()
            if not changed and pasted.shown and now - pressed < ENTER_AFTER:
                continue
            if unread(current.tty) > 0:
                if now >= give_up:
                    raise EnterUnread(pane_id)
                continue
            if changed and pasted.shown:
                return current, True
            break
    return current, False
