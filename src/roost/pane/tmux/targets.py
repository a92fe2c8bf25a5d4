"""Turning what a user typed (``%N``, ``@N``, ``[SESSION:]WINDOW``, a ``-n`` name) into panes.

Resolution reads every pane once and matches exactly: tmux's own target parser would match
``api`` against a window called ``apiserver``, and an agent sent the wrong prompt is worse
than an error.
"""

from __future__ import annotations

from roost.base.errors import Ambiguous, TargetGone, UsageError
from roost.pane.tmux.panes import Pane, _Value, list_panes
from roost.pane.tmux.server import Server

DEFAULT_SESSION = "main"
NAME_OPTION = "@roost-name"


class Resolved(_Value):
    """The panes a target names; ``single`` is True for a ``%N`` or a ``-n`` pane name.

    Written out rather than a dataclass, as :class:`Pane` is: every verb that names a target
    resolves it, and ``dataclasses`` costs ``screen`` and ``read`` several milliseconds.
    """

    def __init__(self, target: str, panes: list[Pane], single: bool) -> None:
        self.target = target
        self.panes = panes
        self.single = single

    @property
    def pane(self) -> Pane:
        return self.panes[0]


def is_pane_id(text: str) -> bool:
    """Whether ``text`` is a pane id as tmux writes one: ``%`` and decimal digits, nothing
    else. tmux's own target parser is looser (``%1;`` found a pane), so what a caller typed
    is held to this before it names a pane."""
    digits = text[1:]
    return text.startswith("%") and digits.isascii() and digits.isdigit()


def _window_matches(pane: Pane, window: str) -> bool:
    return pane.window_name == window or (window.isdigit() and pane.window_index == int(window))


def _group_windows(panes: list[Pane]) -> list[list[Pane]]:
    windows: dict[str, list[Pane]] = {}
    for p in panes:
        windows.setdefault(p.window_id, []).append(p)
    return list(windows.values())


def resolve(server: Server, target: str, options: tuple[str, ...] = ()) -> Resolved:
    """Resolve ``target`` or raise ``TargetGone`` (exit 2) naming what was not found."""
    if not target:
        raise UsageError(
            "usage: the target is empty: name a pane (%N), a window or a -n name (roost status lists them)"
        )
    wanted = options if NAME_OPTION in options else (*options, NAME_OPTION)
    panes = list_panes(server, wanted)
    if not panes and not server.running():
        raise TargetGone(f"no roost server is running on socket '{server.socket}'")
    if target.startswith("%"):
        found = [p for p in panes if p.id == target] if is_pane_id(target) else []
        if found:
            return Resolved(target, found, True)
        raise TargetGone(f"can't find pane '{target}'")
    if target.startswith("@"):
        found = [p for p in panes if p.window_id == target]
        if found:
            return Resolved(target, found, len(found) == 1)
        raise TargetGone(f"can't find window '{target}'")
    if ":" in target:
        session, _, window = target.partition(":")
        window, _, pane_index = window.partition(".")
        found = [p for p in panes if p.session == session and (not window or _window_matches(p, window))]
        if window and not found:
            raise TargetGone(f"can't find window '{target}'")
        if not found:
            raise TargetGone(f"can't find session '{session}'")
        if not window:
            found = [p for p in found if p.window_index == min(q.window_index for q in found)]
        if pane_index:
            found = [p for p in found if str(p.index) == pane_index]
            if not found:
                raise TargetGone(f"can't find pane '{target}'")
        return _one_window(target, found)
    return _resolve_bare(server, target, panes)


def _one_window(target: str, panes: list[Pane]) -> Resolved:
    windows = _group_windows(panes)
    if len(windows) > 1:
        names = ", ".join(f"{w[0].session}:{w[0].window_index}" for w in windows)
        raise Ambiguous(f"target '{target}' is ambiguous: {names}")
    return Resolved(target, panes, len(panes) == 1)


def _resolve_bare(server: Server, target: str, panes: list[Pane]) -> Resolved:
    here = server.current_pane()
    home = next((p.session for p in panes if p.id == here), DEFAULT_SESSION)
    in_home = [p for p in panes if p.session == home and _window_matches(p, target)]
    if in_home:
        return _one_window(target, in_home)
    named = [p for p in panes if p.options.get(NAME_OPTION) == target]
    if len(named) == 1:
        return Resolved(target, named, True)
    if len(named) > 1:
        ids = ", ".join(p.id for p in named)
        raise Ambiguous(f"target '{target}' is ambiguous: {ids}")
    by_window = [p for p in panes if p.window_name == target]
    if by_window:
        return _one_window(target, by_window)
    raise TargetGone(f"can't find window '{target}'")
