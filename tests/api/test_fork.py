"""``POST /sessions/{key}/fork`` for a pane: the daemon forks a pane's agent as ``roost fork``
does, from any face (the API, ``rosterd fork``, MCP), and refuses a NAME a session of its
roster has. The fake harnesses are ``tests/cli/roost/test_fork.py``'s."""

from __future__ import annotations

from urllib.parse import quote

from tests.cli.roost.test_fork import Fakes, fakes, status_of
from tests.cli.rosterd.helpers import session_of
from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.mcpserver.client import ok, unix

__all__ = ["fakes"]


def test_the_daemon_forks_a_panes_agent_beside_it(roost: Roost, daemon: Daemon, fakes: Fakes) -> None:
    daemon.start()
    source = fakes.start("forkable", roost.root, "--model", "m1")
    fakes.talk()
    key = session_of(daemon, source)["session_key"]

    with daemon.unix(timeout=60) as client:
        answer = client.post(f"/sessions/{quote(source, safe='')}/fork", json={"name": "idea-b"})
    assert answer.status_code == 201, answer.text
    forked = answer.json()
    assert (forked["lane"], forked["source"], forked["forked_from"], forked["record"]) == (
        "pane",
        source,
        "conv-1",
        None,
    )
    roost.wait_for(lambda: len(fakes.lines()) == 2, what="the fork's start")
    assert fakes.lines()[1] == (
        f"argv=--fork conv-1 --session-id {forked['session_id']} --model m1 "
        f"endpoint=http://fake cwd={roost.root}"
    )
    assert status_of(roost, forked["pane"])["session_id"] == forked["session_id"]

    with daemon.unix() as client:
        named = client.post(f"/sessions/{key}/name", json={"name": "tests: named"})
        assert named.status_code == 200, named.text
        taken = client.post(f"/sessions/{key}/fork", json={"name": "tests: named"})
    assert (taken.status_code, taken.json()["code"]) == (409, "name_taken")

    by_mcp = ok(unix(daemon), "session.fork", name=key, new_name="idea-c")
    assert (by_mcp["lane"], by_mcp["name"]) == ("pane", "idea-c")
    roost.wait_for(lambda: len(fakes.lines()) == 3, what="the second fork's start")
