"""``rosterd doctor``: one line per check, ``ok``/``FAIL``/``skip``; exit 1 when any check fails."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path

import pytest

from roost.agents import manifest
from roost.services.autostart import systemd
from roost.services.integrate import names
from tests.cli.rosterd.helpers import ok, rosterd
from tests.conftest import BIN, Roost
from tests.contracts import tables
from tests.daemon.fixture import Daemon

HARNESSES = names()


def checks(
    daemon: Daemon, code: int, env: dict[str, str] | None = None, *args: str
) -> dict[str, tuple[str, str]]:
    """Run doctor expecting ``code``; its lines as {what: (outcome, detail)}."""
    proc = rosterd(daemon, "doctor", *args, env=env)
    assert proc.returncode == code, proc.stdout.decode() + proc.stderr.decode()
    found = {}
    for line in proc.stdout.decode().splitlines():
        outcome, what, detail = re.split(r"\s{2,}", line, maxsplit=2)
        found[what] = (outcome, detail)
    return found


def healthy(roost: Roost, daemon: Daemon) -> None:
    """What a set-up machine has: a daemon, roost's tmux server, every harness on PATH integrated."""
    roost.start("sleep 600")
    daemon.start()
    for name in HARNESSES:
        agent = manifest.load(name)
        if agent and any(shutil.which(b, path=daemon.env["PATH"]) for b in agent.binaries):
            ok(daemon, "integrate", "install", name)


