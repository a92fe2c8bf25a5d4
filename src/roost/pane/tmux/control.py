"""The tmux control-mode stream (``tmux -C``), turned from bytes into typed notifications.

The parser is pure: feed it whatever a read returned, however the stream was split, and it
returns the notifications completed so far. It never does I/O, so the recorded byte streams
in the tests are the whole truth about what it accepts.

What tmux 3.3a sends, and what the parser makes of it:

- A command's reply is a block, ``%begin TIME NUMBER FLAGS`` … ``%end``/``%error`` with the
  same time and number. Every line inside is reply data, even one that looks like a
  notification (``list-panes -F '#{pane_id}'`` prints ``%3``). FLAGS is 1 for a command the
  client sent and 0 for one tmux ran in the client's name (the attach itself, a hook), which
  is how a client matches replies to its own commands.
- ``%output %PANE DATA`` and ``%extended-output %PANE AGE ... : DATA`` carry pane bytes with
  every byte below 0x20 and the backslash written as ``\\ooo``; bytes above 0x7f come raw, so
  DATA is bytes (often UTF-8, never guaranteed to be). Unescaping is lazy because most
  readers only need to know that a pane wrote something.
- Every other ``%`` line is a notification with space-separated fields; a name (window,
  session) is always the last field and may contain spaces.
"""

from __future__ import annotations

from collections.abc import Callable

from roost.pane.tmux.notifications import (
    ClientDetached,
    ClientSessionChanged,
    Continue,
    Exit,
    LayoutChange,
    Notification,
    Output,
    PaneModeChanged,
    Pause,
    Reply,
    SessionChanged,
    SessionRenamed,
    SessionsChanged,
    SessionWindowChanged,
    SubscriptionChanged,
    Unknown,
    UnlinkedWindowAdd,
    UnlinkedWindowClose,
    UnlinkedWindowRenamed,
    WindowAdd,
    WindowClose,
    WindowPaneChanged,
    WindowRenamed,
)


def _after_colon(rest: str) -> tuple[list[str], str]:
    """Split ``A B ... : VALUE``: fields before the first `` : ``, and the value after it."""
    head, _, value = rest.partition(" : ")
    return head.split(" "), value


def _session_renamed(rest: str) -> SessionRenamed:
    if rest.startswith("$") and " " in rest:
        session, name = rest.split(" ", 1)
        return SessionRenamed(session, name)
    return SessionRenamed(None, rest)


def _subscription(rest: str) -> SubscriptionChanged:
    fields, value = _after_colon(rest)
    name, session, window, index, pane = fields[:5]
    return SubscriptionChanged(name, session, window, index, pane, value)


def _two(rest: str) -> tuple[str, str]:
    first, second = rest.split(" ", 1)
    return first, second


def _layout(rest: str) -> LayoutChange:
    fields = rest.split(" ", 3)
    fields += [""] * (4 - len(fields))
    return LayoutChange(*fields)


def _client_session(rest: str) -> ClientSessionChanged:
    client, session, name = rest.split(" ", 2)
    return ClientSessionChanged(client, session, name)


_SIMPLE: dict[bytes, Callable[[str], Notification]] = {
    b"%pause": Pause,
    b"%continue": Continue,
    b"%window-add": WindowAdd,
    b"%window-close": WindowClose,
    b"%window-renamed": lambda rest: WindowRenamed(*_two(rest)),
    b"%unlinked-window-add": UnlinkedWindowAdd,
    b"%unlinked-window-close": UnlinkedWindowClose,
    b"%unlinked-window-renamed": lambda rest: UnlinkedWindowRenamed(*_two(rest)),
    b"%window-pane-changed": lambda rest: WindowPaneChanged(*_two(rest)),
    b"%layout-change": _layout,
    b"%session-changed": lambda rest: SessionChanged(*_two(rest)),
    b"%sessions-changed": lambda rest: SessionsChanged(),
    b"%session-renamed": _session_renamed,
    b"%session-window-changed": lambda rest: SessionWindowChanged(*_two(rest)),
    b"%pane-mode-changed": PaneModeChanged,
    b"%subscription-changed": _subscription,
    b"%client-session-changed": _client_session,
    b"%client-detached": ClientDetached,
    b"%exit": lambda rest: Exit(rest or None),
}

