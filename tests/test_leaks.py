"""The leak guard (``tests.leakguard``) fails a run that leaves a process behind, and kills it.

Each case runs pytest as a separate process on a small test file, with only the guard loaded:
the subreaper it sets and the processes it kills are that run's, not this one's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import naming

REPO = Path(__file__).resolve().parents[1]


def running(*argv: str) -> list[int]:
    """Processes whose command line holds ``argv`` (the kernel ends each argument with a NUL)."""
    return naming("\0".join(argv).encode())


def run(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """pytest with only the guard loaded (not the installed plugins, which cost each run seconds),
    on ``source`` as ``test_case.py`` in ``tmp_path``; the processes these cases leave on purpose
    get half a second to exit, not the usual grace."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_case.py").write_text(source)
    plugins = ["-p", "tests.leakguard", "-p", "no:cacheprovider"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "ROOST_LEAK_GRACE": "0.5", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_leaked_process_fails_the_test_that_started_it(tmp_path: Path) -> None:
    """A Popen never ended, and a sleep whose shell exited (reparented, as a daemon would be)."""
    proc = run(
        tmp_path,
        """
import subprocess

def test_clean():
    subprocess.run(["true"], check=True)

def test_leaves_a_child():
    subprocess.Popen(["sleep", "7001"])

def test_leaves_an_orphan():
    subprocess.run(["sh", "-c", "sleep 7002 & exit"], check=True)
""",
    )
    assert proc.returncode == 1, proc.stdout
    assert "3 passed, 2 errors" in proc.stdout, proc.stdout
    assert "ERROR at teardown of test_leaves_a_child" in proc.stdout
    assert "test_case.py::test_leaves_a_child left 1 process(es) running (now killed):" in proc.stdout
    assert "test_case.py::test_leaves_an_orphan left 1 process(es) running (now killed):" in proc.stdout
    assert ": sleep 7001\n" in proc.stdout and ": sleep 7002\n" in proc.stdout
    assert running("sleep", "7001") == running("sleep", "7002") == []


def test_a_session_fixture_keeps_its_processes_and_their_exit_status(tmp_path: Path) -> None:
    """What a session fixture started may run until its teardown, and its Popen, not the guard,
    reaps it: an exit status read after the test it ended in is still the real one."""
    proc = run(
        tmp_path,
        """
import subprocess
import time
import pytest

@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen(["sleep", "7003"])
    yield proc
    proc.kill()
    proc.wait()

@pytest.fixture(scope="session")
def job():
    return subprocess.Popen(["sh", "-c", "exit 3"])

def test_one(server, job):
    time.sleep(0.5)
    assert server.poll() is None

def test_two(server, job):
    assert server.poll() is None
    assert job.wait() == 3
""",
    )
    assert proc.returncode == 0, proc.stdout
    assert "2 passed" in proc.stdout and "left running" not in proc.stdout, proc.stdout


def test_what_a_session_fixture_leaves_fails_the_test_that_tore_it_down(tmp_path: Path) -> None:
    proc = run(
        tmp_path,
        """
import subprocess
import pytest

@pytest.fixture(scope="session")
def server():
    return subprocess.Popen(["sleep", "7004"])

def test_one(server):
    assert server.poll() is None
""",
    )
    assert proc.returncode == 1, proc.stdout
    assert "ERROR at teardown of test_one" in proc.stdout
    assert ": sleep 7004  (started by fixture 'server')\n" in proc.stdout
    assert running("sleep", "7004") == []


def test_a_process_left_at_session_end_makes_the_exit_status_a_failure(tmp_path: Path) -> None:
    """Every test passed; a hook started something after the last one."""
    (tmp_path / "conftest.py").write_text(
        """
import subprocess
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish():
    subprocess.Popen(["sleep", "7006"])
"""
    )
    proc = run(tmp_path, "def test_passes():\n    pass\n")
    assert proc.returncode == 1, proc.stdout
    assert "1 passed" in proc.stdout
    assert "the session left 1 process(es) running (now killed):" in proc.stdout
    assert running("sleep", "7006") == []
