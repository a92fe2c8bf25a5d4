"""A finished pane a person looks at turns from done ✅ to idle 💤; a control client is no person.

The packaged config's pane-focus-in hook runs ``roost _seen``. rosterd's control-mode watcher
attaches to every session and tmux counts it as focused, so the hook must tell it apart.
"""

from __future__ import annotations

import os
import pty
import subprocess
import time

from tests.cli.roost.inpane import Shell
from tests.conftest import Roost


def finished_pane(roost: Roost) -> str:
    shell = Shell.open(roost)
    shell.run("state", "working")
    shell.run("state", "done")
    assert roost.option(shell.pane, "@roost-state") == "done"
    return shell.pane


def test_a_person_attaching_marks_a_done_pane_seen(roost: Roost) -> None:
    pane = finished_pane(roost)
    leader, follower = pty.openpty()
    client = subprocess.Popen(
        ["tmux", "-S", roost.socket, "attach-session", "-t", "main"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**roost.env, "TERM": "xterm-256color"},
    )
    os.close(follower)
    try:
        roost.wait_for(lambda: roost.option(pane, "@roost-state") == "idle", 10, "the badge to turn idle")
    finally:
        client.terminate()
        client.wait(timeout=10)
        os.close(leader)


def test_a_control_client_attaching_is_not_a_look(roost: Roost) -> None:
    pane = finished_pane(roost)
    client = subprocess.Popen(
        ["tmux", "-S", roost.socket, "-C", "attach-session", "-t", "main"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=roost.env,
    )
    try:
        roost.wait_for(lambda: "1" in roost.tmux("list-clients", "-F", "#{client_control_mode}"), 10)
        time.sleep(1.0)  # the hook runs in the background; give it time to misfire
        assert roost.option(pane, "@roost-state") == "done"
    finally:
        client.terminate()
        client.wait(timeout=10)
