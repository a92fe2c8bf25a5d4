"""``roost ssh HOST [subcommand…]``: becomes ``ssh -t HOST roost …`` with each argument kept whole.

A fake ``ssh`` first on PATH records the argv it was given; no traffic leaves the machine.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from tests.conftest import Roost

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


def test_bare_ssh_attaches_the_remote_roost(roost: Roost, fake_ssh: Path) -> None:
    proc = roost.run("ssh", "devbox")
    assert proc.returncode == 0, proc.stderr
    assert recorded(fake_ssh) == ["-t", "devbox", "roost"]


def test_a_subcommand_is_forwarded(roost: Roost, fake_ssh: Path) -> None:
    assert roost.run("ssh", "devbox", "new", "api").returncode == 0
    assert recorded(fake_ssh) == ["-t", "devbox", "roost new api"]


def test_remote_arguments_stay_whole_through_the_remote_shell(roost: Roost, fake_ssh: Path) -> None:
    prompt = "run the tests; don't $(touch x)"
    assert roost.run("ssh", "devbox", "send", "api", prompt).returncode == 0
    argv = recorded(fake_ssh)
    assert argv[:2] == ["-t", "devbox"]
    assert shlex.split(argv[2]) == ["roost", "send", "api", prompt]


def test_ssh_s_exit_status_is_roost_s(roost: Roost, fake_ssh: Path) -> None:
    proc = roost.run("ssh", "devbox", "wait-done", "api", env={"SSH_EXIT": "4"})
    assert proc.returncode == 4


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
