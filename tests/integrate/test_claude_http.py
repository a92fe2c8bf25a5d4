"""``rosterd integrate install claude --http|--command``: Claude's hooks as POSTs to the daemon's
hook port, or as commands; the default where a socket unit holds that port open."""

from __future__ import annotations

import json

from roost.agents import manifest
from roost.services.autostart import systemd
from tests.integrate.conftest import Rosterd
from tests.integrate.test_claude import EVENTS, settings, write

POSTED = [event for event in EVENTS if event != "SessionStart"]
PORT = 8792
"""``[node] hook_port``'s default."""


def http(url: str, timeout: int = 10) -> dict:
    return {
        "type": "http",
        "url": url,
        "headers": {"X-Pane": "$TMUX_PANE", "X-Roost-Hook": "rosterd"},
        "allowedEnvVars": ["TMUX_PANE"],
        "timeout": timeout,
    }


def handlers(rosterd: Rosterd) -> dict[str, list]:
    return {event: groups[0]["hooks"] for event, groups in settings(rosterd)["hooks"].items()}


def test_http_posts_every_event_claude_can_post_and_sessionstart_stays_a_command(rosterd: Rosterd) -> None:
    assert manifest.load("claude").hook.http == tuple(POSTED)
    said = rosterd.ok("integrate", "install", "claude", "--http")
    assert f"posting to the daemon's hook port {PORT}" in said
    found = handlers(rosterd)
    assert list(found) == EVENTS
    assert found["SessionStart"] == [{"type": "command", "command": "rosterd-hook"}]
    for event in POSTED:
        assert found[event] == [http(f"http://127.0.0.1:{PORT}/hooks/claude")], event
    doc = rosterd.status_json("claude")["integrations"][0]
    assert (doc["state"], doc["hooks"], doc["gate"]) == ("installed", "http", False)
    assert doc["detail"] == f"HTTP hooks to the daemon's hook port {PORT}"
    before = rosterd.files()
    assert "already installed" in rosterd.ok("integrate", "install", "claude")  # a plain install keeps HTTP
    assert rosterd.files() == before
    rosterd.ok("integrate", "install", "claude", "--command")
    assert all(h == [{"type": "command", "command": "rosterd-hook"}] for h in handlers(rosterd).values())
    assert rosterd.status_json("claude")["integrations"][0]["hooks"] == "command"


def test_the_gate_over_http_posts_to_the_gates_url_with_its_hold(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "claude", "--http", "--gate")
    assert handlers(rosterd)["PermissionRequest"] == [
        http(f"http://127.0.0.1:{PORT}/hooks/claude/gate", timeout=3600 + 60)
    ]
    doc = rosterd.status_json("claude")["integrations"][0]
    assert (doc["hooks"], doc["gate"]) == ("http", True)
    rosterd.ok("integrate", "install", "claude", "--no-gate")  # the way stays HTTP
    assert handlers(rosterd)["PermissionRequest"] == [http(f"http://127.0.0.1:{PORT}/hooks/claude")]


def test_the_port_is_the_configs_and_a_users_own_http_hook_is_kept(rosterd: Rosterd) -> None:
    config = rosterd.home / ".config" / "roost" / "rosterd.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[node]\nhook_port = 9123\n")
    own = {"type": "http", "url": "http://127.0.0.1:9999/mine", "headers": {"X-Pane": "$TMUX_PANE"}}
    write(rosterd, {"hooks": {"Stop": [{"hooks": [own]}]}})
    rosterd.ok("integrate", "install", "claude", "--http")
    stops = settings(rosterd)["hooks"]["Stop"]
    assert stops == [{"hooks": [own]}, {"hooks": [http("http://127.0.0.1:9123/hooks/claude")]}]
    rosterd.ok("integrate", "uninstall", "claude")
    assert settings(rosterd) == {"hooks": {"Stop": [{"hooks": [own]}]}}
    config.write_text("[node]\nhook_port = 0\n")
    refused = rosterd.run("integrate", "install", "claude", "--http")
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        "rosterd integrate: --http needs a hook port, and [node] hook_port of rosterd.toml is 0\n"
    )
    assert settings(rosterd) == {"hooks": {"Stop": [{"hooks": [own]}]}}


def test_where_a_socket_unit_holds_the_port_http_is_the_default(rosterd: Rosterd) -> None:
    unit = rosterd.home / ".config" / "systemd" / "user" / "rosterd.socket"
    unit.parent.mkdir(parents=True)
    unit.write_text(systemd.socket_unit(9345))
    rosterd.ok("integrate", "install", "claude")
    assert handlers(rosterd)["Stop"] == [http("http://127.0.0.1:9345/hooks/claude")]
    rosterd.ok("integrate", "install", "claude", "--command")
    assert handlers(rosterd)["Stop"] == [{"type": "command", "command": "rosterd-hook"}]
    unit.write_text(systemd.socket_unit(9345).replace("# Written", "# Not", 1))  # not roost's
    rosterd.ok("integrate", "install", "claude")
    assert handlers(rosterd)["Stop"] == [{"type": "command", "command": "rosterd-hook"}]


def test_http_is_refused_for_an_agent_that_cannot_post_and_changes_nothing(rosterd: Rosterd) -> None:
    for args, words in (
        (("codex", "--http"), "codex cannot post its hooks over HTTP: --http is for Claude Code"),
        (("nosuch", "--http"), "unknown harness 'nosuch'"),
        (("claude", "--http", "--command"), "usage: rosterd integrate install"),
    ):
        proc = rosterd.run("integrate", "install", *args)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        assert words in proc.stderr, (args, proc.stderr)
    uninstall = rosterd.run("integrate", "uninstall", "claude", "--http")
    assert uninstall.returncode == 1 and "usage:" in uninstall.stderr
    assert rosterd.files() == {}
    assert json.loads(json.dumps(rosterd.status_json("claude")))["integrations"][0]["hooks"] is None
