"""``roost ssh`` through a real OpenSSH server: every verb's bytes and exit code as run there.

Debian's ``sshd`` listens on loopback inside the test's own network namespace, with a host key
and a client key the test makes, and ``SetEnv`` gives the remote session the sandbox's roost
(its tmux socket, its XDG folders), so "there" is this test's throwaway tmux server. Each
verb runs twice, directly and through ``roost ssh``: stdout, stderr and the exit code must be
the same bytes.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import BIN, Roost
from tests.daemon.fixture import free_port

SSHD = Path("/usr/sbin/sshd")
PASSED = ("ROOST_SOCKET", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR")
"""The sandbox's environment a remote session gets: its tmux server and its roost folders."""
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sshd runs as root to log in as this user")


def keygen(path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30)


@contextlib.contextmanager
def sshd(roost: Roost, keys: Path, path: str) -> Iterator[str]:
    """An sshd on loopback whose sessions see ``path`` and this sandbox's roost folders; the ssh
    command that reaches it as host ``node``."""
    keys.mkdir(mode=0o700)
    keygen(keys / "host")
    keygen(keys / "client")
    shutil.copy(keys / "client.pub", keys / "authorized_keys")
    port = free_port()
    env = {name: roost.env[name] for name in PASSED}
    env.update(LANG="C.UTF-8", PATH=path, HOME=str(keys))
    setenv = " ".join(shlex.quote(f"{name}={value}") for name, value in env.items())
    (keys / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\n"
        f"AuthorizedKeysFile {keys / 'authorized_keys'}\nPidFile {keys / 'sshd.pid'}\n"
        "UsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\nPrintMotd no\n"
        f"SetEnv {setenv}\n"
    )
    kind, key = (keys / "host.pub").read_text().split()[:2]
    (keys / "known_hosts").write_text(f"[127.0.0.1]:{port} {kind} {key}\n")
    (keys / "config").write_text(
        f"Host node\n  HostName 127.0.0.1\n  Port {port}\n  User root\n"
        f"  IdentityFile {keys / 'client'}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {keys / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        "  BatchMode yes\n  LogLevel ERROR\n"
    )
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation folder
    ssh = ["ssh", "-F", str(keys / "config")]
    with open(keys / "sshd.log", "wb") as log:
        server = subprocess.Popen(
            [str(SSHD), "-D", "-e", "-f", str(keys / "sshd_config")], stdout=subprocess.DEVNULL, stderr=log
        )
    try:
        deadline = time.monotonic() + 10
        while subprocess.run([*ssh, "node", "true"], capture_output=True, timeout=10).returncode:
            assert server.poll() is None and time.monotonic() < deadline, (keys / "sshd.log").read_text()
            time.sleep(0.1)
        yield shlex.join(ssh)
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def host(roost: Roost, tmp_path: Path) -> Iterator[str]:
    """``node``, reached through a real sshd whose sessions run this sandbox's roost."""
    with sshd(roost, tmp_path / "ssh", f"{BIN}:/usr/bin:/bin") as command:
        roost.env["ROOST_SSH_COMMAND"] = command
        yield "node"


def both(roost: Roost, host: str, *args: str) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    here = subprocess.run([str(BIN / "roost"), *args], env=roost.env, capture_output=True, timeout=60)
    there = subprocess.run(
        [str(BIN / "roost"), "ssh", host, *args], env=roost.env, capture_output=True, timeout=60
    )
    return here, there


@pytest.mark.parametrize(
    "args",
    [
        ("status", "--json"),
        ("status",),
        ("ls",),
        ("screen", "work"),
        ("screen", "--json", "work"),
        ("read", "work"),
        ("read", "--json", "work"),
        ("events", "--pane", "%0"),
        ("wait-done", "work", "1"),
        ("send", "nosuch", "hello"),
        ("send", "--json", "nosuch", "hello"),
        ("state", "working"),
        ("frobnicate",),
        ("help",),
    ],
)
def test_a_verb_through_ssh_is_the_verb_run_there(roost: Roost, host: str, args: tuple[str, ...]) -> None:
    roost.start("sh", session="work")
    here, there = both(roost, host, *args)
    assert (there.returncode, there.stdout, there.stderr) == (here.returncode, here.stdout, here.stderr)


def test_a_prompt_with_every_shell_character_arrives_whole(roost: Roost, host: str) -> None:
    pane = roost.start("cat", session="work")
    prompt = 'don\'t $(touch x) `id` \\ "q" * ~ $HOME; exit 7'
    sent = roost.run("ssh", host, "send", "--force", pane, prompt)
    assert sent.returncode == 0, sent.stderr
    roost.wait_screen(pane, prompt)


def test_an_unreachable_host_says_so_with_ssh_s_code(roost: Roost, host: str, tmp_path: Path) -> None:
    config = tmp_path / "elsewhere"
    config.write_text(f"Host gone\n  HostName 127.0.0.1\n  Port {free_port()}\n  BatchMode yes\n")
    proc = roost.run("ssh", "gone", "status", env={"ROOST_SSH_COMMAND": f"ssh -F {config}"})
    assert proc.returncode == 255
    assert "Connection refused" in proc.stderr
    assert proc.stderr.endswith("roost ssh: ssh could not run the command on gone (exit 255; ssh said why)\n")


def test_a_host_without_roost_says_so_with_the_shell_s_code(roost: Roost, tmp_path: Path) -> None:
    with sshd(roost, tmp_path / "ssh", "/usr/bin:/bin") as command:
        proc = roost.run("ssh", "node", "status", env={"ROOST_SSH_COMMAND": command})
    assert proc.returncode == 127
    assert proc.stderr.endswith(
        "roost ssh: node has no roost on its PATH or in ~/.local/bin: install it there first\n"
    ), proc.stderr
