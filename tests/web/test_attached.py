"""``attached_clients`` counts people: a terminal attached to the session, or a browser viewing
one of its panes; never the daemon's own watcher, which attaches to every session it watches."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from tests.conftest import Roost
from tests.web.conftest import Web
from tests.web.wsclient import Term


def attached(roost: Roost, session: str = "main") -> int:
    doc = roost.json("status", "--json")
    [found] = [s for s in doc["sessions"] if s["name"] == session]
    return int(found["attached_clients"])


def watched(roost: Roost, web: Web, session: str = "main") -> None:
    """Wait until the daemon's watcher is attached to the session (tmux counts it)."""
    roost.wait_for(
        lambda: int(roost.tmux("display-message", "-p", "-t", f"{session}:", "#{session_attached}")) >= 1,
        10,
        "the daemon's watcher to attach",
    )


@pytest.fixture
def terminal(roost: Roost) -> Iterator[str]:
    """Session ``main``, and a person's terminal attached to it: a pane of another tmux server
    running ``tmux attach`` to roost's."""
    roost.start("sleep 600")
    sockdir = tempfile.mkdtemp(prefix="rp", dir="/tmp")
    other = f"{sockdir}/person.sock"
    attach = shlex.join(["env", "-u", "TMUX", "tmux", "-S", roost.socket, "attach", "-t", "main"])
    new = ["tmux", "-S", other, "new", "-d", "-x", "100", "-y", "30", attach]
    subprocess.run(new, check=True, env=roost.env, timeout=10)
    yield other
    subprocess.run(["tmux", "-S", other, "kill-server"], capture_output=True, timeout=10)
    shutil.rmtree(sockdir, ignore_errors=True)


def test_the_daemons_watcher_is_nobody(roost: Roost, web: Web) -> None:
    pane = roost.start("sleep 600")
    watched(roost, web)
    assert attached(roost) == 0
    out = roost.run("ls").stdout
    assert "(attached)" not in out, out
    assert pane


def test_a_person_in_tmux_attach_counts(roost: Roost, web: Web, terminal: str) -> None:
    watched(roost, web)
    roost.wait_for(lambda: attached(roost) == 1, 10, "one attached client")
    assert "main: 1 window (attached)" in roost.run("ls").stdout


def test_a_browser_viewing_a_pane_counts(roost: Roost, web: Web) -> None:
    pane = roost.start("sleep 600")
    watched(roost, web)
    assert attached(roost) == 0
    with Term(web, pane) as term:
        term.pump(5)
        roost.wait_for(lambda: attached(roost) == 1, 10, "the browser's view to count")
    roost.wait_for(lambda: attached(roost) == 0, 10, "the closed view to stop counting")
