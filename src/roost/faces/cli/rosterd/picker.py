"""A list on the terminal to pick from: ↑/↓ (or k/j) move, space picks, enter accepts, q quits.

:class:`Picker` is the list and what each key does to it, with no terminal (its tests press
keys and read lines); :func:`choose` draws it on a terminal in cbreak mode (no echo, no line
buffering, Ctrl-C still interrupts), redrawing in place, and puts the terminal back however it
ends. Nothing but the standard library: ``termios`` and ANSI escapes.
"""

from __future__ import annotations

import os
import termios
import tty
from dataclasses import dataclass

UP = ("\x1b[A", "\x1bOA", "k")
DOWN = ("\x1b[B", "\x1bOB", "j")
TOGGLE = (" ",)
ACCEPT = ("\r", "\n")
QUIT = ("q", "Q")
KEYS = sorted(UP + DOWN + TOGGLE + ACCEPT + QUIT, key=len, reverse=True)
"""Longest first. A lone Esc means nothing: it could be an arrow's first byte read early."""


@dataclass
class Item:
    text: str
    pickable: bool
    picked: bool = False


class Picker:
    def __init__(self, title: str, items: list[Item]) -> None:
        self.title = title
        self.items = items
        self.cursor = 0

    def press(self, key: str) -> str | None:
        """Apply one key; ``"accept"`` or ``"quit"`` when it ends the list."""
        if key in UP:
            self.cursor = max(0, self.cursor - 1)
        elif key in DOWN:
            self.cursor = min(len(self.items) - 1, self.cursor + 1)
        elif key in TOGGLE:
            item = self.items[self.cursor]
            item.picked = item.pickable and not item.picked
        elif key in ACCEPT:
            return "accept"
        elif key in QUIT:
            return "quit"
        return None

    def lines(self, width: int) -> list[str]:
        """What the list looks like, each line cut to ``width`` so none wraps."""
        shown = [self.title, ""]
        for index, item in enumerate(self.items):
            box = ("[x]" if item.picked else "[ ]") if item.pickable else "   "
            mark = ">" if index == self.cursor else " "
            shown.append(f"{mark} {box} {item.text}")
        return [text[: max(1, width - 1)] for text in shown]


def split(data: str) -> list[str]:
    """Bytes read from the terminal as keys: escape sequences whole, anything unknown alone."""
    keys = []
    while data:
        key = next((k for k in KEYS if data.startswith(k)), None)
        if key is None and data.startswith("\x1b["):
            # An escape sequence this list has no use for (another arrow, a function key).
            end = next((i for i, c in enumerate(data[2:], 2) if "@" <= c <= "~"), len(data) - 1)
            key = data[: end + 1]
        key = key or data[0]
        keys.append(key)
        data = data[len(key) :]
    return keys


def _width(fd: int) -> int:
    """The terminal's own width, asked each time (it may have been resized): not ``$COLUMNS``,
    which a parent process may have set for a terminal of another size."""
    try:
        return os.get_terminal_size(fd).columns or 80
    except OSError:
        return 80


def choose(picker: Picker, fd_in: int, fd_out: int) -> bool:
    """Let the person pick on the terminal at ``fd_in``/``fd_out``; True when they accepted."""
    saved = termios.tcgetattr(fd_in)
    drawn = 0
    try:
        tty.setcbreak(fd_in)
        os.write(fd_out, b"\x1b[?25l")  # no cursor blinking over the list
        while True:
            width = _width(fd_out)
            lines = picker.lines(width)
            up = f"\x1b[{drawn}A" if drawn else ""
            os.write(fd_out, (up + "\r\x1b[J" + "\r\n".join(lines) + "\r\n").encode())
            drawn = len(lines)
            data = os.read(fd_in, 64)
            if not data:
                return False
            for key in split(data.decode(errors="replace")):
                ended = picker.press(key)
                if ended:
                    return ended == "accept"
    finally:
        # The list gives way to what happens next: the lines setup prints take its place.
        os.write(fd_out, (f"\x1b[{drawn}A\r\x1b[J" if drawn else "").encode() + b"\x1b[?25h")
        termios.tcsetattr(fd_in, termios.TCSADRAIN, saved)
