"""A pane's screen, scrollback and terminal modes as the bytes that redraw it elsewhere.

A viewer that joins a pane late (a browser tab, after a reconnect or a lost stretch of output)
starts from a blank terminal. These bytes, written to a terminal of the pane's exact size,
leave it showing what the pane shows: its scrollback above, its screen (the alternate screen
too, with the normal one saved behind it, when a full-screen program runs), the cursor where
the pane's is, and the input modes the program set (application cursor keys, keypad, mouse
reporting) so keys and clicks reach it in the form it expects. Pure: no tmux call here.

What tmux 3.3a cannot tell: whether the program asked for bracketed paste. A viewer should
paste through tmux (``paste-buffer -p``), which knows, rather than bracket pastes itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from roost.pane.tmux.server import SEP, fields

NAMES = (
    "pane_id",
    "pane_dead",
    "pane_pipe",
    "session_id",
    "window_id",
    "window_panes",
    "window_width",
    "window_height",
    "pane_width",
    "pane_height",
    "history_size",
    "cursor_x",
    "cursor_y",
    "cursor_flag",
    "alternate_on",
    "alternate_saved_x",
    "alternate_saved_y",
    "keypad_cursor_flag",
    "keypad_flag",
    "insert_flag",
    "wrap_flag",
    "scroll_region_upper",
    "scroll_region_lower",
    "mouse_standard_flag",
    "mouse_button_flag",
    "mouse_any_flag",
    "mouse_utf8_flag",
    "mouse_sgr_flag",
)
FORMAT = SEP.join(f"#{{{name}}}" for name in NAMES)
"""One ``display-message -p`` line holding everything :class:`PaneState` reads."""

ROW_SEP = b"\r\n"
RESET_ATTRS = b"\x1b[0m"
ENTER_ALTERNATE = b"\x1b[?1049h\x1b[H\x1b[2J"


@dataclass(frozen=True)
class PaneState:
    """Where a pane is and what mode its terminal is in, from one ``display-message`` line."""

    pane: str
    dead: bool
    piped: bool
    """Someone's ``pipe-pane`` is open on the pane (a tap's own, or a log's)."""
    session: str
    window: str
    window_panes: int
    window_size: tuple[int, int]
    size: tuple[int, int]
    history: int
    cursor: tuple[int, int]
    cursor_visible: bool
    alternate: bool
    alternate_saved: tuple[int, int] | None
    wrap: bool
    modes: tuple[str, ...]
    scroll_region: tuple[int, int]

    @classmethod
    def parse(cls, line: str) -> PaneState:
        """Raises ValueError when the line is not a FORMAT line (a pane id first)."""
        value = dict(zip(NAMES, fields(line, len(NAMES)), strict=True))
        if not value["pane_id"].startswith("%"):
            raise ValueError(f"not a pane state line: {line!r}")

        def number(name: str) -> int:
            return int(value[name] or 0)

        saved = (number("alternate_saved_x"), number("alternate_saved_y"))
        return cls(
            pane=value["pane_id"],
            dead=value["pane_dead"] == "1",
            piped=value["pane_pipe"] == "1",
            session=value["session_id"],
            window=value["window_id"],
            window_panes=number("window_panes"),
            window_size=(number("window_width"), number("window_height")),
            size=(number("pane_width"), number("pane_height")),
            history=number("history_size"),
            cursor=(number("cursor_x"), number("cursor_y")),
            cursor_visible=value["cursor_flag"] != "0",
            alternate=value["alternate_on"] == "1",
            # tmux says 4294967295 (-1 as unsigned) when nothing is saved.
            alternate_saved=saved if max(saved) < 1 << 31 else None,
            wrap=value["wrap_flag"] != "0",
            modes=tuple(name for name, _ in _MODES if value[name] == "1"),
            scroll_region=(number("scroll_region_upper"), number("scroll_region_lower")),
        )


_MODES = (
    ("keypad_cursor_flag", b"\x1b[?1h"),
    ("keypad_flag", b"\x1b="),
    ("insert_flag", b"\x1b[4h"),
    ("mouse_standard_flag", b"\x1b[?1000h"),
    ("mouse_button_flag", b"\x1b[?1002h"),
    ("mouse_any_flag", b"\x1b[?1003h"),
    ("mouse_utf8_flag", b"\x1b[?1005h"),
    ("mouse_sgr_flag", b"\x1b[?1006h"),
)
_MODE_BYTES = dict(_MODES)


def _goto(x: int, y: int) -> bytes:
    return f"\x1b[{y + 1};{x + 1}H".encode()


def paint(state: PaneState, main: Sequence[bytes], alternate: Sequence[bytes] | None = None) -> bytes:
    """The bytes that redraw the pane on a blank terminal of ``state.size``.

    ``main`` is the normal screen's scrollback then its rows (``capture-pane -p -e -S -N``; when
    a full-screen program runs, the history then the saved normal screen, ``capture-pane -a``);
    ``alternate`` is the full-screen program's rows (``capture-pane -p -e``), or None.
    """
    out = bytearray(ROW_SEP.join(main))
    out += RESET_ATTRS
    if alternate is not None:
        if state.alternate_saved is not None:
            out += _goto(*state.alternate_saved)
        out += ENTER_ALTERNATE + ROW_SEP.join(alternate) + RESET_ATTRS
    upper, lower = state.scroll_region
    if (upper, lower) != (0, max(0, state.size[1] - 1)):
        out += f"\x1b[{upper + 1};{lower + 1}r".encode()
    if not state.wrap:
        out += b"\x1b[?7l"
    for name in state.modes:
        out += _MODE_BYTES[name]
    out += _goto(*state.cursor)
    if not state.cursor_visible:
        out += b"\x1b[?25l"
    return bytes(out)


def captures(pane: str, state: PaneState, history: int) -> list[tuple[str, ...]]:
    """The commands whose replies :func:`painted` needs, in order, the state read last.

    Normal screen: its scrollback and rows. Full-screen program: the history, the normal
    screen saved behind the program, then the program's screen."""
    target = ("-p", "-e", "-t", pane)
    lines = ("-S", f"-{history}")
    if not state.alternate:
        commands = [("capture-pane", *target, *lines)]
    else:
        commands = [("capture-pane", *target, *lines, "-E", "-1")] if state.history else []
        commands += [("capture-pane", *target, "-a", "-q"), ("capture-pane", *target)]
    commands.append(("display-message", "-p", "-t", pane, FORMAT))
    return commands


def painted(state: PaneState, captured: Sequence[Sequence[bytes]]) -> bytes:
    """The repaint from the rows :func:`captures` brought back for a pane now in ``state``."""
    if state.alternate:
        return paint(state, [line for lines in captured[:-1] for line in lines], captured[-1])
    return paint(state, captured[0])