def test_a_healthy_machine_passes_every_check(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    found = checks(daemon, 0)
    assert found["daemon"] == ("ok", f"answers on {daemon.socket} (rosterd {_version()})")
    assert found["config"] == ("ok", f"{daemon.config} parses")
    assert found["token"] == ("ok", f"{daemon.config_dir / 'loopback.token'} is 600")
    assert found["node key"] == ("ok", f"{daemon.config_dir / 'node.key'} is 600")
    assert found["socket"] == ("ok", f"{daemon.socket} is 600")
    assert found["loopback"] == ("ok", f"port {daemon.port} is bound on 127.0.0.1 only")
    assert found["hook port"] == ("ok", f"listens on 127.0.0.1:{daemon.hook_port} (HTTP hooks post there)")
    assert found["tmux"] == ("ok", f"roost's server answers on {roost.socket}")
    assert set(HARNESSES) <= found.keys()
    assert all(outcome in ("ok", "skip", "optional") for outcome, _ in found.values())


def test_a_stopped_daemon_fails_the_daemon_socket_and_loopback_checks(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    daemon.stop()
    found = checks(daemon, 1)
    assert found["daemon"][0] == "FAIL" and f"no socket at {daemon.socket}" in found["daemon"][1]
    assert found["socket"] == (
        "FAIL",
        f"{daemon.socket} does not exist (the daemon creates it when it starts); run `rosterd daemon`",
    )
    assert found["loopback"] == ("FAIL", f"nothing listens on 127.0.0.1:{daemon.port}; run `rosterd daemon`")
    assert found["hook port"] == ("skip", "no daemon answers: nothing to ask (see the daemon row)")
    assert found["config"][0] == found["token"][0] == "ok"


def test_a_secret_readable_by_others_fails(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    token = daemon.config_dir / "loopback.token"
    token.chmod(0o644)
    found = checks(daemon, 1)
    assert found["token"][0] == "FAIL" and f"{token} is mode 644" in found["token"][1]
    assert found["node key"][0] == "ok"


def test_a_config_that_does_not_parse_fails(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    daemon.config.write_text("[node]\nloopback_prot = 1\n")
    found = checks(daemon, 1)
    assert found["config"][0] == "FAIL" and "unknown key 'loopback_prot' in [node]" in found["config"][1]
    assert found["loopback"][0] == "ok"  # the running daemon still says which port it bound
    elsewhere = daemon.roost.root / "elsewhere.toml"
    found = checks(daemon, 1, None, "--config", str(elsewhere))
    assert found["config"] == ("FAIL", f"no config file at {elsewhere}")
    assert found["token"] == (
        "FAIL",
        f"{elsewhere.parent / 'loopback.token'} does not exist (the daemon creates it when it starts); "
        "run `rosterd daemon`",
    )


def test_the_loopback_port_bound_anywhere_but_127_0_0_1_fails(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    with socket.socket(socket.AF_INET6) as other:
        other.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            other.bind(("::1", daemon.port))
        except OSError:
            pytest.skip("no IPv6 loopback here")
        other.listen()
        found = checks(daemon, 1)
    assert found["loopback"] == (
        "FAIL",
        f"port {daemon.port} is bound on 127.0.0.1, ::1: only 127.0.0.1 may be",
    )


def test_a_harness_on_path_without_its_integration_fails_until_installed(
    roost: Roost, daemon: Daemon, tmp_path: Path
) -> None:
    healthy(roost, daemon)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    with_claude = {"PATH": f"{bin_dir}:{daemon.env['PATH']}"}
    found = checks(daemon, 1, with_claude)
    assert found["claude"] == ("ok", str(fake))
    settings = daemon.roost.root / "home" / ".claude" / "settings.json"
    assert found["claude hooks"] == (
        "FAIL",
        f"claude: not installed ({settings}); run `rosterd integrate install claude`",
    )
    assert "codex hooks" not in found and found["codex"][0] == "skip"  # not installed: one row
    assert rosterd(daemon, "integrate", "install", "claude", env=with_claude).returncode == 0
    assert checks(daemon, 0, with_claude)["claude hooks"] == (
        "ok",
        f"claude: installed ({settings}); command hooks: no socket unit holds the hook port open while "
        "rosterd is down",
    )


def test_doctor_says_which_hooks_claude_runs_and_why(roost: Roost, daemon: Daemon, tmp_path: Path) -> None:
    healthy(roost, daemon)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/bin/sh\n")
    (bin_dir / "claude").chmod(0o755)
    with_claude = {"PATH": f"{bin_dir}:{daemon.env['PATH']}"}
    assert rosterd(daemon, "integrate", "install", "claude", "--http", env=with_claude).returncode == 0
    settings = daemon.roost.root / "home" / ".claude" / "settings.json"
    port = daemon.hook_port
    posting = f"claude: installed ({settings}) — HTTP hooks to the daemon's hook port {port}"
    assert checks(daemon, 1, with_claude)["claude hooks"] == (
        "FAIL",
        f"{posting}; but no socket unit holds port {port} open: while rosterd is down claude shows an "
        "error under every event; run `rosterd service install`",
    )
    unit = daemon.roost.root / "config" / "systemd" / "user" / "rosterd.socket"
    unit.parent.mkdir(parents=True)
    unit.write_text(systemd.socket_unit(port))
    assert checks(daemon, 0, with_claude)["claude hooks"] == (
        "ok",
        f"{posting}; rosterd.socket holds that port open while rosterd is down",
    )
    daemon.settings = {"node": {"hook_port": port + 1}}
    daemon.write_config()
    assert checks(daemon, 1, with_claude)["claude hooks"] == (
        "FAIL",
        f"{posting}; but the daemon's hook port is {port + 1} ([node] hook_port): nothing answers them; "
        "run `rosterd integrate install claude --http`",
    )


def test_no_tmux_server_yet_is_no_fault_and_both_doctors_say_so(roost: Roost, daemon: Daemon) -> None:
    """Right after ``make run`` the daemon runs and no tmux server does yet: roost starts one
    with the first session. ``rosterd doctor`` skips the row, ``roost doctor`` says ok, in the
    same words."""
    daemon.start()
    rows = {row["name"]: row for row in json.loads(rosterd(daemon, "doctor", "--json").stdout)["checks"]}
    said = f"no roost tmux server on socket '{roost.socket}' yet, which is fine: the first session starts it"
    assert rows["tmux"]["outcome"] == "skip" and rows["tmux"]["ok"] is True
    assert rows["tmux"]["detail"].startswith(said) and rows["tmux"]["fix"] is None
    plain = checks(daemon, rosterd(daemon, "doctor").returncode)
    assert plain["tmux"] == ("skip", rows["tmux"]["detail"])
    theirs = roost.run("doctor", env=daemon.env)
    assert f"ok    {rows['tmux']['detail']}\n" in theirs.stdout


def _version() -> str:
    from roost import __version__

    return __version__


def test_commands_not_on_path_fail_with_the_fix(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    assert checks(daemon, 0)["commands"] == (
        "ok",
        f"roost, rosterd, rosterd-hook and rosterd-holder are on PATH (in {BIN})",
    )
    found = checks(daemon, 1, {"PATH": "/usr/bin:/bin"})
    linker = BIN.parent.parent / "scripts" / "link-commands"  # the checkout the .venv is in
    assert found["commands"] == (
        "FAIL",
        f"roost, rosterd, rosterd-hook and rosterd-holder are not on PATH: `{linker}`",
    )
    assert all(
        outcome in ("ok", "skip", "optional") for what, (outcome, _) in found.items() if what != "commands"
    )


def test_another_installations_command_first_on_path_is_no_failure(
    roost: Roost, daemon: Daemon, tmp_path: Path
) -> None:
    healthy(roost, daemon)
    other = tmp_path / "other"
    other.mkdir()
    (other / "rosterd").write_text("#!/bin/sh\n")
    (other / "rosterd").chmod(0o755)
    outcome, detail = checks(daemon, 0, {"PATH": f"{other}:{daemon.env['PATH']}"})["commands"]
    assert outcome == "ok" and detail.startswith(
        f"PATH runs another installation's rosterd ({other}/rosterd)"
    )


def test_a_bad_agent_manifest_fails_naming_the_file_and_the_field(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    agents = daemon.config_dir / "agents"
    agents.mkdir(exist_ok=True)
    (agents / "pi.toml").write_text('[acp]\ncommand = "pi-acp"\n')
    found = checks(daemon, 1)
    outcome, detail = found["manifests"]
    assert outcome == "FAIL"
    assert detail == (
        f"{agents / 'pi.toml'} (pi): [acp]: command must be a list of strings, got 'pi-acp' "
        "(this file is left out until it is fixed)"
    )
    (agents / "pi.toml").unlink()
    assert checks(daemon, 0)["manifests"] == ("ok", "every agent manifest is usable")


def test_each_acp_adapter_is_found_or_skipped_with_its_package_and_is_sandbox_is_explained(
    roost: Roost, daemon: Daemon, tmp_path: Path
) -> None:
    healthy(roost, daemon)
    (tmp_path / "bin").mkdir()
    for name in ("claude-agent-acp", "claude", "codex"):
        (tmp_path / "bin" / name).write_text("#!/bin/sh\n")
        (tmp_path / "bin" / name).chmod(0o755)
    env = {"PATH": f"{tmp_path / 'bin'}:{daemon.env['PATH']}", "IS_SANDBOX": "yes"}
    for harness in ("claude", "codex"):
        assert rosterd(daemon, "integrate", "install", harness, env=env).returncode == 0
    found = checks(daemon, 0, env)
    assert found["claude adapter"] == (
        "ok",
        f"{tmp_path / 'bin' / 'claude-agent-acp'}: headless sessions can start",
    )
    assert found["codex adapter"] == (
        "optional",
        "codex-acp is not on PATH; npm package @agentclientprotocol/codex-acp provides it; "
        "run `npm install -g @agentclientprotocol/codex-acp`",
    )
    assert "gemini adapter" not in found  # gemini is not installed
    if os.geteuid() == 0:
        assert found["IS_SANDBOX"][0] == "ok" and "leaves it out" in found["IS_SANDBOX"][1]
    assert "IS_SANDBOX" not in checks(daemon, 0, {**env, "IS_SANDBOX": "1"})


DOCUMENTS = {
    row["document"]: tables.names(row["fields"]) for row in tables.table("`rosterd --json` documents")
}
CHECK_FIELDS = DOCUMENTS["doctor checks[]"]


def doctor_json(daemon: Daemon, code: int, env: dict[str, str] | None = None) -> dict:
    proc = rosterd(daemon, "doctor", "--json", env=env)
    assert proc.returncode == code, proc.stdout.decode() + proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1 and proc.stderr == b""
    doc = json.loads(lines[0])
    assert list(doc) == ["schema", "command", *DOCUMENTS["doctor"]]
    assert (doc["schema"], doc["command"], doc["ok"]) == (1, "doctor", code == 0)
    assert all(list(check) == CHECK_FIELDS for check in doc["checks"])
    return doc


def test_doctor_json_is_the_same_rows_with_every_field(roost: Roost, daemon: Daemon) -> None:
    healthy(roost, daemon)
    words = checks(daemon, 0)
    doc = doctor_json(daemon, 0)
    assert [check["name"] for check in doc["checks"]] == list(words)
    for check in doc["checks"]:
        outcome, detail = words[check["name"]]
        assert check["outcome"] == outcome.lower() and check["detail"] == detail
        assert check["ok"] is True and check["outcome"] in ("ok", "skip", "optional")
        assert (check["fix"] is None) == (check["outcome"] != "optional")  # an optional row says its fix
    daemon.stop()
    broken = {check["name"]: check for check in doctor_json(daemon, 1)["checks"]}
    assert broken["daemon"]["ok"] is False and broken["daemon"]["outcome"] == "fail"
    assert broken["daemon"]["fix"] == "rosterd daemon"  # no service manager answers here
    assert broken["socket"] == {
        "name": "socket",
        "ok": False,
        "outcome": "fail",
        "detail": f"{daemon.socket} does not exist (the daemon creates it when it starts)",
        "fix": "rosterd daemon",
    }
    assert broken["config"]["ok"] is True and broken["config"]["fix"] is None
