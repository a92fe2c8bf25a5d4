"""``rosterd integrate … claude``: roost's groups in Claude Code's settings.json, nothing else."""

from __future__ import annotations

import json

from roost.agents import manifest
from tests.conftest import BIN
from tests.integrate.conftest import Rosterd

EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "Stop",
    "StopFailure",
]
FOREIGN = {
    "permissions": {"defaultMode": "default", "allow": ["Bash(ls:*)"]},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
        ],
    },
    "model": "opus",
}


def settings(rosterd: Rosterd) -> dict:
    return json.loads((rosterd.home / ".claude" / "settings.json").read_text())


def write(rosterd: Rosterd, document: dict) -> bytes:
    path = rosterd.home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path.read_bytes()


def test_install_adds_one_group_per_event_running_the_bare_hook(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    hooks = settings(rosterd)["hooks"]
    assert list(hooks) == EVENTS
    for event in EVENTS:
        (group,) = hooks[event]
        assert group["hooks"] == [{"type": "command", "command": "rosterd-hook"}]
        assert ("matcher" in group) == (event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"))
    assert list(rosterd.files()) == [".claude/settings.json"]


def test_the_installed_events_are_the_manifests(rosterd: Rosterd) -> None:
    assert manifest.load("claude").hook.install == tuple(EVENTS)


def test_foreign_entries_are_kept_in_place_and_uninstall_is_exact(rosterd: Rosterd) -> None:
    original = write(rosterd, FOREIGN)
    rosterd.ok("integrate", "install", "claude")
    document = settings(rosterd)
    assert list(document) == ["permissions", "hooks", "model"]
    assert document["permissions"] == FOREIGN["permissions"]
    assert document["hooks"]["Stop"][0] == FOREIGN["hooks"]["Stop"][0]
    assert document["hooks"]["PreToolUse"][0] == FOREIGN["hooks"]["PreToolUse"][0]
    assert len(document["hooks"]["Stop"]) == 2
    rosterd.ok("integrate", "uninstall", "claude")
    assert (rosterd.home / ".claude" / "settings.json").read_bytes() == original


def test_install_twice_is_install_once(rosterd: Rosterd) -> None:
    write(rosterd, FOREIGN)
    rosterd.ok("integrate", "install", "claude")
    first = rosterd.files()
    out = rosterd.ok("integrate", "install", "claude")
    assert "already installed" in out
    assert rosterd.files() == first


def test_uninstall_removes_only_roosts_handler_from_a_shared_group(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    document = settings(rosterd)
    document["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "say finished"})
    write(rosterd, document)
    rosterd.ok("integrate", "uninstall", "claude")
    assert settings(rosterd) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say finished"}]}]}
    }


def test_uninstall_of_a_file_roost_created_removes_it(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    rosterd.ok("integrate", "uninstall", "claude")
    assert rosterd.files() == {}
    assert "no claude hooks" in rosterd.ok("integrate", "uninstall", "claude")


def test_status_exit_codes(rosterd: Rosterd) -> None:
    code, out = rosterd.status("claude")
    assert (code, out.startswith("claude: not installed")) == (1, True)
    rosterd.ok("integrate", "install", "claude")
    code, out = rosterd.status("claude")
    assert (code, out.startswith("claude: installed")) == (0, True)
    document = settings(rosterd)
    del document["hooks"]["StopFailure"]
    write(rosterd, document)
    code, out = rosterd.status("claude")
    assert (code, out.startswith("claude: outdated")) == (1, True)
    assert rosterd.status_json("claude")["integrations"][0]["state"] == "outdated"
    rosterd.ok("integrate", "install", "claude")
    assert rosterd.status("claude")[0] == 0


def test_status_json_document(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    doc = rosterd.status_json("claude")
    assert doc == {
        "schema": 1,
        "command": "integrate status",
        "integrations": [
            {
                "harness": "claude",
                "state": "installed",
                "paths": [str(rosterd.home / ".claude" / "settings.json")],
                "detail": None,
                "gate": False,
                "hooks": "command",
            }
        ],
    }


def _permission_handlers(rosterd: Rosterd) -> list[dict]:
    (group,) = settings(rosterd)["hooks"]["PermissionRequest"]
    return group["hooks"]


def test_the_gate_is_off_until_asked_for_and_then_holds_the_configured_time(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    assert _permission_handlers(rosterd) == [{"type": "command", "command": "rosterd-hook"}]
    config = rosterd.home / ".config" / "roost"
    config.mkdir(parents=True, exist_ok=True)
    (config / "rosterd.toml").write_text("[harness.claude]\ngate_timeout_s = 120\n")
    said = rosterd.ok("integrate", "install", "claude", "--gate")
    assert "with the gate (holds a permission request up to 120 s)" in said
    assert _permission_handlers(rosterd) == [
        {"type": "command", "command": "rosterd-hook --gate", "timeout": 180}
    ]
    others = {e: g for e, g in settings(rosterd)["hooks"].items() if e != "PermissionRequest"}
    assert all(g[0]["hooks"] == [{"type": "command", "command": "rosterd-hook"}] for g in others.values())
    doc = rosterd.status_json("claude")["integrations"][0]
    assert (doc["state"], doc["gate"]) == ("installed", True)
    assert doc["detail"] == "gate on: holds a permission request up to 120 s"
    before = rosterd.files()
    assert "already installed with the gate" in rosterd.ok("integrate", "install", "claude", "--gate")
    assert "already installed with the gate" in rosterd.ok("integrate", "install", "claude")  # kept
    assert rosterd.files() == before
    rosterd.ok("integrate", "install", "claude", "--no-gate")
    assert _permission_handlers(rosterd) == [{"type": "command", "command": "rosterd-hook"}]
    assert rosterd.status_json("claude")["integrations"][0]["gate"] is False
    rosterd.ok("integrate", "install", "claude", "--gate")
    rosterd.ok("integrate", "uninstall", "claude")
    assert ".claude/settings.json" not in rosterd.files()


def test_a_harness_without_a_gate_refuses_one_and_changes_nothing(rosterd: Rosterd) -> None:
    before = rosterd.files()
    proc = rosterd.run("integrate", "install", "codex", "--gate")
    assert proc.returncode == 1
    assert proc.stderr == (
        "rosterd integrate: codex offers no permission gate: answer its dialogs in the terminal\n"
    )
    assert rosterd.files() == before
    for wrong in (["uninstall", "claude", "--gate"], ["install", "claude", "--gate", "--no-gate"]):
        proc = rosterd.run("integrate", *wrong)
        assert proc.returncode == 1
        assert proc.stderr.startswith("usage: rosterd integrate install HARNESS [--gate|--no-gate]")
    assert rosterd.files() == before


def test_claude_config_dir_is_honoured(rosterd: Rosterd) -> None:
    elsewhere = rosterd.home / "claude-config"
    env = {"CLAUDE_CONFIG_DIR": str(elsewhere)}
    assert rosterd.run("integrate", "install", "claude", env=env).returncode == 0
    assert list(rosterd.files()) == ["claude-config/settings.json"]
    assert rosterd.run("integrate", "status", "claude", env=env).returncode == 0


def test_a_config_dir_holding_escapes_is_printed_escaped(rosterd: Rosterd) -> None:
    """A path is the user's text: install and status print an ESC in it as ``\\x1b``."""
    env = {"CLAUDE_CONFIG_DIR": str(rosterd.home / "c\x1b]0;pwned\x07")}
    for action in ("install", "status"):
        proc = rosterd.run("integrate", action, "claude", env=env)
        assert proc.returncode == 0, proc.stderr
        assert "\x1b" not in proc.stdout and "c\\x1b]0;pwned\\x07" in proc.stdout, proc.stdout


def test_invalid_json_is_refused_and_left_alone(rosterd: Rosterd) -> None:
    path = rosterd.home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus",,}')
    proc = rosterd.run("integrate", "install", "claude")
    assert proc.returncode == 1
    assert proc.stderr.startswith("rosterd integrate: ") and "not valid JSON" in proc.stderr
    assert path.read_text() == '{"model": "opus",,}'


def test_the_absolute_hook_is_used_when_path_would_not_find_it(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    path = "/usr/bin:/bin"
    assert rosterd.run("integrate", "status", "claude", env={"PATH": path}).returncode == 1  # outdated there
    assert rosterd.run("integrate", "install", "claude", env={"PATH": path}).returncode == 0
    commands = {
        h["command"] for groups in settings(rosterd)["hooks"].values() for g in groups for h in g["hooks"]
    }
    assert commands == {str(BIN / "rosterd-hook")}


def test_usage_errors_and_unknown_harnesses_exit_1(rosterd: Rosterd) -> None:
    for args in (["integrate"], ["integrate", "install"], ["integrate", "frob", "claude"]):
        proc = rosterd.run(*args)
        assert (proc.returncode, proc.stderr.startswith("usage: rosterd integrate")) == (1, True), args
    proc = rosterd.run("integrate", "install", "nosuch")
    assert proc.returncode == 1 and "unknown harness 'nosuch'" in proc.stderr
    proc = rosterd.run("integrate", "install", "grok")
    assert proc.returncode == 1 and "no adapter for grok" in proc.stderr
    assert rosterd.files() == {}


def test_help_documents_the_exit_codes(rosterd: Rosterd) -> None:
    out = rosterd.ok("integrate", "--help")
    assert "Exit status:" in out and "0  done" in out and "1  status: not installed or outdated" in out
    assert "claude, codex, copilot, gemini, opencode, pi" in out
    assert "integrate install|uninstall HARNESS" in rosterd.ok("help")
    assert rosterd.ok("version").startswith("rosterd ")
    assert rosterd.run("nosuchverb").returncode == 1


def test_status_without_a_harness_reports_every_one_and_exits_0(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude")
    proc = rosterd.run("integrate", "status")
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "claude",
        "codex",
        "copilot",
        "gemini",
        "opencode",
        "pi",
    ]
    assert lines[0].startswith("claude: installed") and lines[1].startswith("codex: not installed")
