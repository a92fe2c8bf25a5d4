"""``rosterd list|status|read|explain``: the human output, --json byte for byte, and KEY.

KEY is an exact session key, a pid on this node or a unique display name; an unknown KEY and
an ambiguous name are user errors (exit 1), the ambiguous one listing its candidates.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import BinaryIO

from roost.agents import manifest
from tests.api.helpers import about, key_of, sleeper
from tests.cli.rosterd.helpers import badged, body, fails, ok, rosterd, same_as_api, session_of
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon


def columns(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def named(roost: Roost, daemon: Daemon, word: str, label: str) -> dict:
    """A badged session carrying the display name ``label``."""
    pane = badged(roost, word, session=label)
    key = session_of(daemon, pane)["session_key"]
    ok(daemon, "name", key, label)
    return daemon.wait_for(lambda: (r := session_of(daemon, pane))["name"] == label and r)


def test_list_json_is_the_snapshot_body_and_the_table_has_one_row_per_session(
    roost: Roost, running: Daemon
) -> None:
    working = named(roost, running, "working", "alpha")
    blocked = badged(roost, "blocked", session="bravo")
    blocked_record = session_of(running, blocked)
    printed = same_as_api(running, "/snapshot", "list", "--json")
    keys = [r["session_key"] for r in json.loads(printed)["records"]]
    assert working["session_key"] in keys and blocked_record["session_key"] in keys

    table = ok(running, "list").decode().splitlines()
    assert len(table) == len(keys)
    rows = {columns(line)[-1]: columns(line) for line in table}
    name, harness, state, age, lane, node, _ = rows[str(working["pid"])]
    assert (name, harness, state, lane, node) == ("alpha", "-", "working", "interactive", working["node"])
    assert re.fullmatch(r"\d+[smhd]", age), age
    unnamed = rows[str(blocked_record["pid"])]
    assert unnamed[0] == "[?]"  # no name and no cwd known: the [cwd basename] has nothing to show
    assert unnamed[2] == "needs input"  # the record says needs_attention: the table says it for people


def test_an_empty_roster_says_so_on_a_terminal_and_is_no_line_at_all_to_a_pipe(
    roost: Roost, daemon: Daemon
) -> None:
    """The table has no header (as the specification draws it), so with no session a pipe gets
    nothing and a person at a terminal one line. Every agent on this machine would be a session
    of the daemon's scan: the sandbox's manifests name binaries that no process has."""
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    for name in manifest.load_all():
        (agents / f"{name}.toml").write_text(f'binaries = ["no-such-{name}"]\naliases = []\n')
    daemon.start()
    assert json.loads(ok(daemon, "list", "--json"))["records"] == []
    assert ok(daemon, "list") == b""
    mine, theirs = os.openpty()
    with os.fdopen(mine, "rb", buffering=0) as terminal:
        proc = subprocess.run(
            [str(BIN / "rosterd"), "list"], stdout=theirs, stderr=subprocess.PIPE, env=daemon.env, timeout=60
        )
        os.close(theirs)
        assert proc.returncode == 0, proc.stderr
        assert shown(terminal) == (
            b"no agent sessions (plain shells are not listed: roost status shows every pane)\r\n"
        )


def shown(terminal: BinaryIO) -> bytes:
    """What a terminal was shown, once nothing holds it open: its master reads EIO at the end."""
    data = b""
    try:
        while chunk := terminal.read(4096):
            data += chunk
    except OSError:
        pass
    return data


def test_status_json_is_the_status_body_and_the_human_form_names_the_node(running: Daemon) -> None:
    printed = same_as_api(running, "/status", "status", "--json")
    doc = json.loads(printed)
    text = ok(running, "status").decode()
    assert re.search(rf"^node\s+{re.escape(doc['node'])} \({doc['node_id']}\)$", text, re.M), text
    assert re.search(rf"^epoch\s+{doc['status_epoch']}, seq \d+$", text, re.M), text
    assert re.search(
        rf"^listen\s+unix {re.escape(str(running.socket))} and loopback 127\.0\.0\.1:", text, re.M
    )
    assert re.search(r"^sessions\s+0; 0 ended$", text, re.M), text


def test_status_counts_the_sessions_by_state_in_the_words_a_person_reads(
    roost: Roost, running: Daemon
) -> None:
    for session, state in (("a", "working"), ("b", "blocked"), ("c", "done"), ("d", "done")):
        pane = badged(roost, state, session=session)
        running.wait_for(lambda pane=pane, state=state: session_of(running, pane)["state"] == state)
    text = ok(running, "status").decode()
    assert re.search(r"^sessions\s+4: 1 working, 1 needs input, 2 done; 0 ended$", text, re.M), text


def test_read_finds_a_session_by_key_pid_and_unique_name(roost: Roost, running: Daemon) -> None:
    record = named(roost, running, "blocked", "charlie")
    key = record["session_key"]
    path = f"/sessions/{key}"
    for spelling in (key, str(record["pid"]), "charlie"):
        printed = same_as_api(running, path, "read", spelling, "--json")
        assert json.loads(printed)["session_key"] == key
    text = ok(running, "read", "charlie").decode()
    assert re.search(rf"^session_key\s+{re.escape(key)}$", text, re.M), text
    assert re.search(r"^activity\s+needs_attention$", text, re.M), text
    assert re.search(r'^tmux\s+\{"socket": ', text, re.M), text
    assert not re.search(r"^recap\s", text, re.M)  # null fields are left out


def test_explain_finds_a_session_by_key_pid_and_unique_name(roost: Roost, running: Daemon) -> None:
    record = named(roost, running, "working", "delta")
    key = record["session_key"]
    for spelling in (key, str(record["pid"]), "delta"):
        printed = same_as_api(running, f"/sessions/{key}/explain", "explain", spelling, "--json")
        assert json.loads(printed)["session_key"] == key
    text = ok(running, "explain", "delta").decode()
    assert re.search(rf"^session\s+{re.escape(key)}$", text, re.M), text
    assert re.search(r"^sources\s+launcher, hook, scan$", text, re.M), text
    assert re.search(r"^  activity\s+hook event working activity working at \S+Z$", text, re.M), text
    assert re.search(r"^  name\s+launcher at \S+Z$", text, re.M), text


def test_an_unknown_key_is_a_user_error(running: Daemon) -> None:
    for verb in ("read", "explain"):
        for args in (["nope"], ["nope", "--json"], ["999999999"]):
            stderr = fails(running, 1, verb, *args)
            assert stderr == f"rosterd {verb}: no session '{args[0]}'\n"


def test_a_verb_that_acts_finds_its_key_before_it_reads_what_it_was_given(running: Daemon) -> None:
    """A prompt to a name nothing has is "no session", as a read is: the daemon finds the
    session before it asks for the body its lane takes (a pane's pins, a headless prompt's
    text), so nobody is told that a pin is missing for a session that does not exist."""
    for verb, args in (
        ("prompt", ["no-such-name", "hi"]),
        ("cancel", ["no-such-name"]),
        ("allow", ["no-such-name"]),
    ):
        assert fails(running, 1, verb, *args) == f"rosterd {verb}: no session 'no-such-name'\n"


def test_an_ambiguous_name_lists_the_candidates_and_never_guesses(roost: Roost, running: Daemon) -> None:
    first = named(roost, running, "working", "twin")
    pane = badged(roost, "idle", session="other")
    second = session_of(running, pane)["session_key"]
    ok(running, "name", second, "twin")
    for verb in ("read", "explain"):
        stderr = fails(running, 1, verb, "twin", "--json")
        head, *candidates = stderr.splitlines()
        assert head == f"rosterd {verb}: the name 'twin' is ambiguous; it could be any of:"
        assert sorted(c.strip() for c in candidates) == sorted([first["session_key"], second])
    fails(running, 1, "name", "twin", "triplet")


def test_a_name_with_spaces_and_colons_reaches_the_daemon_intact(roost: Roost, running: Daemon) -> None:
    label = "api: swarm changes #2 ?x=1"
    record = named(roost, running, "working", label)
    printed = ok(running, "read", label, "--json")
    assert printed == body(running, f"/sessions/{record['session_key']}") + b"\n"


def test_usage_errors_exit_1_before_any_daemon_is_asked(daemon: Daemon) -> None:
    """Not started: a usage error must not even try the socket (that would be exit 2)."""
    calls = [
        ("list", "extra"),
        ("list", "--bogus"),
        ("status", "extra"),
        ("read",),
        ("read", "a", "b"),
        ("explain",),
        ("explain", "--bogus", "KEY"),
        ("name", "KEY"),
        ("name", "KEY", "LABEL", "--clear"),
        ("name", "--clear"),
        ("changes", "--since"),
        ("changes", "--since="),
        ("changes", "KEY"),
        ("watch", "extra"),
        ("version", "extra"),
        ("doctor", "extra"),
        ("daemon", "--bogus"),
    ]
    for args in calls:
        stderr = fails(daemon, 1, *args)
        assert stderr.startswith(f"usage: rosterd {args[0]}"), (args, stderr)
    assert fails(daemon, 1, "bogus") == "usage: rosterd: unknown command 'bogus' (see rosterd help)\n"


def test_version_and_its_json(daemon: Daemon) -> None:
    from roost import __version__

    assert ok(daemon, "version") == f"rosterd {__version__}\n".encode()
    doc = json.loads(ok(daemon, "version", "--json"))
    assert doc == {"schema": 1, "command": "version", "version": __version__}


def test_help_lists_every_verb(daemon: Daemon) -> None:
    text = ok(daemon, "help").decode()
    for verb in (
        "list",
        "watch",
        "changes",
        "status",
        "read",
        "explain",
        "name",
        "daemon",
        "doctor",
        "version",
    ):
        assert re.search(rf"^rosterd {verb}\b", text, re.M), verb
    assert rosterd(daemon, "help").returncode == 0


def test_explain_shows_shadowed_values_last_seqs_and_refused_claims(running: Daemon) -> None:
    with sleeper() as proc, running.unix() as api:
        assert (
            api.post("/claim", json=about(proc, activity="working", event="prompt", seq=3)).status_code == 200
        )
        api.post(
            "/claim", json=about(proc, source="scan", activity="idle")
        )  # loses to hook: kept as shadowed
        assert (
            api.post("/claim", json=about(proc, activity="idle", event="turn_end", seq=2)).status_code == 409
        )
        key = key_of(running.get("/status")["node_id"], proc)
        same_as_api(running, f"/sessions/{key}/explain", "explain", key, "--json")
        text = ok(running, "explain", str(proc.pid)).decode()
    assert re.search(r"^shadowed:\n  activity\s+scan activity idle at \S+Z$", text, re.M), text
    assert re.search(r"^last seq:\n  hook\s+3$", text, re.M), text
    assert re.search(
        r"^refused:\n  activity\s+activity: hook set it, which outranks scan \(scan ", text, re.M
    )
    assert re.search(
        r"^  -\s+out of order: hook seq 2 is older than 3 \(hook seq 2 event turn_end ", text, re.M
    )


def test_list_shows_an_ended_session_as_ended_without_a_pid(roost: Roost, running: Daemon) -> None:
    roost.start("sleep 600", session="keep")  # the tmux server outlives the pane
    record = named(roost, running, "working", "oscar")
    roost.tmux("kill-pane", "-t", record["tmux"]["pane"])
    running.wait_for(lambda: running.get(f"/sessions/{record['session_key']}")["liveness"] == "ended")
    rows = [columns(line) for line in ok(running, "list").decode().splitlines()]
    [row] = [r for r in rows if r[0] == "oscar"]
    assert (row[2], row[-1]) == ("ended", "-")
