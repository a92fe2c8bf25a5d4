"""Tests leave nothing running: a process a test starts must be gone once the test is over.

A leak is not harmless here: a fake agent that outlives its test is a live session to the
next test's daemon. So pytest makes itself a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``):
what a test starts stays pytest's descendant even when it double-forks (a tmux server) or
outlives its parent (codex's ``app-server``), instead of reparenting to init where no one would
see it. After each test's teardown, every descendant still running (given a few seconds to exit)
is that test's leak, unless a session-, package-, module- or class-scoped fixture started it
during its setup and has not been torn down yet; what such a process starts is kept with it.
A leak is killed and fails the test that left it, as an error at teardown; whatever is left when
the session ends is killed too and makes the run's exit status non-zero.

Being a subreaper makes pytest the parent of every orphan, so it reaps their zombies itself,
between tests only, and only zombies no live fixture holds: a test's own ``subprocess.Popen``
children are waited for by the test while it runs, and are no one's once it is over.

Loaded by ``tests/conftest.py``; ``-p tests.leakguard`` loads it alone (see tests/test_leaks.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import dataclass

import pytest

PR_SET_CHILD_SUBREAPER = 36
GRACE = float(os.environ.get("ROOST_LEAK_GRACE", "5"))
"""Seconds a process may take to exit after the teardown that ended it (a tmux server after
``kill-server``, an agent after SIGTERM) before it counts as left running. Only the guard's own
tests shorten it: they leave processes on purpose, and would wait out every grace."""

Identity = tuple[int, int]
"""A pid and its start time in clock ticks: a pid alone may be reused, the pair names one process."""


@dataclass(frozen=True)
class Proc:
    pid: int
    parent: int
    zombie: bool
    started: int

    @property
    def identity(self) -> Identity:
        return (self.pid, self.started)


def _stat(pid: int) -> tuple[bool, int] | None:
    """Whether ``pid`` is a zombie, and its start time; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0] == b"Z", int(fields[19])


def _children(pid: int) -> list[int]:
    """The children of every thread of ``pid``: an orphan is adopted by one of its reaper's threads."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children", "rb") as listing:
                found += (int(child) for child in listing.read().split())
    return found


def descendants() -> dict[int, Proc]:
    """pytest's descendants by pid. Only pytest's own subtree is read, not all of /proc: this runs
    after every test, on machines where other people's processes far outnumber a test's."""
    found: dict[int, Proc] = {}
    parents = [os.getpid()]
    while parents:
        parent = parents.pop()
        for pid in _children(parent):
            stat = _stat(pid)
            if stat is not None and pid not in found:
                found[pid] = Proc(pid, parent, *stat)
                parents.append(pid)
    return found


def command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip() or "?"
    except OSError:
        return "(gone)"


def kill(proc: Proc) -> None:
    """SIGKILL exactly this incarnation: the pidfd pins the pid while its start time is checked,
    so a pid reused by someone else's process on this shared machine is never signalled."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except ProcessLookupError:
        return
    try:
        if _stat(proc.pid) == (proc.zombie, proc.started):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    finally:
        os.close(pidfd)


class Guard:
    """What runs under pytest, which of it is allowed to, and what was left running."""

    def __init__(self) -> None:
        self.baseline: set[Identity] = set()
        self.kept: dict[object, tuple[str, set[Identity]]] = {}
        self.released: dict[Identity, str] = {}
        self.reports: list[str] = []

    def start(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        # Whatever ran before the first test (pytest started by a shell that had children) is
        # not a test's doing.
        self.baseline = {proc.identity for proc in descendants().values()}

    def keeping(self) -> set[Identity]:
        return self.baseline.union(*(identities for _, identities in self.kept.values()))

    def loose(self, tree: dict[int, Proc]) -> list[Proc]:
        """Running descendants that nothing keeps, neither themselves nor through an ancestor."""
        keep = self.keeping()

        def kept(proc: Proc | None) -> bool:
            while proc is not None:
                if proc.identity in keep:
                    return True
                proc = tree.get(proc.parent)
            return False

        return [proc for proc in tree.values() if not proc.zombie and not kept(proc)]

    def reap(self, tree: dict[int, Proc]) -> None:
        """Collect pytest's exited children, except those a live fixture holds: its Popen waits
        for them itself, and would read a stolen exit status as 0."""
        keep = self.keeping()
        for proc in tree.values():
            if proc.zombie and proc.parent == os.getpid() and proc.identity not in keep:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(proc.pid, os.WNOHANG)

    def settle(self) -> list[Proc]:
        """What nothing keeps and is still running once it has had GRACE seconds to exit."""
        deadline = time.monotonic() + GRACE
        while True:
            tree = descendants()
            self.reap(tree)
            loose = self.loose(tree)
            if not loose or time.monotonic() >= deadline:
                return loose
            time.sleep(0.05)

    def end(self) -> None:
        """Kill what nothing keeps and reap it, over again while a killed parent's children come loose."""
        deadline = time.monotonic() + GRACE
        while time.monotonic() < deadline:
            tree = descendants()
            self.reap(tree)
            loose = self.loose(tree)
            if not loose:
                return
            for proc in loose:
                kill(proc)
            time.sleep(0.05)

    def check(self, who: str) -> str | None:
        """Settle, then kill and describe what ``who`` left running; None when it left nothing."""
        loose = self.settle()
        released, self.released = self.released, {}
        if not loose:
            return None
        lines = [
            f"  pid {proc.pid}: {command_line(proc.pid)}"
            + (f"  (started by fixture {released[proc.identity]!r})" if proc.identity in released else "")
            for proc in loose
        ]
        self.end()
        report = "\n".join([f"{who} left {len(loose)} process(es) running (now killed):", *lines])
        self.reports.append(report)
        return report


GUARD = Guard()


def pytest_configure(config: pytest.Config) -> None:
    GUARD.start()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef):
    """A fixture that outlives the test setting it up may keep what its setup started running."""
    if fixturedef.scope == "function":
        return (yield)
    before = {proc.identity for proc in descendants().values()}
    result = yield
    started = {proc.identity for proc in descendants().values()} - before
    GUARD.kept[fixturedef] = (fixturedef.argname, started)
    return result


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef) -> None:
    """Once the fixture is torn down, what it kept must be gone by the end of this test's teardown."""
    name, identities = GUARD.kept.pop(fixturedef, ("", set()))
    GUARD.released.update(dict.fromkeys(identities, name))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item):
    """Outermost, so the check runs after every fixture's teardown, that of higher scopes too."""
    try:
        result = yield
    finally:
        report = GUARD.check(item.nodeid)
    if report:
        pytest.fail(report, pytrace=False)
    return result


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """After pytest's own last teardown, which is here for an interrupted run's fixtures."""
    GUARD.kept.clear()
    if GUARD.check("the session") and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter) -> None:
    if GUARD.reports:
        terminalreporter.write_sep("=", "processes left running", red=True)
        for report in GUARD.reports:
            terminalreporter.write_line(report)
