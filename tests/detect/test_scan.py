"""The process scan against real processes: fake agents (scripts named like a known binary),
wrapped agents (``ROOST_AGENT``), agents outside tmux, and the claims a pass produces."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from roost.agents.manifest import load_all
from roost.pane.tmux.server import Server
from roost.truth.detect import identify
from roost.truth.detect.identify import Names
from roost.truth.detect.scan import Observation, PaneSighting, Scanner
from roost.truth.detect.scanclaims import Reporter
from roost.truth.roster import Claim, Roster
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, pid_start_ticks

SLEEPER = f"""#!{sys.executable}
import subprocess, sys, time
if len(sys.argv) > 1:
    subprocess.Popen(sys.argv[1:])
time.sleep(600)
"""


@pytest.fixture
def names() -> Names:
    return Names(load_all().values())


@pytest.fixture
def fakes(tmp_path: Path) -> Path:
    """A directory of fake agents: ``claude`` and ``codex`` are symlinks to a sleeping script,
    and ``gemini`` is a script with no execute bit, for ``python3 gemini``."""
    script = tmp_path / "fakes" / "sleeper.py"
    script.parent.mkdir()
    script.write_text(SLEEPER)
    script.chmod(0o755)
    for name in ("claude", "codex"):
        (script.parent / name).symlink_to(script)
    (script.parent / "gemini").write_text(SLEEPER)
    return script.parent


Start = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def outside() -> Iterator[Start]:
    """Starts a process outside tmux, in a process group of its own, and afterwards kills that
    whole group: a fake claude's nested codex too, not just the claude it runs under."""
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, process_group=0)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)


def scanner(roost: Roost, names: Names) -> Scanner:
    return Scanner(Server(roost.socket), names)


def in_pane(observation: Observation, pane: str) -> PaneSighting | None:
    return next((s for s in observation.panes if s.pane.id == pane), None)


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


# What a process is, by its command line (no processes needed)


