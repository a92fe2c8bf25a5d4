"""``rosterd invite | join | revoke | leave | nodes``: each refusal's words and exit code, the
``--json`` fields, and that nothing changes when a call is refused. (Joining across machines
is tests/mesh/test_nodes_join.py's, with daemons in namespaces.)"""

from __future__ import annotations

import json
import time

import pytest

from roost.remote.swarm import invites
from roost.remote.swarm.identity import Identity
from tests.cli.rosterd.helpers import fails, ok, rosterd
from tests.cli.rosterd.sandbox import Machine, machine
from tests.contracts.tables import names, table
from tests.daemon.fixture import Daemon, free_port

__all__ = ["machine"]

DOCUMENTS = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}


def document(start: str) -> list[str]:
    return next(fields for name, fields in DOCUMENTS.items() if name.startswith(start))


NODES = document("nodes (nodes --json")
NODE = DOCUMENTS["nodes nodes[]"]
INVITE = document("invite (invite --json")


def a_token(address: str = "127.0.0.1:1") -> str:
    """A well-formed invite from a swarm no daemon here belongs to."""
    return invites.make("a" * 32, bytes(32), Identity.generate("elsewhere"), address, now=time.time())


NO_DAEMON = [
    (
        ("join", "100.64.0.9:8791", "--token", "bogus"),
        1,
        "rosterd join: the invite is not a token roost made\n",
    ),
    (("join", "100.64.0.9:8791"), 1, "usage: rosterd join ADDRESS --token T [--json]\n"),
    (("invite", "--ttl", "0"), 1, "usage: rosterd invite --ttl MINUTES: 1 to 10080 minutes, not '0'\n"),
    (
        ("invite", "--ttl", "10081"),
        1,
        "usage: rosterd invite --ttl MINUTES: 1 to 10080 minutes, not '10081'\n",
    ),
    (("invite", "--ttl", "ten"), 1, "usage: rosterd invite --ttl MINUTES: 1 to 10080 minutes, not 'ten'\n"),
    (("revoke",), 1, "usage: rosterd revoke NODE_ID [--admitted] [--json]\n"),
    (("leave", "extra"), 1, "usage: rosterd leave [--json]\n"),
    (("nodes", "extra"), 1, "usage: rosterd nodes [--json]\n"),
]


