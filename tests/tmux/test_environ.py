"""Reading what a new pane would get from the tmux server, and what of the caller's it lacks."""

from __future__ import annotations

from roost.pane.tmux import environ
from roost.pane.tmux.environ import BUDGET, TMUX_OWN
from roost.pane.tmux.server import Server
from tests.conftest import Roost

FUNCTION = "() {  echo one;\n echo two\n}"
"""A bash function exported as bash does it: a value over several lines."""


def test_the_servers_and_a_sessions_environment_are_read_back_exactly(roost: Roost) -> None:
    roost.run("new", "-d", "-s", "main", env={"BASH_FUNC_f%%": FUNCTION, "ROOST_TEST_GONE": "global"})
    roost.tmux("set-environment", "-t", "main", "ROOST_TEST_SESSION", "mine")
    roost.tmux("set-environment", "-t", "main", "-r", "ROOST_TEST_GONE")
    server = Server(roost.socket)
    pane = environ.given(server, "main")
    assert pane is not None
    assert pane["BASH_FUNC_f%%"] == FUNCTION
    assert pane["ROOST_TEST_SESSION"] == "mine" and "ROOST_TEST_GONE" not in pane
    first = environ.given(server, None)
    assert first is not None
    assert first["ROOST_TEST_GONE"] == "global" and "ROOST_TEST_SESSION" not in first


def test_no_server_passes_nothing_since_the_one_started_now_inherits_it_all(roost: Roost) -> None:
    assert environ.callers(Server(roost.socket), None, {"ROOST_TEST_KEY": "x"}) == ({}, [])


def test_only_what_differs_is_passed_less_tmuxs_own_and_within_the_budget() -> None:
    server = {"SAME": "1", "CHANGED": "old", "TERM": "screen"}
    caller = {"SAME": "1", "CHANGED": "new", "ADDED": "2", **dict.fromkeys(TMUX_OWN, "outer")}
    assert environ.differences(caller, server) == ({"CHANGED": "new", "ADDED": "2"}, [])
    big = {"HUGE": "x" * BUDGET, "LARGE": "y" * (BUDGET // 2), "SMALL": "z"}
    passed, left_out = environ.differences(big, {})
    assert passed == {"SMALL": "z", "LARGE": "y" * (BUDGET // 2)} and left_out == ["HUGE"]