@pytest.mark.parametrize(
    ("name", "argv", "agent"),
    [
        ("claude", ["claude", "--resume", "x"], "claude"),
        ("node", ["claude-code"], "claude"),
        ("node", ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js", "exec"], "codex"),
        ("node", ["node", "--no-warnings", "/usr/local/bin/gemini"], "gemini"),
        ("bun", ["bun", "run", "/opt/amp/amp.ts"], "amp"),
        ("deno", ["deno", "run", "-A", "/x/opencode.mjs"], "opencode"),
        ("python3", ["/usr/bin/python3", "-u", "/home/me/bin/pi"], "pi"),
        ("python3.11", ["python3.11", "-m", "droid.cli"], "droid"),
        ("sh", ["sh", "-c", "FOO=1 exec /usr/bin/cursor-agent --x"], "cursor-agent"),
        ("bash", ["bash", "-c", "env A=1 copilot"], "copilot"),
        ("sh", ["sh", "-c", "roost state working; sleep 1"], None),
        ("python3", ["python3", "-c", "import claude"], None),
        ("python3", ["python3", "/x/pytest"], None),
        ("bash", ["bash"], None),
        ("sh", ["sh", "-c", "'unbalanced"], None),
        ("vim", ["vim", "claude.md"], None),
    ],
)
def test_by_command(names: Names, name: str, argv: list[str], agent: str | None) -> None:
    assert identify.by_command(names, name, argv) == agent


def test_by_environment(names: Names) -> None:
    assert identify.by_environment(names, {"ROOST_AGENT": "codex"}) == "codex"
    assert identify.by_environment(names, {"ROOST_AGENT": "not-an-agent"}) is None
    assert identify.by_environment(names, {}) is None


# Real processes in a real tmux server


def test_a_fake_claude_in_a_pane_is_found(roost: Roost, names: Names, fakes: Path) -> None:
    pane = roost.start(str(fakes / "claude"))
    pane_pid = int(roost.option(pane, "pane_pid"))
    sighting = roost.wait_for(lambda: (s := in_pane(scanner(roost, names).observe(), pane)) and s.agent and s)
    assert sighting.agent.harness == "claude"
    assert sighting.root.pid == pane_pid
    assert sighting.agent.process.start_ticks == pid_start_ticks(sighting.agent.process.pid)
    chain = [sighting.agent.process.pid, *(p.pid for p in sighting.agent.ancestors)]
    assert chain[-1] == pane_pid  # the ancestors run up to the pane's own process
    assert sighting.agent.cwd == os.path.realpath(sighting.agent.cwd or "")


def test_a_wrapped_agent_names_itself_with_roost_agent(roost: Roost, names: Names) -> None:
    pane = roost.start("env ROOST_AGENT=codex sleep 600")
    sighting = roost.wait_for(lambda: (s := in_pane(scanner(roost, names).observe(), pane)) and s.agent and s)
    assert sighting.agent.harness == "codex"
    assert Path(f"/proc/{sighting.agent.process.pid}/comm").read_text().strip() == "sleep"
    assert sighting.agent.ancestors[-1].pid == int(roost.option(pane, "pane_pid"))


def test_a_script_run_by_an_interpreter_is_found(roost: Roost, names: Names, fakes: Path) -> None:
    pane = roost.start(f"{sys.executable} {fakes / 'gemini'}")
    sighting = roost.wait_for(lambda: (s := in_pane(scanner(roost, names).observe(), pane)) and s.agent and s)
    assert sighting.agent.harness == "gemini"


def test_a_plain_pane_has_no_agent(roost: Roost, names: Names) -> None:
    pane = roost.start("sleep 600")
    sighting = roost.wait_for(lambda: in_pane(scanner(roost, names).observe(), pane))
    assert sighting.agent is None


def test_a_pane_started_when_psutil_says(roost: Roost, names: Names) -> None:
    """The scan reads ``/proc`` itself; the start time it reports is psutil's ``create_time``."""
    pane = roost.start("sleep 600")
    sighting = roost.wait_for(lambda: in_pane(scanner(roost, names).observe(), pane))
    assert sighting.started_at == psutil.Process(int(roost.option(pane, "pane_pid"))).create_time()


def test_agents_outside_tmux_are_found_topmost_only(
    roost: Roost, names: Names, fakes: Path, outside: Start
) -> None:
    parent = outside(str(fakes / "claude"), str(fakes / "codex"))
    child = roost.wait_for(lambda: children(parent.pid), what="the nested codex")[0]
    observation = scanner(roost, names).observe()
    found = {agent.process.pid: agent for agent in observation.outside}
    assert found[parent.pid].harness == "claude"
    assert child not in found  # a harness under another collapses into it
    assert all(agent.process.pid != os.getpid() for agent in observation.outside)


# Claims from a pass


def test_a_pass_claims_once_and_ends_what_is_gone(
    roost: Roost, names: Names, fakes: Path, outside: Start
) -> None:
    proc = outside(str(fakes / "claude"))
    scan = scanner(roost, names)
    roster = Roster("test", "n0", time.time)
    reporter = Reporter()
    first = [c for c in reporter.claims(scan.observe(), roster) if c.process and c.process.pid == proc.pid]
    assert [(c.source, c.fields["harness"]) for c in first] == [("scan", "claude")]
    for claim in first:
        assert roster.apply(claim).accepted
    again = [c for c in reporter.claims(scan.observe(), roster) if c.process and c.process.pid == proc.pid]
    assert again == []
    proc.kill()
    proc.wait(10)
    gone = [c for c in reporter.claims(scan.observe(), roster) if c.process and c.process.pid == proc.pid]
    assert [(c.source, c.ended) for c in gone] == [("scan", "exit")]


def test_a_badge_that_comes_back_is_claimed_again(roost: Roost, names: Names) -> None:
    """A pane seen unchanged is skipped, but exactly as a fresh look would: a badge that went and
    came back is claimed again, scan claim included."""
    pane = roost.start("sleep 600")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")
    scan, roster, reporter = scanner(roost, names), Roster("test", "n0", time.time), Reporter()

    def sources() -> list[str]:
        root = in_pane(observation := scan.observe(), pane)
        claims = [c for c in reporter.claims(observation, roster) if root and c.process == root.root]
        for claim in claims:
            roster.apply(claim)
        return [c.source for c in claims]

    assert sources() == ["scan", "hook"]
    assert sources() == []
    roost.tmux("set-option", "-p", "-t", pane, "-u", "@roost-state")
    assert sources() == ["hook"]  # idle again
    assert sources() == []
    assert sources() == []
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")
    assert sources() == ["scan", "hook"]
    assert sources() == []


def test_a_badge_read_before_the_roster_last_heard_of_the_pane_is_not_claimed(
    roost: Roost, names: Names
) -> None:
    """A hook stamps its pane and then posts its claim. A pass that read the pane before the
    stamp, but looks at the roster after the claim, holds a badge older than the record: claiming
    it would put the prompt's working back over the dialog the hook opened. It claims nothing
    of the badge and leaves the pane to be read afresh, which then finds the record current."""
    pane = roost.start("sleep 600")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "done")
    scan, roster, reporter = scanner(roost, names), Roster("test", "n0", time.time), Reporter()
    first = scan.observe()
    root = in_pane(first, pane)
    assert root is not None
    for claim in reporter.claims(first, roster):
        roster.apply(claim)
    key = roster.find(root.root)
    assert key is not None and roster.record(key).state == "done"

    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")  # the prompt's hook
    assert roster.apply(Claim("hook", time.time(), process=root.root, activity="working")).accepted
    early = scan.observe()  # reads the pane while it still says working
    roost.tmux("set-option", "-p", "-t", pane, "@roost-reason", "Bash: touch x")
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "blocked")
    asked = {"pending": {"summary": "Bash: touch x"}}
    dialog = Claim(
        "hook", time.time(), process=root.root, activity="blocked", event="PermissionRequest", fields=asked
    )
    assert roster.apply(dialog).accepted
    stale = [c for c in reporter.claims(early, roster) if c.process == root.root]
    assert stale == []  # neither working over the dialog nor anything else of the badge
    assert roster.record(key).state == "blocked"

    fresh = [c for c in reporter.claims(scan.observe(), roster) if c.process == root.root]
    assert fresh == []  # the badge now says what the record says
    roost.tmux("set-option", "-p", "-t", pane, "@roost-state", "working")
    moved = [c for c in reporter.claims(scan.observe(), roster) if c.process == root.root]
    assert [(c.source, c.activity) for c in moved] == [("hook", "working")]  # a later change still lands


