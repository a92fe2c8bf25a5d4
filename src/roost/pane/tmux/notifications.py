"""What a tmux control-mode stream says, as values: one frozen dataclass per kind of line.

``control`` turns bytes into these; everything above it (the client, the watcher, the
daemon) reads only these. Ids stay as tmux writes them: ``$1`` session, ``@2`` window,
``%3`` pane.

Pane output keeps tmux's escaping (every byte below 0x20 and the backslash as ``\\ooo``,
bytes above 0x7f raw) until someone asks for ``data``: most readers only need to know that
a pane wrote something, not what.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reply:
    """One command's reply block; ``lines`` are raw bytes, without their newlines."""

    time: int
    number: int
    flags: int
    ok: bool
    lines: tuple[bytes, ...]

    @property
    def ours(self) -> bool:
        """Whether the client sent this command (tmux also runs hooks and the attach in its name)."""
        return self.flags == 1

    @property
    def text(self) -> str:
        return b"\n".join(self.lines).decode(errors="replace")


@dataclass(frozen=True, slots=True)
class Output:
    """A pane wrote bytes; ``age_ms`` is set for ``%extended-output`` (the pause-after form)."""

    pane: str
    escaped: bytes
    age_ms: int | None = None

    @property
    def data(self) -> bytes:
        return unescape(self.escaped)


@dataclass(frozen=True, slots=True)
class Pause:
    """tmux stopped sending this pane's output (pause-after): what it wrote since is lost."""

    pane: str


@dataclass(frozen=True, slots=True)
class Continue:
    """A paused pane flows again; its screen must be re-read, not replayed."""

    pane: str


@dataclass(frozen=True, slots=True)
class WindowAdd:
    window: str


@dataclass(frozen=True, slots=True)
class WindowClose:
    window: str


@dataclass(frozen=True, slots=True)
class WindowRenamed:
    window: str
    name: str


@dataclass(frozen=True, slots=True)
class UnlinkedWindowAdd:
    window: str


@dataclass(frozen=True, slots=True)
class UnlinkedWindowClose:
    """A window not linked to this client's session closed (3.3a also says so for its own)."""

    window: str


@dataclass(frozen=True, slots=True)
class UnlinkedWindowRenamed:
    window: str
    name: str


@dataclass(frozen=True, slots=True)
class WindowPaneChanged:
    """The active pane of a window changed."""

    window: str
    pane: str


@dataclass(frozen=True, slots=True)
class LayoutChange:
    """A window's layout changed: the only notice tmux gives that a pane was split or killed."""

    window: str
    layout: str
    visible_layout: str
    flags: str

    @property
    def panes(self) -> list[str]:
        return layout_panes(self.layout)


@dataclass(frozen=True, slots=True)
class SessionChanged:
    """This client is now attached to ``session`` (sent once right after the attach)."""

    session: str
    name: str


@dataclass(frozen=True, slots=True)
class SessionsChanged:
    """A session was created or destroyed somewhere on the server."""


@dataclass(frozen=True, slots=True)
class SessionRenamed:
    """``session`` is None when tmux gives only the new name (the man page's form)."""

    session: str | None
    name: str


@dataclass(frozen=True, slots=True)
class SessionWindowChanged:
    session: str
    window: str


@dataclass(frozen=True, slots=True)
class PaneModeChanged:
    pane: str


@dataclass(frozen=True, slots=True)
class SubscriptionChanged:
    """A ``refresh-client -B`` format changed value; unused fields are ``-``."""

    name: str
    session: str
    window: str
    window_index: str
    pane: str
    value: str


@dataclass(frozen=True, slots=True)
class ClientSessionChanged:
    """Another client switched session."""

    client: str
    session: str
    name: str


@dataclass(frozen=True, slots=True)
class ClientDetached:
    client: str


@dataclass(frozen=True, slots=True)
class Exit:
    """The control client is leaving; the stream ends after this line."""

    reason: str | None


@dataclass(frozen=True, slots=True)
class Unknown:
    """A line this parser has no type for (a newer tmux, or a malformed line), kept verbatim."""

    line: bytes


Notification = (
    Reply
    | Output
    | Pause
    | Continue
    | WindowAdd
    | WindowClose
    | WindowRenamed
    | UnlinkedWindowAdd
    | UnlinkedWindowClose
    | UnlinkedWindowRenamed
    | WindowPaneChanged
    | LayoutChange
    | SessionChanged
    | SessionsChanged
    | SessionRenamed
    | SessionWindowChanged
    | PaneModeChanged
    | SubscriptionChanged
    | ClientSessionChanged
    | ClientDetached
    | Exit
    | Unknown
)

_LEAF = re.compile(r"\d+x\d+,\d+,\d+,(\d+)")


def layout_panes(layout: str) -> list[str]:
    """Pane ids (``%N``) of a tmux layout string, in layout order.

    A leaf cell is ``WxH,X,Y,ID``; a split cell is ``WxH,X,Y`` followed by ``{`` or ``[``, so
    only leaves carry the fourth number.
    """
    return [f"%{number}" for number in _LEAF.findall(layout)]


def unescape(escaped: bytes) -> bytes:
    """Undo tmux's ``\\ooo`` escapes; tmux escapes the backslash itself, so every one starts one.

    This is the hot path of every byte a pane writes, so CPython's escape decoder does it in C:
    it reads ``\\ooo`` as tmux means it. Text it refuses (a trailing or stray backslash, which
    tmux never sends) is decoded by hand, keeping such a backslash as it is.
    """
    if b"\\" not in escaped:
        return escaped
    try:
        return codecs.escape_decode(escaped)[0]
    except (ValueError, DeprecationWarning):
        pass
    parts = escaped.split(b"\\")
    out = bytearray(parts[0])
    for part in parts[1:]:
        code = part[:3]
        if len(code) == 3 and code.isdigit() and b"8" not in code and b"9" not in code:
            out.append(int(code, 8) & 0xFF)
            out += part[3:]
        else:
            out += b"\\" + part
    return bytes(out)