@pytest.mark.parametrize(
    ("args", "code", "said"), NO_DAEMON, ids=lambda v: " ".join(v) if isinstance(v, tuple) else ""
)
def test_a_malformed_call_is_refused_before_the_daemon_is_asked(
    machine: Machine, args: tuple[str, ...], code: int, said: str
) -> None:
    proc = machine.rosterd(*args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (code, "", said)


@pytest.mark.parametrize("verb", ["nodes", "invite", "leave"])
def test_no_daemon_is_exit_2(machine: Machine, verb: str) -> None:
    proc = machine.rosterd(verb)
    assert proc.returncode == 2 and "rosterd" in proc.stderr


def test_with_the_listener_off_nodes_says_why_and_invite_and_join_are_refused(running: Daemon) -> None:
    answer = json.loads(ok(running, "nodes", "--json"))
    assert list(answer) == NODES
    assert (answer["swarm_id"], answer["listen"], answer["nodes"]) == (None, None, [])
    assert answer["listen_off"].startswith("no `tailscale` on PATH and [node] listen names no address")
    said = ok(running, "nodes").decode()
    assert said.startswith(
        f"node {answer['node_id']} ({answer['name']}); in no swarm; listener off (no `tailscale`"
    )
    off = fails(running, 1, "invite")
    assert off.startswith("rosterd invite: the swarm listener is off (no `tailscale` on PATH")
    assert off.endswith("a node joins or admits only where its peers can reach it; see `rosterd doctor`\n")
    assert fails(running, 1, "join", "100.64.0.9:8791", "--token", a_token()).startswith(
        "rosterd join: the swarm listener is off"
    )
    assert fails(running, 1, "leave") == (
        "rosterd leave: this node is in no swarm: `rosterd invite` makes one, `rosterd join` enters one\n"
    )
    assert fails(running, 1, "revoke", "someone").startswith("rosterd revoke: this node is in no swarm")
    assert not (running.config_dir / "swarm.json").exists()


def test_invite_makes_the_swarm_once_and_revoke_refuses_itself_and_strangers(daemon: Daemon) -> None:
    port = free_port()
    daemon.settings = {"node": {"listen": "127.0.0.1", "port": port}}
    daemon.start()
    # an admitter nobody answers for: exit 3, and this node is still in no swarm
    unreachable = fails(daemon, 3, "join", "127.0.0.1:1", "--token", a_token())
    assert unreachable.startswith("rosterd join: 127.0.0.1:1 did not answer: ")
    assert not (daemon.config_dir / "swarm.json").exists()

    first = rosterd(daemon, "invite", "--json")
    made = json.loads(first.stdout)
    assert list(made) == INVITE and made["created"] is True
    assert 3590 <= made["expires_at"] - time.time() <= 3600
    again = rosterd(daemon, "invite", "--ttl", "5")
    token = again.stdout.decode().strip()
    assert again.returncode == 0 and "\n" not in token
    assert "admits one node, until " in again.stderr.decode() and "made swarm" not in again.stderr.decode()
    assert invites.read(token).swarm_id == made["swarm_id"]
    # the line to run on the other machine, its address filled in: the one the token names
    assert made["address"] == invites.read(token).admitter_address
    assert f"  rosterd join {made['address']} --token TOKEN\n" in again.stderr.decode()
    assert (daemon.config_dir / "swarm.json").stat().st_mode & 0o777 == 0o600

    answer = json.loads(ok(daemon, "nodes", "--json"))
    assert answer["listen"] == f"127.0.0.1:{port}" and answer["swarm_id"] == made["swarm_id"]
    (own,) = answer["nodes"]
    assert list(own) == NODE
    assert (own["self"], own["revoked"], own["signer"], own["reachable"]) == (
        True,
        False,
        own["node_id"],
        None,
    )

    before = (daemon.config_dir / "swarm.json").read_bytes()
    assert fails(daemon, 1, "revoke", own["node_id"]) == (
        "rosterd revoke: a node does not revoke itself: `rosterd leave` takes it out of the swarm\n"
    )
    assert fails(daemon, 1, "revoke", "nosuch") == (
        "rosterd revoke: no member nosuch in this swarm (see `rosterd nodes`)\n"
    )
    assert fails(daemon, 1, "join", f"127.0.0.1:{port}", "--token", token).startswith(
        f"rosterd join: this node is already in swarm {made['swarm_id']}: `rosterd leave` first"
    )
    assert (daemon.config_dir / "swarm.json").read_bytes() == before

    left = json.loads(ok(daemon, "leave", "--json"))
    assert left["left"] == made["swarm_id"] and left["swarm_id"] is None
    assert not (daemon.config_dir / "swarm.json").exists()


USER_ERRORS = [
    (("list", "--node", "nosuch"), "rosterd list: no such node in this swarm's union"),
    (("list", "--node", "nosuch", "--json"), "rosterd list: no such node in this swarm's union"),
    (("watch", "--node", "nosuch"), "rosterd watch: no such node in this swarm's union"),
    (("changes", "--node", "nosuch"), "rosterd changes: no such node in this swarm's union"),
    (("revoke", "nosuch"), "rosterd revoke: no member nosuch in this swarm"),
    (("read", "nosuch"), "rosterd read: no session"),
    (("handoff", "nosuch", "--to", "elsewhere"), "rosterd handoff: no session"),
]


def test_a_user_error_in_a_swarm_exits_1_never_the_daemons_2(daemon: Daemon) -> None:
    """The specification keeps 2 for "daemon unreachable": a node, member or session that does
    not exist is the caller's mistake, exit 1, on every verb that names one."""
    daemon.settings = {"node": {"listen": "127.0.0.1", "port": free_port()}}
    daemon.start()
    assert rosterd(daemon, "invite").returncode == 0
    before = (daemon.config_dir / "swarm.json").read_bytes()
    for args, said in USER_ERRORS:
        assert fails(daemon, 1, *args).startswith(said), args
    assert (daemon.config_dir / "swarm.json").read_bytes() == before
