"""What each set-up installs, read from ``scripts/bootstrap --plan``: the inner loop's (``--fast``)
no browser and nothing from npm, the whole suite's (``--test``) everything; and the inner loop's
tests run where what ``--fast`` leaves out cannot be found (``scripts/fast-setup-only``), so a
green ``make test-fast`` proves its set-up is enough."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import REPO

SLOW_TIERS_ONLY = {"chromium", "npm"}
"""Debian packages only the browser and agent tiers run."""
FAST_PROGRAMS = {"openssh-server", "openssh-client", "zsh", "fish", "nodejs"}
"""What tmux-tier tests drive besides tmux: a real sshd for ``roost ssh``
(tests/cli/roost/test_ssh_openssh.py), zsh and fish for tab completion (tests/cli/test_completion.py),
Node.js for roost's JavaScript integrations under a stand-in host (tests/integrate/drivers)."""


def plan(*options: str) -> list[tuple[str, list[str]]]:
    proc = subprocess.run(
        [str(REPO / "scripts" / "bootstrap"), *options, "--plan"], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0, proc.stderr
    return [
        (kind, rest.split()) for kind, _, rest in (line.partition(" ") for line in proc.stdout.splitlines())
    ]


def packages(steps: list[tuple[str, list[str]]]) -> set[str]:
    """The Debian packages of ``apt PACKAGE…`` and ``apt-unless PROGRAM PACKAGE…`` steps."""
    return {name for kind, args in steps for name in {"apt": args, "apt-unless": args[1:]}.get(kind, [])}


def test_the_fast_set_up_installs_no_npm_package_and_no_browser() -> None:
    fast = plan("--fast")
    assert [kind for kind, _ in fast if kind == "npm"] == []
    assert packages(fast).isdisjoint(SLOW_TIERS_ONLY)
    assert packages(fast) >= FAST_PROGRAMS
    assert ("pip", [".[test]"]) in fast


def test_the_whole_suite_sets_up_all_the_fast_set_up_does_and_the_browser_and_agents() -> None:
    fast, full = plan("--fast"), plan("--test")
    assert all(step in full for step in fast)
    assert packages(full) >= SLOW_TIERS_ONLY
    assert ("npm", ["scripts/install-test-agents"]) in full


def test_each_make_target_sets_up_with_its_own_plan() -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = dict(re.findall(r"^([\w-]+):\n\t@(scripts/bootstrap[^\n]*)", makefile, re.M))
    assert targets == {
        "run": "scripts/bootstrap",
        "test": "scripts/bootstrap --test",
        "test-fast": "scripts/bootstrap --fast",
        "bench": "scripts/bootstrap --bench",
    }
    assert (REPO / ".ci" / "run").read_text().rstrip().endswith("exec make test")


def test_what_only_the_whole_suite_installs_is_hidden_from_the_fast_tier() -> None:
    look = "for p in chromium npm; do command -v $p || true; done; ls -A .cache/agents || true"
    hidden = subprocess.run(
        [str(REPO / "scripts" / "fast-setup-only"), "sh", "-c", look],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout == ""
