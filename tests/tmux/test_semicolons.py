"""tmux's ``;`` rule: an argument that ends in ``;`` ends a tmux command, so a value passed to
tmux that ends in one must be escaped to mean only itself, on a command line and in control
mode alike (before, ``roost spawn 'semi;' cmd`` failed with "unknown command: -c")."""

from __future__ import annotations

import pytest

from roost.pane.tmux.controlclient import ControlClient
from roost.pane.tmux.server import THEN, Server
from tests.conftest import Roost
from tests.tmux.conftest import new_session, run, server

NAMES = ["semi;", "two;;", "slash\\;", "mid;dle", ";"]


def window_names(roost: Roost) -> list[str]:
    return roost.tmux("list-windows", "-a", "-F", "#{window_name}").splitlines()


@pytest.mark.parametrize("name", NAMES)
def test_spawn_names_a_window_with_what_it_was_given(roost: Roost, name: str) -> None:
    roost.start("sleep 600")
    spawned = roost.run("spawn", name, "sleep", "600")
    assert spawned.returncode == 0, spawned.stderr
    pane = spawned.stdout.strip()
    assert roost.option(pane, "window_name") == name
    assert roost.option(pane, "@roost-name") == name
    assert window_names(roost).count(name) == 1


def test_spawn_of_a_command_that_ends_at_once_works(roost: Roost) -> None:
    roost.start("sleep 600")
    spawned = roost.run("spawn", "semi;", "true")
    assert spawned.returncode == 0, spawned.stderr
    assert spawned.stdout.strip().startswith("%")


@pytest.mark.parametrize("value", ["ends;", ";"])
def test_a_value_ending_in_a_semicolon_is_one_argument(roost: Roost, value: str) -> None:
    """Only ``THEN`` separates commands: a value that is ``;`` itself means ``;``."""
    pane = new_session(roost, "w", "sleep 600")
    tmux = Server(roost.socket)
    tmux.run(
        "set-option", "-p", "-t", pane, "@value", value, THEN, "set-option", "-p", "-t", pane, "@next", "x"
    )
    assert (roost.option(pane, "@value"), roost.option(pane, "@next")) == (value, "x")


def test_a_control_client_passes_a_trailing_semicolon_as_itself(roost: Roost) -> None:
    pane = new_session(roost, "w", "sleep 600")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            for name in NAMES:
                reply = await client.command("set-option", "-p", "-t", pane, "@value", name)
                assert reply.ok
                assert roost.option(pane, "@value") == name

    run(main())


def test_a_pane_id_with_anything_after_its_digits_names_no_pane(roost: Roost) -> None:
    pane = roost.start("cat")
    gone = roost.run("send", f"{pane};", "hello")
    assert gone.returncode == 2, gone.stderr
    assert "can't find pane" in gone.stderr
    assert "hello" not in roost.screen(pane)
