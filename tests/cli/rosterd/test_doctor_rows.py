"""``rosterd doctor`` reads the rows ``rosterd setup`` fixes: on a machine of its own with no
daemon, each problem names the command that fixes it, and after ``setup --yes`` the rows setup
owns pass."""

from __future__ import annotations

import re

from tests.cli.rosterd.sandbox import Machine, machine

__all__ = ["machine"]


def by_name(doc: dict) -> dict[str, dict]:
    return {check["name"]: check for check in doc["checks"]}


def test_each_problem_names_its_fix_and_setup_fixes_its_own(machine: Machine) -> None:
    machine.program("claude")
    before = by_name(machine.json("doctor", "--json", code=1))
    settings = machine.home / ".claude" / "settings.json"
    assert before["claude"] == {
        "name": "claude",
        "ok": True,
        "outcome": "ok",
        "detail": str(machine.bin / "claude"),
        "fix": None,
    }
    assert before["claude hooks"] == {
        "name": "claude hooks",
        "ok": False,
        "outcome": "fail",
        "detail": f"claude: not installed ({settings})",
        "fix": "rosterd integrate install claude",
    }
    assert before["config"] == {
        "name": "config",
        "ok": True,
        "outcome": "optional",
        "detail": f"no {machine.config}: every default applies",
        "fix": "rosterd setup --yes config",
    }
    assert before["codex"]["outcome"] == "skip" and "codex hooks" not in before
    assert before["tmux"]["outcome"] == "skip" and before["tmux"]["fix"] is None  # no server yet
    assert before["daemon"]["fix"] == "rosterd daemon"
    assert before["service"]["outcome"] == "skip" and before["service"]["fix"] is None

    words = machine.rosterd("doctor")
    assert words.returncode == 1
    lines = {re.split(r"\s{2,}", text)[1]: text for text in words.stdout.splitlines()}
    assert lines["claude hooks"].endswith(
        f"claude: not installed ({settings}); run `rosterd integrate install claude`"
    )
    assert lines["claude hooks"].startswith("FAIL ") and lines["config"].startswith("optional ")

    assert machine.rosterd("setup", "--yes").returncode == 0
    after = by_name(machine.json("doctor", "--json", code=1))  # no daemon runs: still failing
    assert after["claude hooks"] == {
        "name": "claude hooks",
        "ok": True,
        "outcome": "ok",
        "detail": f"claude: installed ({settings}) — gate on: holds a permission request up to 3600 s; "
        "command hooks: no socket unit holds the hook port open while rosterd is down",
        "fix": None,
    }
    assert after["config"]["outcome"] == "ok" and after["config"]["fix"] is None
    assert [name for name, check in after.items() if not check["ok"]] == [
        "daemon",
        "token",
        "node key",
        "socket",
        "loopback",
    ]


def test_a_malformed_call_is_refused(machine: Machine) -> None:
    proc = machine.rosterd("doctor", "--bogus")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1,
        "",
        "usage: rosterd doctor [--json] [--config PATH]\n",
    )