# Notifications whose only field is an id: without it the line is malformed, not a notice.
_NEEDS_ARGUMENT = frozenset(
    {
        b"%pause",
        b"%continue",
        b"%window-add",
        b"%window-close",
        b"%unlinked-window-add",
        b"%unlinked-window-close",
        b"%pane-mode-changed",
        b"%client-detached",
    }
)


def _output(line: bytes) -> Output:
    _, pane, escaped = line.split(b" ", 2)
    return Output(pane.decode(), escaped)


def _extended_output(line: bytes) -> Output:
    head, sep, escaped = line.partition(b" : ")
    if not sep:
        raise ValueError("no ' : ' in %extended-output")
    fields = head.split(b" ")
    return Output(fields[1].decode(), escaped, int(fields[2]))


def notification(line: bytes) -> Notification:
    """One line outside a reply block, as a notification (``Unknown`` when it isn't one)."""
    try:
        if line.startswith(b"%output "):
            return _output(line)
        if line.startswith(b"%extended-output "):
            return _extended_output(line)
        name, _, rest = line.partition(b" ")
        parse = _SIMPLE.get(name)
        if parse is None or (name in _NEEDS_ARGUMENT and not rest):
            return Unknown(line)
        return parse(rest.decode(errors="replace"))
    except (ValueError, TypeError, IndexError):
        return Unknown(line)


def _number(field: bytes) -> bool:
    """Whether ``field`` is an integer as tmux writes one: an optional ``-`` and at most 20
    digits (a 64-bit value), so ``int`` can neither refuse it nor spend long on it."""
    digits = field[1:] if field[:1] == b"-" else field
    return 0 < len(digits) <= 20 and digits.isdigit()


def _guard(line: bytes) -> tuple[int, int, int] | None:
    """``(time, number, flags)`` of a ``%begin``/``%end``/``%error`` line, if it is one."""
    fields = line.split(b" ")
    if len(fields) != 4 or not all(_number(field) for field in fields[1:]):
        return None
    return int(fields[1]), int(fields[2]), int(fields[3])


class Parser:
    """Incremental: keeps the unfinished last line and the open reply block between feeds."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._block: tuple[int, int, int] | None = None
        self._lines: list[bytes] = []

    def feed(self, data: bytes) -> list[Notification]:
        """Parse what a read returned; the notifications whose last line is now complete."""
        if b"\n" not in data:
            if data:
                self._pieces.append(data)
            return []
        if self._pieces:
            self._pieces.append(data)
            data = b"".join(self._pieces)
            self._pieces = []
        lines = data.split(b"\n")
        tail = lines.pop()
        if tail:
            self._pieces.append(tail)
        found: list[Notification] = []
        for line in lines:
            item = self._line(line)
            if item is not None:
                found.append(item)
        return found

    def finish(self) -> list[Notification]:
        """At end of stream: the last line may lack its newline; an open reply block is dropped."""
        rest = b"".join(self._pieces)
        self._pieces = []
        item = self._line(rest) if rest else None
        self._block = None
        self._lines = []
        return [item] if item is not None else []

    def _line(self, line: bytes) -> Notification | None:
        if self._block is not None:
            return self._in_block(self._block, line)
        if line.startswith(b"%begin "):
            guard = _guard(line)
            if guard is not None:
                self._block = guard
                return None
        if not line:
            return None
        return notification(line)

    def _in_block(self, block: tuple[int, int, int], line: bytes) -> Reply | None:
        if line.startswith((b"%end ", b"%error ")):
            guard = _guard(line)
            if guard is not None and guard[:2] == block[:2]:
                time, number, flags = block
                reply = Reply(time, number, flags, line.startswith(b"%end "), tuple(self._lines))
                self._block = None
                self._lines = []
                return reply
        self._lines.append(line)
        return None
