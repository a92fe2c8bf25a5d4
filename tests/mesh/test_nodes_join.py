"""Real daemons, each in its own namespaces on a bridge with 100.64 addresses: they join by
invite, learn of each other and of a revocation within one round, listen on their own address
only, and a refused token changes nothing anywhere."""

from __future__ import annotations

import json
import time
from pathlib import Path

from roost.remote.swarm import invites, state
from tests.conftest import REPO
from tests.mesh.swarmnodes import Peer, SwarmNode, make
from tests.nodes import Network

FAKE_TAILSCALE = REPO / "tests" / "fakes" / "tailscale.py"


def names(node: SwarmNode) -> dict[str, dict]:
    return {row["name"]: row for row in node.nodes()["nodes"]}


def test_two_nodes_join_by_invite_and_listen_only_on_their_own_address(
    network: Network, tmp_path: Path
) -> None:
    a, b = make(network, tmp_path, 2)
    for node in (a, b):
        assert sorted(node.listening()) == sorted([node.address, "127.0.0.1:8790", "127.0.0.1:8792"])
    invited = json.loads(a.ok("invite", "--json"))
    assert invited["created"] is True
    joined = json.loads(b.ok("join", a.address, "--token", invited["token"], "--json"))
    assert joined["swarm_id"] == invited["swarm_id"]
    rows = {row["name"]: row for row in joined["nodes"]}
    assert rows["n1"]["reachable"] is True and rows["n2"]["self"] is True
    assert names(a)["n2"]["reachable"] is True
    for node in (a, b):
        assert (node.config_dir / "swarm.json").stat().st_mode & 0o777 == 0o600
        assert sorted(node.listening()) == sorted([node.address, "127.0.0.1:8790", "127.0.0.1:8792"])


def test_three_nodes_join_through_different_admitters_and_a_revocation_reaches_everyone_in_one_round(
    network: Network, tmp_path: Path
) -> None:
    a, b, c = make(network, tmp_path, 3)
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    c.ok("join", b.address, "--token", b.ok("invite", "--ttl", "5").strip())  # b admits c
    for node in (a, b, c):  # a heard of c from b's round, before c's join returned
        assert sorted(names(node)) == ["n1", "n2", "n3"]
    c_id = c.identity().node_id
    assert names(a)["n3"]["reachable"] is True

    revoked = json.loads(a.ok("revoke", c_id, "--json"))
    assert {row["name"]: row["revoked"] for row in revoked["nodes"]} == {"n1": False, "n2": False, "n3": True}
    assert names(b)["n3"]["revoked"] is True  # told in the revoking round: no waiting for the next

    # c was told by a as it revoked it: it says so, and acts as a member no more
    gone = c.nodes()
    assert gone["revoked"]["by"] == a.identity().node_id
    assert [row["name"] for row in gone["nodes"] if row["reachable"]] == []

    # c, on the wire with its own key and certificate, is refused at every door, and told why
    trusted = [a.identity().certificate(), b.identity().certificate()]
    as_c = Peer(c.identity(), c.swarm_key(), trusted)
    for node in (a, b):
        answer = as_c.hello(node.address, {"node_id": c_id}, to=node.identity().node_id)
        assert answer.status_code == 401 and answer.json()["error"] == "refused"
        [record, *_] = answer.json()["revoked"]
        assert (record["node_id"], record["revoked"], record["signer"]) == (c_id, True, a.identity().node_id)
        assert node.nodes()["refused"].get("revoked", 0) >= 1  # this hello, and c's farewell if it came
    # and with no certificate, its signed hello is refused before a header is read
    bare = Peer(c.identity(), c.swarm_key(), trusted)
    bare.context = Peer(None, b"", trusted).context
    answer = bare.hello(b.address, {"node_id": c_id}, to=b.identity().node_id)
    assert (answer.status_code, answer.json()) == (401, {"error": "refused"})
    assert b.nodes()["refused"].get("no_certificate") == 1


