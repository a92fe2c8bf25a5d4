"""Every pane roost opens carries ``ROOST_SESSION_ID`` (its own, also in ``@roost-pane-session``)
and ``ROOST_REPORTS`` (the daemon's reports socket); panes opened by plain tmux carry no id.

Each pane's program writes its environment to a file, as an integration would see it (a
pane's /proc environ can still be tmux's own for a moment, before the program is exec'd).
"""

from __future__ import annotations

import os
import shlex

from roost.base import paths
from roost.pane.state import newpane
from tests.conftest import Roost


def dumping(roost: Roost, name: str) -> str:
    """A command line that writes its environment to a file named ``name``, then stays."""
    path = roost.root / f"{name}.env"
    return f"sh -c {shlex.quote(f'env -0 > {path}.tmp; mv {path}.tmp {path}; exec sleep 600')}"


def environ(roost: Roost, name: str) -> dict[str, str]:
    path = roost.root / f"{name}.env"
    roost.wait_for(path.exists, 15, f"{name}'s environment")
    pairs = [item.decode().partition("=") for item in path.read_bytes().split(b"\0") if item]
    return {key: value for key, _, value in pairs}


def expected_endpoint(roost: Roost) -> str:
    return str(roost.root / "run" / "roost" / "reports.sock")


def test_new_spawn_split_and_view_give_each_pane_its_own_id_and_the_endpoint(roost: Roost) -> None:
    opened = {"new": roost.start(dumping(roost, "new"), session="work")}
    for name, args in (
        ("spawn", ("spawn", "api")),
        ("split", ("split", "-t", opened["new"])),
        ("view", ("view", "-n", "look")),
        ("session", ("spawn", "other")),  # no session "main" yet: new_session, not new-window
    ):
        proc = roost.run(*args, dumping(roost, name))
        assert proc.returncode == 0, proc.stderr
        opened[name] = proc.stdout.strip()
    ids = set()
    for name, pane in opened.items():
        env = environ(roost, name)
        assert env[newpane.REPORTS] == expected_endpoint(roost), name
        assert len(env[newpane.SESSION_ID]) == 32, name
        assert roost.option(pane, newpane.PANE_SESSION) == env[newpane.SESSION_ID], name
        ids.add(env[newpane.SESSION_ID])
    assert len(ids) == len(opened)


def test_a_pane_opened_by_plain_tmux_has_no_id_even_when_roost_was_started_with_one(roost: Roost) -> None:
    """The server inherits its starter's environment and new-session -e writes the session's:
    neither may hand one pane's id to the next pane tmux opens by itself."""
    roost.run("new", "-d", "-s", "main", dumping(roost, "first"), env={newpane.SESSION_ID: "outer"})
    roost.run("new", "-d", "-s", "second", dumping(roost, "second"))
    first, second = environ(roost, "first")[newpane.SESSION_ID], environ(roost, "second")[newpane.SESSION_ID]
    assert "outer" not in (first, second) and first != second
    for session in ("main", "second"):
        plain = roost.window(f"plain-{session}", dumping(roost, f"plain-{session}"), session=session)
        env = environ(roost, f"plain-{session}")
        assert newpane.SESSION_ID not in env
        assert env[newpane.REPORTS] == expected_endpoint(roost)  # the session's: harmless without an id
        assert roost.option(plain, newpane.PANE_SESSION) == ""


def test_the_endpoint_is_where_the_daemon_listens(roost: Roost, monkeypatch: object) -> None:
    for name, value in roost.env.items():
        monkeypatch.setenv(name, value)  # type: ignore[attr-defined]
    assert paths.reports_socket_path() == str(paths.reports_socket()) == expected_endpoint(roost)
    assert os.path.basename(paths.reports_socket_path()) == paths.REPORTS_SOCKET
