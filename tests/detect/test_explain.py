"""``rosterd detect explain|check``: every rule tried and why, the JSON document, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from roost.truth.detect.explain import explain, lines, to_json
from roost.truth.detect.regions import Screen
from tests.conftest import BIN

SCREENS = Path(__file__).parents[1] / "fixtures" / "screens"
PERMISSION = SCREENS / "claude" / "blocked-shell.txt"


@pytest.fixture
def agents_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    directory = tmp_path / "config" / "roost" / "agents"
    directory.mkdir(parents=True)
    return directory


def rosterd(*args: str, input: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """The real ``rosterd`` command, in this test's XDG_CONFIG_HOME."""
    proc = subprocess.run(
        [str(BIN / "rosterd"), *args], input=input, capture_output=True, env=dict(os.environ), timeout=60
    )
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_every_rule_is_listed_in_order_with_its_verdict(agents_dir: Path) -> None:
    screen = Screen.parse(PERMISSION.read_text())
    explanation = explain(screen)
    assert explanation.agent == "claude"
    assert not explanation.named
    assert [a.agent for a in explanation.asked][:2] == ["amp", "claude"]
    ids = [t.rule.id for t in explanation.trials]
    assert ids[0] == "permission-dialog"
    assert len(ids) == len(set(ids)) > 3
    text = lines(explanation)
    assert text[0] == "agent     claude (identified: matched 'Claude Code' in title)"
    assert "state     blocked, by rule permission-dialog (priority 100, region after_rule)" in text
    assert "reason    Bash: touch x" in text
    assert "event     permission" in text
    rules = text[text.index("rules of claude, in the order tried:") + 1 :]
    assert rules[0].split()[:4] == ["wins", "100", "permission-dialog", "blocked"]
    assert rules[1].split()[0] == "no"
    assert len(rules) == len(ids)


def test_a_later_match_is_shown_as_outranked(agents_dir: Path) -> None:
    screen = Screen.parse((SCREENS / "codex" / "blocked-shell.txt").read_text())
    text = lines(explain(screen, "codex"))
    assert text[0] == "agent     codex (named by the caller)"
    composer = next(line for line in text if " composer " in line)
    assert composer.split()[0] == "match"
    assert composer.endswith("(outranked by title-action-required)")


def test_a_screen_nobody_recognises_says_so(agents_dir: Path) -> None:
    explanation = explain(Screen.parse("$ ls\nREADME"))
    assert explanation.agent is None
    assert explanation.trials == ()
    text = lines(explanation)
    assert text[0] == "agent     none: no agent recognised this screen"
    assert "state     none: no rule matched" in text
    assert all(line.startswith("  no ") for line in text[text.index("agents asked, by name:") + 1 :])
    doc = to_json(explanation)
    assert (doc["agent"], doc["identified"], doc["state"], doc["rules"]) == (None, False, None, [])


def test_explain_prints_the_explanation_and_exits_0(agents_dir: Path) -> None:
    proc = rosterd("detect", "explain", str(PERMISSION))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines() == lines(explain(Screen.parse(PERMISSION.read_text())))


def test_explain_json_document(agents_dir: Path) -> None:
    proc = rosterd("detect", "explain", "--json", "--agent", "claude", str(PERMISSION))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(doc) == [
        "schema", "command", "agent", "identified", "title", "progress", "state", "rule", "priority",
        "region", "event", "reason", "tool", "asked", "rules", "problems",
    ]  # fmt: skip
    assert (doc["schema"], doc["command"]) == (1, "detect explain")
    assert {k: doc[k] for k in ("agent", "identified", "state", "rule", "priority", "region", "event")} == {
        "agent": "claude",
        "identified": False,
        "state": "blocked",
        "rule": "permission-dialog",
        "priority": 100,
        "region": "after_rule",
        "event": "permission",
    }
    assert (doc["reason"], doc["tool"], doc["title"], doc["progress"]) == (
        "Bash: touch x",
        "Bash",
        "✳ Claude Code",
        None,
    )
    assert doc["asked"] == []
    assert doc["problems"] == []
    first = doc["rules"][0]
    assert first == {
        "id": "permission-dialog",
        "state": "blocked",
        "priority": 100,
        "region": "after_rule",
        "verdict": "wins",
        "why": first["why"],
        "reason": "Bash: touch x",
    }
    assert first["why"].startswith("matched 'Do you want to proceed?")
    assert {r["verdict"] for r in doc["rules"][1:]} <= {"no", "match"}


