"""Cutting a captured screen into the regions detection rules match against.

A rule never matches the whole capture blindly: a permission dialog is at the bottom, a prompt
sits between two horizontal rules, a spinner word lives in the last few lines. Naming the
region keeps a rule from firing on the same words scrolled up in the conversation, and keeps
every agent's manifest in one small vocabulary the engine knows:

=================  ==========================================================================
``screen``         every visible line
``bottom:N``       the last N non-blank lines
``top:N``          the first N non-blank lines
``prompt_box``     the lines between the last two horizontal rules (box-drawing lines,
                   maybe with a label), with a box's side borders taken off
``above_box:N``    the last N non-blank lines above the prompt box's top rule
``box_top``        the prompt box's top rule itself: some agents write their status in it
                   (pi's ``── ⠏ Working ───``)
``after_rule``     the lines below the last horizontal rule (a status or hint line)
``title``          the window title the program set (OSC 0 or 2)
``progress``       the OSC 9;4 progress state: ``none``, ``normal N``, ``error N``,
                   ``indeterminate`` or ``paused N``
=================  ==========================================================================

A region that is not on this screen (no rules drawn, no title known) is absent, which is not
the same as empty: a rule on an absent region does not match, and ``explain`` says why.
Escapes are removed before matching (``capture-pane -e`` keeps colours), but the OSC title
and progress sequences found in a raw capture are kept as the title and progress regions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FIXED = ("screen", "prompt_box", "box_top", "after_rule", "title", "progress")
COUNTED = ("bottom", "top", "above_box")
NAMES = (*FIXED, *(f"{name}:N" for name in COUNTED))

_OSC_TITLE = re.compile(r"\x1b\][02];([^\x07\x1b]*)(?:\x07|\x1b\\)")
_OSC_PROGRESS = re.compile(r"\x1b\]9;4;(\d)(?:;(\d*))?(?:\x07|\x1b\\)")
_ESCAPES = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL|ST
    r"|\x1b[P^_][^\x1b]*\x1b\\"  # DCS, PM, APC ... ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[()*+][0-9A-Za-z]"  # charset designation
    r"|\x1b[@-Z\\-_=>78]"  # two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f]"  # stray control characters
)
_HORIZONTAL = "─━═╌╍┄┅┈┉╴╶╸╺▔▁"
_CORNERS = "╭╮╰╯┌┐└┘├┤┏┓┗┛┣┫╔╗╚╝╠╣"
_SIDES = "│┃║"
_RULE = re.compile(rf"^[{_CORNERS}]?[{_HORIZONTAL}]+(?:[^{_HORIZONTAL}]+[{_HORIZONTAL}]+)?[{_CORNERS}]?$")
_RULE_LENGTH = 8
_COUNTED = re.compile(rf"^({'|'.join(COUNTED)}):([1-9][0-9]*)$")

PROGRESS_WORDS = {0: "none", 1: "normal", 2: "error", 3: "indeterminate", 4: "paused"}
"""OSC 9;4 states by number, as ConEmu defined them and Windows Terminal and others adopted."""


class RegionError(ValueError):
    """A region name a manifest used that the engine does not know."""


def check(spec: str) -> None:
    """Raise RegionError unless ``spec`` names a region, so a manifest typo fails at load time."""
    if spec not in FIXED and not _COUNTED.match(spec):
        raise RegionError(f"unknown region {spec!r}; regions are {', '.join(NAMES)} (N >= 1)")


def strip(text: str) -> str:
    """``text`` without terminal escapes or stray control characters (newlines and tabs stay)."""
    return _ESCAPES.sub("", text)


def osc_title(raw: str) -> str | None:
    """The last window title set in ``raw`` terminal output, or None when it sets none."""
    found = _OSC_TITLE.findall(raw)
    return found[-1] if found else None


def osc_progress(raw: str) -> str | None:
    """The last OSC 9;4 progress state in ``raw`` terminal output as a word, or None."""
    found = _OSC_PROGRESS.findall(raw)
    if not found:
        return None
    state, value = found[-1]
    return progress_word(int(state), int(value) if value else None)


def progress_word(state: int, value: int | None = None) -> str:
    """The progress region's text for OSC 9;4 ``state`` (0-4) and percentage ``value``."""
    word = PROGRESS_WORDS.get(state, "none")
    if word in ("none", "indeterminate") or value is None:
        return word
    return f"{word} {max(0, min(value, 100))}"


