"""Shared fixtures: each test gets its own tmux server, state directories and environment.

Nothing here mocks tmux or roost: tests run the installed ``roost`` command as a separate
process against a throwaway tmux server whose socket lives in the test's temp dir.

Three session-wide rules hold for every test: nothing it starts may outlive it
(``tests.leakguard``); it has one tier, from the fixtures it uses (``tests.tiers``); and a real
agent CLI runs only where no network but loopback exists (``scripts/test`` makes that network
namespace; a test of the ``agent`` tier fails outside one). A tool a tier needs that is missing
(the agent CLIs, Chromium, Node.js) fails the tests that need it, never skips them: each says to
run ``scripts/bootstrap --test``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest

from tests.signals import holds, signal_if

pytest_plugins = ["tests.leakguard", "tests.tiers", "tests.nodes", "tests.worker_network"]

BIN = Path(sys.executable).parent
FAKE_AGENT = Path(__file__).parent / "fakes" / "agent.py"
REPO = Path(__file__).resolve().parents[1]
AGENT_BIN = REPO / ".cache" / "agents" / "node_modules" / ".bin"
BOOTSTRAP = "run `scripts/bootstrap --test` (`make test` does)"
"""What a failure for a missing tool tells the reader to do."""


def examples(full: int) -> int:
    """A property test's example count: ``full`` in ``make test``, the share of it that
    ``ROOST_EXAMPLE_SHARE`` asks for in ``make test-fast`` (a fifth), so the inner loop checks
    the same properties over fewer inputs while the full run keeps every example; at least one."""
    return max(1, round(full * float(os.environ.get("ROOST_EXAMPLE_SHARE", "1"))))


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches what the tests start. A suite started in the background of a script
    (``make test &``, a CI step run with ``&``) inherits SIGINT ignored, as POSIX has an
    asynchronous command's, and every process it starts would inherit that too: the CLI's
    follow verbs then rightly keep ignoring it, and a test that interrupts one as a person
    would waits in vain. A disposition pytest handles itself is reset to the default in
    what it starts."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@cache
def loopback_only() -> bool:
    """Whether this process's network namespace has no interface but ``lo``. Asked of the kernel
    (``if_nameindex``), not /sys/class/net, which shows the namespace sysfs was mounted in."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Some agent CLIs look up outside hosts at start: with a route out, a test of one would
    depend on (and talk to) the internet. Such a test fails, before its fixtures start anything."""
    if item.get_closest_marker("agent") and not loopback_only():
        pytest.fail(
            "tests marked `agent` run real agent CLIs, which must find no network but loopback: "
            "run them through scripts/test (`make test`), which starts pytest in a network "
            "namespace of its own",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def agent_bin() -> Path:
    """The bin directory of the real agent CLIs from npm (Claude Code, Codex), at the versions
    ``scripts/install-test-agents`` pins. Only checked here: the tests' network namespace has no
    registry to install from."""
    proc = subprocess.run(
        [str(REPO / "scripts" / "install-test-agents"), "--check"], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.fail(f"{proc.stderr.strip()}\nthe agent tier needs them: {BOOTSTRAP}", pytrace=False)
    return AGENT_BIN


@dataclass
class Roost:
    """A sandbox: a tmux socket, private XDG dirs and helpers that run roost inside them."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def socket(self) -> str:
        return self.env["ROOST_SOCKET"]

    def run(
        self,
        *args: str,
        input: bytes | str | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``roost ARGS`` as a real process (in ``cwd``, or here); stdout/stderr as text."""
        full_env = {**self.env, **(env or {})}
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(
            [str(BIN / "roost"), *args],
            input=data,
            capture_output=True,
            env=full_env,
            timeout=timeout,
            cwd=cwd,
        )
        return subprocess.CompletedProcess(
            proc.args,
            proc.returncode,
            proc.stdout.decode(errors="replace"),
            proc.stderr.decode(errors="replace"),
        )

    def json(self, *args: str, **kw) -> dict:
        proc = self.run(*args, **kw)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 1, proc.stdout
        return json.loads(lines[0])

    def tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, env=self.env
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"tmux {args}: {proc.stderr}")
        return proc.stdout

    def option(self, pane: str, name: str) -> str:
        return self.tmux("display-message", "-p", "-t", pane, f"#{{{name}}}").rstrip("\n")

    def start(self, command: str | None = None, session: str = "main", window: str | None = None) -> str:
        """Start a session (and the server) through roost itself; returns its ``%N``."""
        args = ["new", "-d", "-s", session]
        if window:
            args += ["-n", window]
        if command:
            args.append(command)
        proc = self.run(*args)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    def window(self, name: str, command: str, session: str = "main") -> str:
        """A new window running ``command``; returns its ``%N``."""
        return self.tmux(
            "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", f"{session}:", "-n", name, command
        ).strip()

    def fake_agent(self, *flags: str) -> str:
        """The command line of the fake agent TUI, for ``start``/``window``."""
        return shlex.join([sys.executable, str(FAKE_AGENT), *flags])

    def screen(self, pane: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", pane)

    def wait_for(self, predicate: Callable[[], object], timeout: float = 10, what: str = "") -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what or predicate}")

    def wait_screen(self, pane: str, text: str, timeout: float = 10) -> None:
        self.wait_for(lambda: text in self.screen(pane), timeout, f"{text!r} on {pane}")


def _foreign(name: str) -> bool:
    """Whether a variable of the environment running the tests stays out of the sandbox's.

    Besides the ones roost and tmux read, the marks of a CI job go: Gemini CLI (through the
    ``is-in-ci`` package) takes ``CI``, ``CONTINUOUS_INTEGRATION`` or any ``CI_*`` for a
    machine with nobody at it, starts non-interactive and exits at once, pane and all. The
    session bus goes too: through it ``systemctl --user`` would reach the real user's service
    manager, whatever the sandbox's ``XDG_RUNTIME_DIR`` says."""
    if name in ("CI", "CONTINUOUS_INTEGRATION", "DBUS_SESSION_BUS_ADDRESS"):
        return True
    return name.startswith(("TMUX", "ROOST_", "XDG_", "CLAUDE_", "CI_"))


@pytest.fixture
def roost(tmp_path: Path) -> Iterator[Roost]:
    with sandbox(tmp_path) as made:
        yield made


@contextlib.contextmanager
def sandbox(root: Path) -> Iterator[Roost]:
    """A sandbox in ``root`` (an empty folder), its tmux server ended on leaving: the ``roost``
    fixture's, and a second one for a test that needs another user's machine beside it."""
    # A unix socket path must fit in 108 bytes; pytest's temp paths can be longer.
    sockdir = tempfile.mkdtemp(prefix="rt", dir="/tmp")
    env = {k: v for k, v in os.environ.items() if not _foreign(k)}
    env.update(
        ROOST_SOCKET=f"{sockdir}/tmux.sock",
        XDG_STATE_HOME=str(root / "state"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_RUNTIME_DIR=str(root / "run"),
        HOME=str(root / "home"),
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        LANG="C.UTF-8",
        SHELL="/bin/sh",
    )
    for d in ("state", "config", "run", "home"):
        (root / d).mkdir(mode=0o700)
    made = Roost(root, env)
    try:
        yield made
    finally:
        subprocess.run(["tmux", "-S", made.socket, "kill-server"], capture_output=True, timeout=10)
        # A kill-server that could not connect (a loaded machine) would leave the server running
        # after its socket is gone: end whatever still names the socket.
        named = made.socket.encode()
        for pid in naming(named):
            signal_if(pid, signal.SIGKILL, lambda pid=pid: holds(pid, named))
        shutil.rmtree(sockdir, ignore_errors=True)


def naming(text: bytes) -> list[int]:
    """Processes whose command line holds ``text``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                    if text in cmdline.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found
