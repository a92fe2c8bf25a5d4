"""``roost restore``: the layout record kept as the server changes, and the sessions, windows,
panes and agents it brings back after the server is gone, with fake programs for agents.

A fake harness (``resumable``, a user manifest with a resume command and a ``resume_env``)
writes how it was started to a log, so a test reads which flags, variables and directory the
restored one got. The server is ended as a reboot ends it (``reboot``): SIGKILL, every pane's
processes with it, no hook run.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import select
import shutil
import signal
import stat
import tempfile
import time
from pathlib import Path

import pytest

from roost.actions.restore import _without, flags_only, resume_argv
from roost.agents.model import Manifest
from roost.pane.state import layout
from tests.cli.roost.layoutrecord import reboot, record, record_file, recorded_panes, wait_recorded
from tests.cli.rosterd.helpers import GENEROUS, session_of
from tests.conftest import BIN, Roost, naming
from tests.contracts.tables import names, table
from tests.daemon import fixture
from tests.daemon.fixture import Daemon
from tests.signals import holds, signal_if

daemon = fixture.daemon  # the real daemon's fixture, for the test of what it sees

FIELDS = {row["command"]: names(row["fields"]) for row in table("`roost --json` documents")}

RESUMABLE = """#!/bin/sh
# A fake agent: says how it was started, who it is, then waits.
session="$FAKE_SESSION"
[ "$1" = "--resume" ] && session="$2"
printf 'argv=%s endpoint=%s cwd=%s\\n' "$*" "${FAKE_ENDPOINT:-}" "$(pwd)" >> "$FAKE_LOG"
roost identify --session "$session" --cwd "$(pwd)" --harness "$(basename "$0")"
while :; do sleep 1; done
"""


@pytest.fixture
def agents(roost: Roost, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two fake harnesses on the sandbox's PATH: ``resumable`` (with a resume command) and
    ``oneshot`` (without), each with a user manifest (which this process reads too), and the
    log both write to."""
    for name in ("XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(name, roost.env[name])
    bin_dir = roost.root / "bin"
    bin_dir.mkdir()
    manifests = roost.root / "config" / "roost" / "agents"
    manifests.mkdir(parents=True)
    for name in ("resumable", "oneshot"):
        program = bin_dir / name
        program.write_text(RESUMABLE)
        program.chmod(0o755)
    (manifests / "resumable.toml").write_text(
        'binaries = ["resumable"]\nresume_command = "resumable --resume {session_id}"\n'
        'resume_env = ["FAKE_ENDPOINT"]\nvalue_flags = ["--model"]\n[hook]\nkind = "none"\n'
    )
    (manifests / "oneshot.toml").write_text('binaries = ["oneshot"]\n[hook]\nkind = "none"\n')
    log = roost.root / "agents.log"
    roost.env.update(PATH=f"{bin_dir}{os.pathsep}{roost.env['PATH']}", FAKE_LOG=str(log))
    return log


def sessions(roost: Roost) -> list[str]:
    return roost.tmux("list-sessions", "-F", "#{session_name}", check=False).split()


def panes(roost: Roost) -> list[list[str]]:
    fields = (
        "session_name",
        "window_index",
        "window_name",
        "pane_index",
        "pane_current_path",
        "@roost-name",
        "pane_left",
        "pane_top",
        "pane_width",
        "pane_height",
    )
    fmt = "\t".join(f"#{{{name}}}" for name in fields)
    return [line.split("\t") for line in roost.tmux("list-panes", "-a", "-F", fmt).splitlines()]


def test_the_record_follows_the_layout_and_is_private(roost: Roost) -> None:
    roost.start("sh", window="first")
    assert roost.run("spawn", "helper", "sh").returncode == 0
    wait_recorded(roost, 2)
    path = Path(record_file(roost))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    roost.wait_for(lambda: [p["name"] for p in recorded_panes(roost)] == [None, "helper"], what="the name")
    # Writing it shows nothing: a run-shell that failed would cover the pane with its words.
    assert roost.tmux("list-panes", "-a", "-F", "#{pane_in_mode}").split() == ["0", "0"]
    roost.tmux("kill-pane", "-t", "main:2")
    wait_recorded(roost, 1)


def test_shells_come_back_in_their_cwd_with_their_names_and_a_second_restore_makes_nothing(
    roost: Roost,
) -> None:
    work = roost.root / "work"
    (work / "sub").mkdir(parents=True)
    roost.run("new", "-d", "-s", "main", "-n", "editor", cwd=work)
    roost.run("spawn", "helper", cwd=work / "sub")
    roost.tmux("split-window", "-d", "-h", "-t", "main:1", "-c", str(work / "sub"))
    roost.tmux("split-window", "-d", "-v", "-t", "main:1.2", "-c", "/")
    roost.run("new", "-d", "-s", "other", cwd=work)
    wait_recorded(roost, 5)
    # A new pane is "tmux" until its shell has exec'd, and an automatic name follows it late.
    roost.wait_for(lambda: "tmux" not in {row[2] for row in panes(roost)}, what="names settled")
    before = panes(roost)
    reboot(roost)

    doc = roost.json("restore", "--json")
    assert list(doc)[2:] == FIELDS["restore"]
    assert all(list(pane) == FIELDS["restore panes[]"] for pane in doc["panes"])
    assert doc["dry_run"] is False and doc["restored"] == 5
    assert [(p["kind"], p["action"], p["restored"], p["reason"]) for p in doc["panes"]] == [
        ("shell", "shell", True, None)
    ] * 5
    assert panes(roost) == before
    assert all(p["pane_id"].startswith("%") for p in doc["panes"])
    again = roost.json("restore", "--json")
    assert again["restored"] == 0
    assert {p["reason"] for p in again["panes"]} == {"this layout was already restored"}
    assert panes(roost) == before


def test_dry_run_shows_the_plan_and_starts_nothing(roost: Roost) -> None:
    roost.start("sh", window="first")
    wait_recorded(roost, 1)
    reboot(roost)
    plain = roost.run("restore", "--dry-run")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.startswith("would restore main:1.1 (first): a shell in ")
    doc = roost.json("restore", "--dry-run", "--json")
    assert doc["dry_run"] is True
    assert [(p["action"], p["restored"], p["pane_id"]) for p in doc["panes"]] == [("shell", False, None)]
    assert sessions(roost) == []
    assert roost.json("restore", "--json")["restored"] == 1


def test_the_default_socket_name_finds_the_record_its_servers_hooks_wrote(roost: Roost) -> None:
    """A default install names the socket ``roost`` (``ROOST_SOCKET`` unset); tmux's hooks name
    it by its path when they rewrite the record. Here tmux keeps its sockets in a throwaway
    directory (``TMUX_TMPDIR``), and the sandbox's own helpers reach the same server by its path."""
    tmpdir = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # a socket path must fit in 108 bytes
    by_name = {"ROOST_SOCKET": "", "TMUX_TMPDIR": tmpdir}
    roost.env["ROOST_SOCKET"] = os.path.join(tmpdir, f"tmux-{os.getuid()}", "roost")
    try:
        assert roost.run("new", "-d", "-s", "main", "-n", "first", env=by_name).returncode == 0
        assert roost.run("spawn", "helper", "sh", env=by_name).returncode == 0
        wait_recorded(roost, 2)
        reboot(roost)
        plan = roost.json("restore", "--dry-run", "--json", env=by_name)
        assert plan["socket"] == "roost" and plan["record"] == record_file(roost)
        doc = roost.json("restore", "--json", env=by_name)
        restored = [(p["window_name"], p["restored"]) for p in doc["panes"]]
        assert restored == [("first", True), ("helper", True)]
        assert sessions(roost) == ["main"]
    finally:
        roost.tmux("kill-server", check=False)
        shutil.rmtree(tmpdir, ignore_errors=True)


def test_restored_panes_get_the_environment_restore_runs_in(roost: Roost) -> None:
    """As any new pane does, even where a server was started again before restoring (keys come
    from this environment, never from the record)."""
    roost.start("sh", session="work")
    wait_recorded(roost, 1)
    reboot(roost)
    roost.start("sh", session="main")  # the server now runs, started without the variable
    doc = roost.json("restore", "--json", env={"ROOST_TEST_KEY": "from-restore"})
    pane = doc["panes"][0]["pane_id"]
    out = roost.root / "key.out"
    roost.tmux("send-keys", "-t", pane, f'echo "$ROOST_TEST_KEY" > {out}.tmp && mv {out}.tmp {out}', "Enter")
    roost.wait_for(out.exists, what="the restored shell to answer")
    assert out.read_text() == "from-restore\n"


def test_refused_while_the_server_runs_its_layout(roost: Roost) -> None:
    roost.start("sh")
    wait_recorded(roost, 1)
    proc = roost.run("restore")
    assert proc.returncode == 1
    assert "still runs the layout it recorded; nothing to restore" in proc.stderr
    assert len(panes(roost)) == 1


def test_a_session_that_runs_again_is_left_and_the_rest_restored(roost: Roost) -> None:
    roost.start("sh", session="main")
    roost.start("sh", session="other")
    wait_recorded(roost, 2)
    reboot(roost)
    roost.start("sh", session="main")  # a person started roost again before restoring
    doc = roost.json("restore", "--json")
    assert [(p["session"], p["restored"], p["reason"]) for p in doc["panes"]] == [
        ("main", False, "session main is running"),
        ("other", True, None),
    ]
    assert sorted(sessions(roost)) == ["main", "other"]


def test_an_agent_resumes_with_its_flags_variables_and_directory(roost: Roost, agents: Path) -> None:
    project = roost.root / "project" / "sub"
    project.mkdir(parents=True)
    command = (
        "FAKE_SESSION=conv-1 FAKE_ENDPOINT=http://127.0.0.1:9/v1 exec resumable --model m1 'fix the bug'"
    )
    roost.run("new", "-d", "-s", "main", "-n", "agent", command, cwd=project)
    wait_recorded(roost, 1, agents=1)
    [agent] = [p["agent"] for p in recorded_panes(roost)]
    assert agent["env"] == {"FAKE_ENDPOINT": "http://127.0.0.1:9/v1"}  # only what the manifest names
    reboot(roost)

    doc = roost.json("restore", "--json")  # FAKE_ENDPOINT is not in restore's own environment
    [pane] = doc["panes"]
    assert (pane["kind"], pane["action"], pane["harness"], pane["session_id"]) == (
        "agent",
        "resume",
        "resumable",
        "conv-1",
    )
    assert pane["command"].endswith("resumable --resume conv-1 --model m1")  # its first prompt stays sent
    assert pane["note"] == "the prompt on its command line is not sent again"
    roost.wait_for(lambda: agents.read_text().count("\n") == 2, what="the resumed agent's line")
    assert agents.read_text().splitlines()[1] == (
        f"argv=--resume conv-1 --model m1 endpoint=http://127.0.0.1:9/v1 cwd={project}"
    )
    status = roost.json("status", "--json")["panes"]
    assert [(p["harness"], p["session_id"], p["cwd"]) for p in status] == [
        ("resumable", "conv-1", str(project))
    ]
    # Restored, resumed again: the record holds its flags once, not a second --resume.
    wait_recorded(roost, 1, agents=1)
    roost.wait_for(
        lambda: recorded_panes(roost)[0]["agent"]["argv"][1:] == ["--resume", "conv-1", "--model", "m1"],
        what="the restored agent's command line in the record",
    )
    assert resume_argv(_manifest("resumable"), "conv-1", recorded_panes(roost)[0]["agent"]["argv"])[1:] == [
        "--resume",
        "conv-1",
        "--model",
        "m1",
    ]


def _manifest(name: str) -> Manifest:
    from roost.agents import manifest

    found = manifest.load(name)
    assert found is not None
    return found


def test_a_harness_without_a_resume_command_comes_back_with_its_command_and_a_note(
    roost: Roost, agents: Path
) -> None:
    roost.start("FAKE_SESSION=one-1 exec oneshot --fast 'do it'", window="agent")
    wait_recorded(roost, 1, agents=1)
    reboot(roost)
    doc = roost.json("restore", "--json")
    [pane] = doc["panes"]
    assert (pane["kind"], pane["action"], pane["restored"]) == ("agent", "start", True)
    assert pane["command"].endswith("oneshot --fast")
    assert pane["note"] == (
        "oneshot has no resume command: started again, as a new conversation; "
        "the prompt on its command line is not sent again"
    )
    roost.wait_for(lambda: agents.read_text().count("\n") == 2, what="the agent started again")
    assert agents.read_text().splitlines()[1].startswith("argv=--fast endpoint= ")


def test_an_agent_that_has_left_its_pane_keeps_what_it_was_started_with(roost: Roost, agents: Path) -> None:
    """Its identity stays on the pane; what the record read of its process stays in the record."""
    roost.start("sh -c 'FAKE_SESSION=conv-3 resumable --model m3; exec sleep 600'", window="agent")
    wait_recorded(roost, 1, agents=1)
    [started] = [p["agent"] for p in recorded_panes(roost)]
    program = str(roost.root / "bin" / "resumable").encode()
    for pid in naming(program):
        signal_if(pid, signal.SIGKILL, lambda pid=pid: holds(pid, program))
    roost.wait_for(lambda: not naming(program), what="the agent gone, its pane still there")
    roost.tmux("rename-window", "-t", "main:1", "renamed")  # a change of layout: a new record
    roost.wait_for(lambda: record(roost)["sessions"][0]["windows"][0]["name"] == "renamed")
    assert [p["agent"] for p in recorded_panes(roost)] == [started]


def test_an_agent_whose_program_is_gone_comes_back_as_a_shell_with_a_note(roost: Roost, agents: Path) -> None:
    roost.start("FAKE_SESSION=conv-2 exec resumable", window="agent")
    wait_recorded(roost, 1, agents=1)
    reboot(roost)
    (roost.root / "bin" / "resumable").unlink()
    [pane] = roost.json("restore", "--json")["panes"]
    assert (pane["kind"], pane["action"], pane["restored"], pane["command"]) == ("agent", "shell", True, None)
    assert pane["note"] == "resumable is not installed here any more: a shell is started in its place"


def test_a_program_that_is_no_agent_comes_back_as_a_shell_with_a_note(roost: Roost) -> None:
    roost.start("sleep 600", window="waiting")
    wait_recorded(roost, 1)
    reboot(roost)
    proc = roost.run("restore")
    assert proc.returncode == 0, proc.stderr
    assert "note: it ran `sleep 600`: a shell is started in its place, not the command" in proc.stdout
    roost.wait_for(lambda: roost.tmux("list-panes", "-a", "-F", "#{pane_current_command}").strip() == "sh")


def test_a_directory_that_is_gone_is_said_and_the_pane_starts_at_home(roost: Roost) -> None:
    gone = roost.root / "gone"
    gone.mkdir()
    roost.run("new", "-d", "-s", "main", cwd=gone)
    wait_recorded(roost, 1)
    reboot(roost)
    gone.rmdir()
    [pane] = roost.json("restore", "--json")["panes"]
    home = roost.env["HOME"]
    assert (pane["restored"], pane["cwd"]) == (True, home)
    assert pane["note"] == f"its directory {gone} is gone: started in {home}"
    roost.wait_for(lambda: roost.tmux("list-panes", "-a", "-F", "#{pane_current_path}").strip() == home)


HOSTILE = {
    "not JSON": b"{not json",
    "a list": b"[]",
    "another schema": json.dumps({"schema": 2}).encode(),
    "a session name with a colon": None,
    "a variable name with =": None,
    "argv not a list": None,
    "a relative cwd": None,
    "deep nesting": b"[" * 100000 + b"]" * 100000,
}


def _hostile(name: str, good: dict) -> bytes:
    doc = json.loads(json.dumps(good))
    pane = doc["sessions"][0]["windows"][0]["panes"][0]
    agent = {"harness": "resumable", "session_id": "s", "argv": ["resumable"], "env": {}, "cwd": "/"}
    if name == "a session name with a colon":
        doc["sessions"][0]["name"] = "evil:1"
    elif name == "a variable name with =":
        pane["agent"] = {**agent, "env": {"LD_PRELOAD=/tmp/x.so FAKE": "1"}}
    elif name == "argv not a list":
        pane["agent"] = {**agent, "argv": "rm -rf /"}
    elif name == "a relative cwd":
        pane["cwd"] = "../../etc"
    return json.dumps(doc).encode()


@pytest.mark.parametrize("case", [*HOSTILE, "a link", "open to others"])
def test_a_corrupt_or_hostile_record_is_refused_and_nothing_is_made(roost: Roost, case: str) -> None:
    roost.start("sh")
    wait_recorded(roost, 1)
    path = Path(record_file(roost))
    good = json.loads(path.read_text())
    reboot(roost)
    if case == "a link":
        elsewhere = roost.root / "elsewhere.json"
        elsewhere.write_text(json.dumps(good))
        elsewhere.chmod(0o600)
        path.unlink()
        path.symlink_to(elsewhere)
    elif case == "open to others":
        path.chmod(0o644)
    else:
        path.write_bytes(HOSTILE[case] or _hostile(case, good))
    proc = roost.run("restore")
    assert proc.returncode == 1
    refusal = "roost restore: the layout record is not usable, so nothing was restored: "
    assert proc.stderr.startswith(f"{refusal}{path}")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert sessions(roost) == []


def test_no_record_is_exit_1_and_a_bad_flag_a_usage_error(roost: Roost) -> None:
    proc = roost.run("restore")
    assert proc.returncode == 1
    assert proc.stderr == f"roost restore: no layout has been recorded for socket '{roost.socket}'\n"
    bad = roost.run("restore", "--now")
    assert (bad.returncode, bad.stderr) == (1, "usage: roost restore [--dry-run] [--json] (unknown --now)\n")


def test_the_resume_words_are_never_given_twice() -> None:
    assert _without(["--resume", "old", "--model", "m"], ["--resume", "{session_id}"]) == ["--model", "m"]
    assert _without(["resume", "old", "-c", "x=1"], ["resume", "{session_id}"]) == ["-c", "x=1"]
    assert _without(["--model", "m"], ["--resume", "{session_id}"]) == ["--model", "m"]


@pytest.mark.parametrize(
    ("args", "flags", "prompt"),
    [
        (["--model", "m", "fix it"], ["--model", "m"], ["fix it"]),
        (["fix it", "--model", "m"], ["--model", "m"], ["fix it"]),
        (["--verbose", "fix it"], ["--verbose"], ["fix it"]),  # a flag it does not list stands alone
        (["--model=m", "fix it"], ["--model=m"], ["fix it"]),
        (["--model", "m", "--", "-x", "y"], ["--model", "m"], ["-x", "y"]),
        (["--model"], ["--model"], []),
    ],
)
def test_a_prompt_on_the_command_line_is_told_from_flags_and_their_values(
    args: list[str], flags: list[str], prompt: list[str], agents: Path
) -> None:
    assert flags_only(_manifest("resumable"), args) == (flags, prompt)


def test_a_new_server_keeps_the_dead_ones_record_as_the_previous(roost: Roost) -> None:
    roost.start("sh", window="before")
    wait_recorded(roost, 1)
    reboot(roost)
    time.sleep(1.1)  # the new server's start_time must differ from the dead one's
    roost.start("sh", session="fresh", window="after")
    roost.wait_for(
        lambda: (record(roost) or {}).get("sessions", [{}])[0].get("name") == "fresh", what="the new record"
    )
    previous = layout.read(record_file(roost, previous=True))
    assert previous is not None and previous["sessions"][0]["windows"][0]["name"] == "before"
    doc = roost.json("restore", "--json")
    assert [(p["session"], p["restored"]) for p in doc["panes"]] == [("main", True)]


def test_with_roost_restore_set_the_first_roost_brings_the_layout_back_then_attaches(roost: Roost) -> None:
    roost.start("sh", window="kept")
    wait_recorded(roost, 1)
    reboot(roost)
    pid, fd = pty.fork()
    if pid == 0:  # the child: bare `roost`, from a terminal
        os.execve(str(BIN / "roost"), ["roost"], {**roost.env, "ROOST_RESTORE": "1", "TERM": "xterm"})
    seen = b""
    try:
        deadline = time.monotonic() + 15
        while not roost.tmux("list-clients", "-F", "#{session_name}", check=False).strip():
            assert time.monotonic() < deadline, seen
            if select.select([fd], [], [], 0.05)[0]:
                seen += os.read(fd, 65536)
        assert roost.tmux("list-clients", "-F", "#{session_name}").split() == ["main"]
        windows = roost.tmux("list-windows", "-a", "-F", "#{session_name}:#{window_name}")
        assert windows.split() == ["main:kept"]
        assert b"restored %0 as main:1.1 (kept): a shell in " in seen
    finally:
        roost.tmux("detach-client", "-s", "main", check=False)
        with contextlib.suppress(OSError):
            while select.select([fd], [], [], 1)[0] and os.read(fd, 65536):
                pass
        os.waitpid(pid, 0)
        os.close(fd)


def test_the_daemon_sees_a_restored_agent_as_it_sees_any_agent(
    roost: Roost, agents: Path, daemon: Daemon
) -> None:
    roost.env["XDG_RUNTIME_DIR"] = str(daemon.runtime)  # where panes find the daemon's sockets
    daemon.start()
    project = roost.root / "project"
    project.mkdir()
    roost.run("new", "-d", "-s", "main", "-n", "agent", "FAKE_SESSION=conv-9 exec resumable", cwd=project)
    wait_recorded(roost, 1, agents=1)
    before = session_of(daemon, roost.tmux("list-panes", "-a", "-F", "#{pane_id}").strip())
    reboot(roost)
    [pane] = roost.json("restore", "--json")["panes"]
    after = daemon.wait_for(  # a new occupant of a new server's pane (which may reuse its %N)
        lambda: daemon.record_where(
            lambda r: (
                (r.get("tmux") or {}).get("pane") == pane["pane_id"]
                and r["session_key"] != before["session_key"]
            )
        ),
        GENEROUS,
        "the restored agent's session",
    )
    fields = ("harness", "session_id", "cwd", "lane", "liveness")
    assert [after[name] for name in fields] == [before[name] for name in fields]
    assert (after["harness"], after["cwd"], after["liveness"]) == ("resumable", str(project), "live")
