"""``roost ssh HOST [subcommand…]``: becomes ``ssh -T -- HOST 'sh -c … roost …'`` (``-t`` to
attach from a terminal) with each argument kept whole.

A fake ``ssh`` first on PATH records the argv it was given; no traffic leaves the machine.
``test_ssh_openssh.py`` runs the same verbs through a real OpenSSH server.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest

from roost.faces.cli.roost.ssh import REMOTE
from tests.conftest import BIN, Roost

FAKE_SSH = """#!/bin/sh
for arg in "$@"; do printf '%s\\0' "$arg"; done > "$SSH_ARGV"
exit "${SSH_EXIT:-0}"
"""


@pytest.fixture
def fake_ssh(roost: Roost) -> Path:
    bindir = roost.root / "fakebin"
    bindir.mkdir()
    ssh = bindir / "ssh"
    ssh.write_text(FAKE_SSH)
    ssh.chmod(0o755)
    argv = roost.root / "ssh.argv"
    roost.env["PATH"] = f"{bindir}{os.pathsep}{roost.env['PATH']}"
    roost.env["SSH_ARGV"] = str(argv)
    return argv


def recorded(argv: Path) -> list[str]:
    return argv.read_bytes().decode().split("\0")[:-1]


def remote(argv: list[str]) -> list[str]:
    """What the remote shell runs, word by word, once it has parsed the one string ssh sent."""
    assert argv[:2] in (["-T", "--"], ["-t", "--"]), argv
    words = shlex.split(argv[3])
    assert words[:4] == ["sh", "-c", REMOTE, "roost"], words
    return words[4:]


def test_a_verb_runs_with_no_terminal_so_its_bytes_come_through(roost: Roost, fake_ssh: Path) -> None:
    assert roost.run("ssh", "devbox", "status", "--json").returncode == 0
    argv = recorded(fake_ssh)
    assert argv[:3] == ["-T", "--", "devbox"]
    assert remote(argv) == ["status", "--json"]


def test_attaching_from_a_terminal_asks_for_one_there(roost: Roost, fake_ssh: Path) -> None:
    """Under a terminal (``script`` makes one), a bare ``roost ssh`` and ``new`` attach;
    ``new -d`` does not."""
    for args, flag in (([], "-t"), (["new", "api"], "-t"), (["new", "-d", "api"], "-T")):
        line = shlex.join([str(BIN / "roost"), "ssh", "devbox", *args])
        proc = subprocess.run(
            ["script", "-qec", line, "/dev/null"], env=roost.env, capture_output=True, timeout=30
        )
        assert proc.returncode == 0, proc
        argv = recorded(fake_ssh)
        assert argv[0] == flag, (args, argv)
        assert remote(argv) == args


def test_attaching_with_no_terminal_here_asks_for_none_and_lets_the_remote_refuse(
    roost: Roost, fake_ssh: Path
) -> None:
    assert roost.run("ssh", "devbox").returncode == 0
    assert recorded(fake_ssh)[0] == "-T"


def test_remote_arguments_stay_whole_through_the_remote_shell(roost: Roost, fake_ssh: Path) -> None:
    """The string ssh sends is run by a real shell, as the remote login shell would: the
    remote roost receives each argument exactly."""
    prompt = "run the tests; don't $(touch x) `id` \\ \"quoted\" 'single' * ~ $HOME\nline two"
    assert roost.run("ssh", "devbox", "send", "api", prompt).returncode == 0
    argv = recorded(fake_ssh)
    assert remote(argv) == ["send", "api", prompt]
    fake_roost = roost.root / "remotebin" / "roost"
    fake_roost.parent.mkdir()
    fake_roost.write_text(FAKE_SSH)
    fake_roost.chmod(0o755)
    env = {**roost.env, "PATH": f"{fake_roost.parent}{os.pathsep}/usr/bin:/bin", "SSH_ARGV": str(fake_ssh)}
    subprocess.run(["sh", "-c", argv[3]], env=env, check=True, cwd=roost.root, timeout=30)
    assert recorded(fake_ssh) == ["send", "api", prompt]
    assert not (roost.root / "x").exists()


def test_ssh_s_exit_status_is_roost_s(roost: Roost, fake_ssh: Path) -> None:
    proc = roost.run("ssh", "devbox", "wait-done", "api", env={"SSH_EXIT": "4"})
    assert (proc.returncode, proc.stderr) == (4, "")


def test_ssh_failing_is_said_and_its_code_kept(roost: Roost, fake_ssh: Path) -> None:
    proc = roost.run("ssh", "devbox", "status", env={"SSH_EXIT": "255"})
    assert proc.returncode == 255
    assert proc.stderr == "roost ssh: ssh could not run the command on devbox (exit 255; ssh said why)\n"


def test_a_host_without_roost_is_said_and_its_code_kept(roost: Roost, fake_ssh: Path) -> None:
    proc = roost.run("ssh", "devbox", "status", env={"SSH_EXIT": "127"})
    assert proc.returncode == 127
    assert proc.stderr == (
        "roost ssh: devbox has no roost on its PATH or in ~/.local/bin: install it there first\n"
    )


def test_roost_ssh_command_replaces_ssh(roost: Roost, fake_ssh: Path) -> None:
    ssh = str(roost.root / "fakebin" / "ssh")
    command = f"{shlex.quote(ssh)} -F '/etc/my ssh/config' -o BatchMode=yes"
    assert roost.run("ssh", "devbox", "ls", env={"ROOST_SSH_COMMAND": command}).returncode == 0
    argv = recorded(fake_ssh)
    assert argv[:6] == ["-F", "/etc/my ssh/config", "-o", "BatchMode=yes", "-T", "--"]
    assert remote(argv[4:]) == ["ls"]


@pytest.mark.parametrize("args", [(), ("",), ("-oProxyCommand=sh",)])
def test_a_missing_or_dashed_host_is_a_usage_error(
    roost: Roost, fake_ssh: Path, args: tuple[str, ...]
) -> None:
    proc = roost.run("ssh", *args)
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost ssh HOST"), proc.stderr
    assert not fake_ssh.exists()


def test_no_ssh_installed(roost: Roost, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = roost.run("ssh", "devbox", env={"PATH": str(empty)})
    assert proc.returncode == 1
    assert proc.stderr.startswith("roost ssh: can't run ssh"), proc.stderr
