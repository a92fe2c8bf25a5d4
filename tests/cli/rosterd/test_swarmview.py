"""What ``list``, ``watch`` and ``changes`` print with ``--swarm`` or ``--node N``, and when
they refuse: the node header lines, the stale marking, exit 3 for an unreachable named node."""

from __future__ import annotations

import re

import pytest

from roost.base.errors import UsageError
from roost.faces.cli.rosterd import printing, swarmview
from roost.faces.cli.rosterd.options import parse

NOW = 1_796_000_000.0
USAGE = "usage: rosterd list [--json] [--swarm | --node N]"


def record(
    node: str, pid: int, activity: str, liveness: str = "live", state: str | None = None
) -> dict[str, object]:
    """A record as a node sends it; one from an older node has no ``state``."""
    return {
        "node": node,
        "node_id": f"{node}-id",
        "session_key": f"{node}-id:{pid}:1",
        "name": f"s{pid}",
        "harness": "claude",
        "activity": activity,
        "liveness": liveness,
        **({"state": state} if state else {}),
        "started_at": "2026-12-01T00:00:00+00:00",
        "lane": "headless",
        "pid": pid,
    }


UNION = {
    "nodes": [
        {"node": "gibson", "node_id": "gibson-id", "peer_state": "local", "peer_age_ms": 0},
        {"node": "arch", "node_id": "arch-id", "peer_state": "unreachable", "peer_age_ms": 41_500},
    ],
    "records": [
        record("gibson", 1, "active"),
        record("gibson", 2, "needs_attention"),
        record("gibson", 3, "active"),
        record("arch", 4, "idle", state="done"),
        record("arch", 5, "idle", "suspended"),
    ],
}


def route(*args: str) -> tuple[str, str | None]:
    options = parse(list(args), USAGE, flags=("--json", *swarmview.FLAGS), valued=swarmview.VALUED)
    return swarmview.route(options, "/snapshot", "/swarm/snapshot", USAGE)


def test_the_flags_choose_the_route() -> None:
    assert route() == ("/snapshot", None)
    assert route("--swarm") == ("/swarm/snapshot", None)
    assert route("--node", "my box") == ("/swarm/snapshot?node=my%20box", "my box")
    assert swarmview.joined("/swarm/changes?node=a", "since=1:2") == "/swarm/changes?node=a&since=1:2"
    for bad in (["--swarm", "--node", "a"], ["--node="], ["--node"]):
        with pytest.raises(UsageError):
            route(*bad)


def test_the_table_heads_each_node_with_its_counts_and_standing() -> None:
    lines = [text for text, _ in swarmview.table(UNION, NOW)]
    # In the words a person reads; a record without a state (an older node's) by its activity.
    assert re.split(r" {2,}", lines[0]) == ["gibson", "2 working", "1 needs input", "reachable"]
    assert re.split(r" {2,}", lines[1]) == ["arch", "1 done", "1 suspended", "stale 41s"]
    assert lines[2] == ""
    assert [line.split()[0] for line in lines[3:]] == ["s1", "s2", "s3", "s4", "s5"]
    rows = [re.split(r" {2,}", line) for line in lines[3:]]
    assert [row[2] for row in rows] == ["working", "needs input", "working", "done", "suspended"]
    assert [row[5] for row in rows] == ["gibson"] * 3 + ["arch"] * 2


def stale_union() -> dict[str, object]:
    """The union as it serves a lost node's sessions: each record marked with its node's standing."""
    ages = {"gibson-id": ("local", 0), "arch-id": ("unreachable", 41_500)}
    marked = [
        {**r, "peer_state": ages[r["node_id"]][0], "peer_age_ms": ages[r["node_id"]][1]}  # type: ignore[index]
        for r in UNION["records"]
    ]
    return {**UNION, "records": marked}


def test_a_lost_nodes_rows_say_stale_and_are_the_lines_drawn_faint() -> None:
    """The web app dims a node it cannot reach; the table says ``stale`` and its age at the end
    of each of its rows, for a pipe too, and marks exactly those lines to be drawn faint."""
    lines = swarmview.table(stale_union(), NOW)
    assert [faint for _, faint in lines] == [False, False, False, False, False, False, True, True]
    rows = [re.split(r" {2,}", text) for text, _ in lines[3:]]
    assert [row[-1] for row in rows] == ["1", "2", "3", "stale 41s", "stale 41s"]
    assert [len(row) for row in rows] == [7, 7, 7, 8, 8]


def test_faint_is_drawn_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    printing.line("arch-row \x1b]52;c;x\x07", faint=True)
    assert capsys.readouterr().out == "arch-row \\x1b]52;c;x\\x07\n"  # a pipe: the words say it
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    printing.line("arch-row \x1b", faint=True)
    assert capsys.readouterr().out == "\x1b[2march-row \\x1b\x1b[22m\n"
    monkeypatch.setenv("NO_COLOR", "1")
    printing.line("arch-row", faint=True)
    assert capsys.readouterr().out == "arch-row\n"


def test_an_unreachable_named_node_is_said_to_be_stale_and_a_reachable_one_is_not() -> None:
    said = swarmview.stale({"nodes": UNION["nodes"][1:]})
    assert said == "arch is unreachable: its sessions as last heard 41s ago"
    assert swarmview.stale({"nodes": UNION["nodes"][:1]}) is None


def test_a_line_per_swarm_change() -> None:
    said = [
        {"seq": 7, "event": "attention", "node": "gibson", "record": record("gibson", 2, "needs_attention")},
        {"seq": 8, "event": "node", "node": "arch", "peer_state": "unreachable", "peer_age_ms": 12_000},
        {"seq": 9, "event": "node", "node": "arch", "peer_state": "reachable", "peer_age_ms": 0},
        {"seq": 10, "event": "node_left", "node": "arch", "reason": "revoked"},
        {"seq": 10, "event": "snapshot", "node": "gibson", "snapshot": UNION},
    ]
    assert [swarmview.describe(change) for change in said] == [
        "7 attention gibson gibson-id:2:1 s2 needs input",
        "8 node arch stale 12s",
        "9 node arch reachable",
        "10 node_left arch revoked",
        "10 snapshot 5 sessions on 2 nodes",
    ]
