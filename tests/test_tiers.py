"""Each test gets one tier from the fixtures it uses (``tests.tiers``), and collection fails on a
test marked with two, or with less than its fixtures need.

Each case runs pytest as a separate process on a small test file with only the tier plugin
loaded, whose fixtures borrow the names that decide a tier and start nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FIXTURES = """
import pytest

@pytest.fixture
def roost():
    return "a tmux server"

@pytest.fixture
def daemon(roost):
    return "a daemon"

@pytest.fixture
def running(daemon):
    return daemon

@pytest.fixture
def chromium():
    return "a browser"

@pytest.fixture
def agent_bin():
    return "the agent CLIs"
"""

CASES = (
    FIXTURES
    + """
def test_plain():
    pass

def test_pane(roost):
    pass

def test_through_a_fixture_that_needs_the_daemon(running):
    pass

def test_page(chromium, running):
    pass

def test_agent_in_a_page(agent_bin, chromium):
    pass

@pytest.mark.agent
def test_needs_an_agent_no_fixture_names(tmp_path):
    pass
"""
)


def collect(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``pytest --collect-only -q ARGS`` with only the tier plugin, on ``source``; the installed
    plugins are not loaded, which would cost each run seconds."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_case.py").write_text(source)
    plugins = ["-p", "tests.tiers", "-p", "no:cacheprovider"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "--collect-only", "-q", *args, str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def chosen(tmp_path: Path, tier: str) -> list[str]:
    proc = collect(tmp_path, CASES, "-m", tier)
    assert proc.returncode in (0, 5), proc.stdout + proc.stderr
    return [line.split("::")[1] for line in proc.stdout.splitlines() if "::" in line]


def test_a_test_has_the_costliest_tier_its_fixtures_need(tmp_path: Path) -> None:
    assert chosen(tmp_path, "unit") == ["test_plain"]
    assert chosen(tmp_path, "tmux") == ["test_pane"]
    assert chosen(tmp_path, "daemon") == ["test_through_a_fixture_that_needs_the_daemon"]
    assert chosen(tmp_path, "browser") == ["test_page"]
    assert chosen(tmp_path, "agent") == ["test_agent_in_a_page", "test_needs_an_agent_no_fixture_names"]
    assert chosen(tmp_path, "unit or tmux") == ["test_plain", "test_pane"]


def test_two_tiers_on_one_test_fail_collection(tmp_path: Path) -> None:
    proc = collect(
        tmp_path,
        FIXTURES
        + """
pytestmark = pytest.mark.browser

@pytest.mark.agent
def test_both(agent_bin):
    pass
""",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "test_case.py::test_both is marked with 2 tiers (browser, agent); a test has one" in proc.stderr


def test_a_mark_below_what_the_fixtures_need_fails_collection(tmp_path: Path) -> None:
    proc = collect(
        tmp_path,
        FIXTURES
        + """
@pytest.mark.tmux
def test_claims_less(running):
    pass
""",
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "test_case.py::test_claims_less is marked `tmux` but its fixtures make it `daemon`" in proc.stderr