def test_explain_reads_stdin_and_takes_title_and_progress(agents_dir: Path) -> None:
    proc = rosterd(
        "detect",
        "explain",
        "--json",
        "--agent=codex",
        "--title",
        "[ ! ] Action Required | x",
        "--progress",
        "1;40",
        "-",
        input=b"plain text\n",
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["state"], doc["rule"], doc["title"], doc["progress"]) == (
        "blocked",
        "title-action-required",
        "[ ! ] Action Required | x",
        "normal 40",
    )


def test_explain_uses_a_title_set_inside_the_capture(agents_dir: Path) -> None:
    proc = rosterd("detect", "explain", "--json", "-", input="\x1b]0;⠙ fixing | shop\x07› hi\n".encode())
    doc = json.loads(proc.stdout)
    assert (doc["agent"], doc["state"], doc["rule"], doc["title"]) == (
        "codex",
        "working",
        "title-spinner",
        "⠙ fixing | shop",
    )


def test_no_match_is_still_explained_with_exit_0(agents_dir: Path) -> None:
    proc = rosterd("detect", "explain", "--json", "-", input=b"$ ls\n")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert (doc["agent"], doc["state"], doc["rule"]) == (None, None, None)
    assert doc["asked"] and not any(a["matched"] for a in doc["asked"])
    assert list(doc["asked"][0]) == ["agent", "matched", "why"]


USAGE = "usage: rosterd detect explain [--agent NAME] [--title T] [--progress P] [--json] FILE|-\n"


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["detect", "explain"], USAGE),
        (["detect", "explain", "a", "b"], USAGE),
        (["detect", "explain", "--colour", "a"], USAGE),
        (["detect", "explain", "a", "--agent"], USAGE),
        (["detect"], "usage: rosterd detect explain|check … (see rosterd detect --help)\n"),
        (["detect", "frobnicate"], "usage: rosterd detect explain|check … (see rosterd detect --help)\n"),
        (["detect", "check", "extra"], "usage: rosterd detect check [--json]\n"),
        (
            ["detect", "explain", "--progress", "busy", "-"],
            "usage: rosterd detect explain: progress must be one of none, normal, error, indeterminate,"
            " paused (and a percentage) or 0-4, got 'busy'\n",
        ),
    ],
)
def test_usage_errors_exit_1(agents_dir: Path, args: list[str], stderr: str) -> None:
    proc = rosterd(*args, input=b"")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", stderr)


def test_an_unreadable_file_exits_1(agents_dir: Path, tmp_path: Path) -> None:
    proc = rosterd("detect", "explain", str(tmp_path / "nope.txt"))
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"rosterd detect: can't read {tmp_path / 'nope.txt'}: No such file or directory\n"


def test_an_agent_without_rules_exits_1(agents_dir: Path) -> None:
    proc = rosterd("detect", "explain", "--agent", "nobody", str(PERMISSION))
    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "rosterd detect: no detection rules for agent 'nobody' (agents with rules: amp,"
    )


