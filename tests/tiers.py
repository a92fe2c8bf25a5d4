"""Every test has exactly one tier, so a run can choose by cost: ``-m "unit or tmux"`` is the inner
loop (``make test-fast``), and ``make test`` runs them all.

| tier | what the test starts | decided by the fixture |
|---|---|---|
| ``unit`` | no tmux server, daemon, browser or agent | (none below) |
| ``tmux`` | a throwaway tmux server | ``roost`` |
| ``daemon`` | a real ``rosterd`` daemon, or nodes in namespaces of their own | ``daemon``, ``network`` |
| ``browser`` | Chromium, through Playwright | ``chromium`` |
| ``agent`` | a real agent CLI from npm (Claude Code, Codex, Copilot, pi, OpenCode, Gemini) | ``agent_bin`` |

A test's tier is the costliest its fixtures (with what they depend on) call for, so a new test
is marked by what it uses, with nothing to remember. A test may also say its tier with a mark
(``pytestmark = pytest.mark.agent``) when it needs something no fixture stands for; the mark may
raise the tier its fixtures give, never lower it, and one test carries one tier. Collection
fails on a test that breaks that rule.

The marks are registered in pyproject.toml. Loaded by ``tests/conftest.py``; ``-p tests.tiers``
loads it alone (see tests/test_tiers.py).
"""

from __future__ import annotations

import pytest

TIERS = ("unit", "tmux", "daemon", "browser", "agent")
"""Cheapest first."""

BY_FIXTURE = {
    "roost": "tmux",
    "daemon": "daemon",
    "network": "daemon",
    "chromium": "browser",
    "agent_bin": "agent",
}
"""The fixture whose use puts a test in a tier."""


def from_fixtures(item: pytest.Item) -> str:
    """The costliest tier the fixtures of ``item`` call for; ``unit`` when none does."""
    used = [BY_FIXTURE[name] for name in getattr(item, "fixturenames", ()) if name in BY_FIXTURE]
    return max(used, key=TIERS.index, default="unit")


def declared(item: pytest.Item) -> list[str]:
    """The tiers ``item`` is marked with, by itself, its class or its module, each once."""
    return sorted({mark.name for mark in item.iter_markers() if mark.name in TIERS}, key=TIERS.index)


def tier_of(item: pytest.Item) -> str:
    """The one tier of ``item``; ``ValueError`` saying why when it has none that holds."""
    marks, needed = declared(item), from_fixtures(item)
    if len(marks) > 1:
        raise ValueError(f"is marked with {len(marks)} tiers ({', '.join(marks)}); a test has one")
    if marks and TIERS.index(marks[0]) < TIERS.index(needed):
        raise ValueError(f"is marked `{marks[0]}` but its fixtures make it `{needed}`")
    return marks[0] if marks else needed


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier before ``-m`` chooses among them."""
    wrong = []
    for item in items:
        try:
            tier = tier_of(item)
        except ValueError as error:
            wrong.append(f"{item.nodeid} {error}")
            continue
        if not declared(item):
            item.add_marker(tier)
    if wrong:
        raise pytest.UsageError("tests without one tier (see tests/tiers.py):\n  " + "\n  ".join(wrong))