# Through the daemon


def test_the_daemon_reports_scanned_agents_and_ends_them(
    roost: Roost, daemon: Daemon, fakes: Path, outside: Start
) -> None:
    in_tmux = roost.start(str(fakes / "claude"))
    wrapped = roost.window("wrapped", "env ROOST_AGENT=codex sleep 600")
    loose = outside(str(fakes / "claude"))
    daemon.start()

    def by_pane(pane: str) -> dict[str, Any] | None:
        return daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane and r["harness"])

    claude = daemon.wait_for(lambda: by_pane(in_tmux), what="claude in a pane")
    codex = daemon.wait_for(lambda: by_pane(wrapped), what="wrapped codex")
    assert (claude["harness"], claude["sources"], claude["lane"]) == ("claude", ["scan"], "interactive")
    assert codex["harness"] == "codex"
    assert Path(f"/proc/{codex['pid']}/comm").read_text().strip() == "sleep"
    free = daemon.wait_for(lambda: daemon.record_where(lambda r: r["pid"] == loose.pid), what="outside agent")
    assert (free["harness"], free["tmux"]) == ("claude", None)
    loose.kill()
    loose.wait(10)
    ended = daemon.wait_for(
        lambda: (r := daemon.get(f"/sessions/{free['session_key']}")) and r["liveness"] == "ended" and r
    )
    assert ended["ended_reason"] == "exit"


def test_an_agent_in_a_named_pane_is_named_by_the_scan_as_a_hook_would(
    roost: Roost, names: Names, fakes: Path
) -> None:
    """No hook installed (a fresh node, an agent with no integration): the session is still
    called what its pane is called, not by its harness or ``[folder]``, on every node that
    holds its record (issue 32: 6, ``rosterd list --swarm`` named each such row ``[/]``)."""
    pane = roost.start(str(fakes / "claude"))
    roost.tmux("set-option", "-p", "-t", pane, "@roost-name", "cl1")
    scan, roster, reporter = scanner(roost, names), Roster("test", "n0", time.time), Reporter()
    sighting = roost.wait_for(lambda: (s := in_pane(scan.observe(), pane)) and s.agent and s)
    claims = [c for c in reporter.claims(scan.observe(), roster) if c.process == sighting.agent.process]
    assert [(c.source, c.fields.get("name")) for c in claims] == [("scan", "cl1")]
    for claim in claims:
        assert roster.apply(claim).accepted
    (record,) = [r for r in roster.records() if r.pid == sighting.agent.process.pid]
    assert (record.name, record.harness) == ("cl1", "claude")
