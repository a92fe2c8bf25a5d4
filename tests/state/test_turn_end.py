"""How a turn ends lands in one tmux write: no reader can see the turn counted but not how it ended.

``roost wait-done --turn N`` polls the pane's options. Were the ended turn's number written
before its badge, a poll between the two writes would report an errored turn as finished.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from roost.pane.state import panestate
from roost.pane.state import words as w
from roost.pane.tmux.server import Server
from tests.conftest import Roost


class Recording(Server):
    """A real tmux server whose every write is kept, to see which writes went together."""

    def __init__(self, socket: str) -> None:
        super().__init__(socket)
        object.__setattr__(self, "calls", [])

    def run(self, *args: str, **kw):  # type: ignore[override]
        self.calls.append(args)  # type: ignore[attr-defined]
        return super().run(*args, **kw)


@pytest.fixture
def pane(roost: Roost, monkeypatch: pytest.MonkeyPatch) -> tuple[Recording, str]:
    for name, value in roost.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TMUX", raising=False)
    pane_id = roost.start("sleep 300")
    server = Recording(roost.socket)
    p = panestate.read(server, pane_id)
    assert p is not None
    panestate.set_state(server, p, w.WORKING)
    return server, pane_id


ENDINGS: dict[str, tuple[Callable[[Server, object], bool], str]] = {
    "fail_turn": (lambda s, p: panestate.fail_turn(s, p, "the model API failed"), w.ERROR),
    "end_turn": (lambda s, p: panestate.end_turn(s, p, b"the reply"), w.DONE),
    "finish_turn": (panestate.finish_turn, w.DONE),
    "interrupt_turn": (panestate.interrupt_turn, w.DONE),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_turn_number_and_the_badge_are_one_write(pane: tuple[Recording, str], ending: str) -> None:
    server, pane_id = pane
    end, word = ENDINGS[ending]
    p = panestate.read(server, pane_id)
    server.calls.clear()
    end(server, p)
    writes = [call for call in server.calls if "set-option" in call]
    assert len(writes) == 1, writes
    assert w.TURN_DONE in writes[0] and w.STATE in writes[0]
    after = panestate.read(server, pane_id)
    assert (after.opt(w.STATE), after.opt(w.TURN_DONE)) == (word, "1")