def parse_progress(text: str) -> str:
    """A progress given by a person or a caller: a word (``indeterminate``, ``normal 40``) or the
    OSC parameters (``3``, ``1;40``). Raises ValueError for anything else."""
    numbers = {word: number for number, word in PROGRESS_WORDS.items()}
    parts = text.replace(";", " ").split()
    state = parts[0] if parts else ""
    state_number = numbers.get(state, int(state) if state.isdigit() else -1)
    value = parts[1] if len(parts) == 2 else None
    if state_number not in PROGRESS_WORDS or len(parts) > 2 or (value is not None and not value.isdigit()):
        words = ", ".join(PROGRESS_WORDS.values())
        raise ValueError(f"progress must be one of {words} (and a percentage) or 0-4, got {text!r}")
    return progress_word(state_number, int(value) if value is not None else None)


def is_rule(line: str) -> bool:
    """Whether ``line`` is a horizontal rule drawn with box-drawing characters: a run of them,
    maybe in box corners, maybe with one label inside (``╰──── model · mode ─╯``)."""
    drawn = line.strip()
    return bool(_RULE.match(drawn)) and sum(drawn.count(c) for c in _HORIZONTAL) >= _RULE_LENGTH


def _unbox(line: str) -> str:
    """A prompt box's line without its side borders: ``│ > hi   │`` is ``> hi``."""
    inner = line.strip()
    if inner[:1] in _SIDES:
        inner = inner[1:]
    if inner[-1:] in _SIDES:
        inner = inner[:-1]
    return inner.strip()


def _non_blank(lines: list[str]) -> list[str]:
    return [line for line in lines if line.strip()]


@dataclass
class Screen:
    """One capture, its title and progress, with each region cut at most once."""

    lines: tuple[str, ...]
    title: str | None = None
    progress: str | None = None
    _cut: dict[str, str | None] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def parse(cls, capture: str, title: str | None = None, progress: str | None = None) -> Screen:
        """A screen from ``capture-pane -p`` text, with or without ``-e`` escapes. A title or
        progress given here wins over one found as an OSC sequence inside the capture."""
        text = capture.replace("\r\n", "\n").replace("\r", "\n")
        lines = tuple(line.rstrip() for line in strip(text).split("\n"))
        while lines and not lines[-1]:
            lines = lines[:-1]
        return cls(
            lines,
            title if title is not None else osc_title(text),
            progress if progress is not None else osc_progress(text),
        )

    def region(self, spec: str) -> str | None:
        """The text of region ``spec`` (see the module docstring), or None when it is absent."""
        if spec not in self._cut:
            self._cut[spec] = self._region(spec)
        return self._cut[spec]

    def _rules(self) -> list[int]:
        return [index for index, line in enumerate(self.lines) if is_rule(line)]

    def _region(self, spec: str) -> str | None:
        check(spec)
        if spec == "title":
            return self.title
        if spec == "progress":
            return self.progress
        if spec == "screen":
            return "\n".join(self.lines)
        rules = self._rules()
        if spec == "after_rule":
            return "\n".join(self.lines[rules[-1] + 1 :]) if rules else None
        if spec == "box_top":
            return self.lines[rules[-2]] if len(rules) >= 2 else None
        if spec == "prompt_box":
            if len(rules) < 2:
                return None
            return "\n".join(_unbox(line) for line in self.lines[rules[-2] + 1 : rules[-1]])
        name, count = spec.split(":")
        if name == "above_box":
            if len(rules) < 2:
                return None
            return "\n".join(_non_blank(list(self.lines[: rules[-2]]))[-int(count) :])
        kept = _non_blank(list(self.lines))
        return "\n".join(kept[-int(count) :] if name == "bottom" else kept[: int(count)])