def test_a_refused_token_changes_nothing_and_says_why(network: Network, tmp_path: Path) -> None:
    a, b, c = make(network, tmp_path, 3)
    token = a.ok("invite").strip()
    b.ok("join", a.address, "--token", token)
    before = (a.config_dir / "swarm.json").read_bytes()
    swarm = state.load(a.config_dir)
    assert swarm is not None
    admitter = a.identity()
    now = time.time()
    tokens = {
        "used": token,
        "expired": invites.make(swarm.swarm_id, swarm.swarm_key, admitter, a.address, now=now - 7200),
        "forged": token[:-4] + ("0000" if not token.endswith("0000") else "1111"),
        "other_swarm": invites.make("f" * 32, bytes(32), admitter, a.address, now=now),
    }
    said = {}
    for code, bad in tokens.items():
        done = c.rosterd("join", a.address, "--token", bad)
        assert done.returncode == 1, (code, done.stderr)
        assert f"{a.address} refused the invite: " in done.stderr, done.stderr
        assert not (c.config_dir / "swarm.json").exists()
        said[code] = done.stderr
    assert "an invite admits one node" in said["used"]
    assert "has expired" in said["expired"]
    assert "does not match this swarm's key" in said["forged"]
    assert "for another swarm" in said["other_swarm"]
    assert (a.config_dir / "swarm.json").read_bytes() == before

    # a token for a (the key it names) presented to b: b is not the node the invite names
    fresh = a.ok("invite").strip()
    done = c.rosterd("join", b.address, "--token", fresh)
    assert done.returncode == 1 and "is not the one that made this invite" in done.stderr
    # nobody at the address: exit 3, and the token is still good
    done = c.rosterd("join", f"{network_gateway(a)}:8791", "--token", fresh)
    assert done.returncode == 3, done.stderr
    assert "did not answer" in done.stderr
    c.ok("join", a.address, "--token", fresh)

    # and a node that leaves is gone everywhere by its own word, and forgets the swarm
    left = json.loads(c.ok("leave", "--json"))
    assert left["left"] == swarm.swarm_id and left["nodes"] == []
    assert not (c.config_dir / "swarm.json").exists()
    for node in (a, b):
        row = names(node)["n3"]
        assert (row["revoked"], row["left"], row["revoked_by"]) == (True, True, None)


def network_gateway(node: SwarmNode) -> str:
    """The bridge's own address on the nodes' network, where nothing listens."""
    return node.node.address.rsplit(".", 1)[0] + ".1"


def test_listen_tailscale_binds_the_address_tailscale_reports_and_a_renamed_node_keeps_its_id(
    network: Network, tmp_path: Path
) -> None:
    a, b = make(network, tmp_path, 2)
    b.ok("join", a.address, "--token", a.ok("invite").strip())
    status = tmp_path / "status.json"
    status.write_text(
        json.dumps(
            {
                "Self": {"TailscaleIPs": [a.node.address]},
                "Peer": {"k": {"Online": True, "TailscaleIPs": [b.node.address]}},
            }
        )
    )
    (a.root / "bin" / "tailscale").symlink_to(FAKE_TAILSCALE)
    a.stop()
    a.settings = {"node": {"listen": "tailscale"}}
    a.extra_env = {"FAKE_TAILSCALE_STATUS": str(status)}
    a.start()
    assert sorted(a.listening()) == sorted([a.address, "127.0.0.1:8790", "127.0.0.1:8792"])
    assert a.nodes()["discovery"] == "tailscale"
    doctor = json.loads(a.rosterd("doctor", "--json").stdout)
    (row,) = [check for check in doctor["checks"] if check["name"] == "swarm"]
    assert row["outcome"] == "ok" and row["detail"].startswith(f"listens on {a.address} (TLS, members only)")

    b_id = b.identity().node_id
    b.stop()
    b.settings = {"node": {"name": "renamed"}}
    b.start()  # its first round greets a with its newly signed record
    assert a.wait_for(lambda: names(a).get("renamed"), "a learns b's new name")["node_id"] == b_id
    assert "n2" not in names(a)