def test_a_broken_manifest_is_named_with_its_file_and_rule(agents_dir: Path) -> None:
    bad = agents_dir / "mine.toml"
    bad.write_text(
        '[detect]\n[[detect.rules]]\nid = "oops"\nstate = "idle"\nregion = "screen"\npattern = "("\n'
    )
    problem = f"{bad} (mine): rule 'oops': pattern '(' is not a valid regular expression"

    named = rosterd("detect", "explain", "--agent", "mine", str(PERMISSION))
    assert named.returncode == 1
    assert named.stderr.startswith(f"rosterd detect: {problem}")

    anyone = rosterd("detect", "explain", "--json", str(PERMISSION))
    assert anyone.returncode == 0
    [message] = json.loads(anyone.stdout)["problems"]
    assert message.startswith(problem)
    text = rosterd("detect", "explain", str(PERMISSION)).stdout
    assert "manifest problems (these files are not used):\n  " + problem in text

    check = rosterd("detect", "check")
    assert check.returncode == 1
    assert check.stderr.startswith(f"rosterd detect: {problem}")
    assert "claude: " in check.stdout and ", identifies its screen (" in check.stdout


def test_check_lists_every_agent_and_exits_0_when_all_files_are_usable(agents_dir: Path) -> None:
    proc = rosterd("detect", "check")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert [line.split(":")[0] for line in proc.stdout.splitlines()][:3] == ["amp", "claude", "codex"]
    doc = json.loads(rosterd("detect", "check", "--json").stdout)
    assert list(doc) == ["schema", "command", "agents", "problems"]
    assert (doc["schema"], doc["command"], doc["problems"]) == (1, "detect check", [])
    claude = next(a for a in doc["agents"] if a["agent"] == "claude")
    assert list(claude) == ["agent", "rules", "identifies", "files"]
    assert claude["identifies"] is True
    assert claude["rules"][0] == "permission-dialog"
    assert claude["files"][0].endswith("agents/manifests/claude.toml")


def test_help_lists_the_verb_and_detect_help_explains_it(agents_dir: Path) -> None:
    listed = rosterd("help").stdout
    assert "rosterd detect explain [OPTIONS] FILE|-" in listed
    assert "rosterd detect check [--json]" in listed
    proc = rosterd("detect", "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: rosterd detect explain")
    assert "Exit status:" in proc.stdout


def test_check_names_a_bad_user_file_and_its_field_and_keeps_the_packaged_rules(agents_dir: Path) -> None:
    path = agents_dir / "claude.toml"
    path.write_text('[hook.events]\nStop = "finished"\n')
    proc = rosterd("detect", "check")
    assert proc.returncode == 1
    assert proc.stderr == (
        f"rosterd detect: {path} (claude): [hook.events]: Stop must be one of "
        "prompt, working, tool, blocked, done, interrupt, error, identify, ready, ignore, got 'finished'\n"
    )
    claude = next(line for line in proc.stdout.splitlines() if line.startswith("claude: "))
    assert claude.endswith("agents/manifests/claude.toml)")  # the packaged rules, still used
    doc = json.loads(rosterd("detect", "check", "--json").stdout)
    assert [message.split(": ")[0] for message in doc["problems"]] == [f"{path} (claude)"]
    path.write_text("[hook\n")
    syntax = rosterd("detect", "check")
    assert syntax.returncode == 1
    assert syntax.stderr.startswith(f"rosterd detect: {path}: cannot read it: ")


def test_what_a_screen_or_a_manifest_holds_is_printed_escaped(agents_dir: Path, tmp_path: Path) -> None:
    """A screen is anyone's text and a manifest's values the user's: an ESC in either reaches the
    operator's terminal as ``\\x1b``, never as an escape sequence; ``--json`` carries it as is."""
    screen = tmp_path / "screen.txt"
    screen.write_text("\x1b]0;pw\u202ened\x07 \x1b[2J Esc to cancel · Tab to amend\n")
    shown = rosterd("detect", "explain", "--title", "t\u202ex", str(screen))
    assert shown.returncode == 0
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert "t\\u202ex" in shown.stdout

    (agents_dir / "mine.toml").write_text(
        '[detect]\n[[detect.rules]]\nid = "oops\\u001b[2J"\n'
        'state = "idle"\nregion = "screen"\npattern = "("\n'
    )
    check = rosterd("detect", "check")
    assert check.returncode == 1
    assert "\x1b" not in check.stderr and "oops\\x1b[2J" in check.stderr
