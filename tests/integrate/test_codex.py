"""``rosterd integrate … codex``: hook groups in hooks.json, their trust in a marked config.toml block."""

from __future__ import annotations

import json
import subprocess
import time
import tomllib
from pathlib import Path

from roost.services.integrate.codex import trust_hash, trust_key
from tests.integrate.conftest import Rosterd

EVENTS = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Stop",
    "Interrupt",
]
CONFIG = """model = "gpt-fake"
check_for_update_on_startup = false

[features]
foo = true  # the user's own

[model_providers.fake]
name = "Fake"
base_url = "http://127.0.0.1:9/v1"
"""
FOREIGN_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send codex"}]}]}}


def codex_home(rosterd: Rosterd) -> Path:
    return rosterd.home / ".codex"


def hooks(rosterd: Rosterd) -> dict:
    return json.loads((codex_home(rosterd) / "hooks.json").read_text())


def config(rosterd: Rosterd) -> dict:
    return tomllib.loads((codex_home(rosterd) / "config.toml").read_text())


def test_install_adds_trusted_groups_and_turns_the_daemon_off(rosterd: Rosterd) -> None:
    out = rosterd.ok("integrate", "install", "codex")
    assert "daemon_auto_start" in out
    document = hooks(rosterd)["hooks"]
    assert list(document) == EVENTS
    for event in EVENTS:
        assert document[event] == [
            {"hooks": [{"type": "command", "command": "rosterd-hook codex", "timeout": 3}]}
        ]
    settings = config(rosterd)
    assert settings["features"] == {"daemon_auto_start": False}
    path = codex_home(rosterd) / "hooks.json"
    assert settings["hooks"]["state"] == {
        trust_key(path, event, 0): {"trusted_hash": trust_hash(event, "rosterd-hook codex", 3)}
        for event in EVENTS
    }
    assert sorted(rosterd.files()) == [".codex/config.toml", ".codex/hooks.json"]


def test_the_trust_hash_matches_what_codex_computes() -> None:
    """Vectors read from codex-cli 0.171.0's own ``app-server`` ``hooks/list`` (``currentHash``)."""
    assert (
        trust_hash("UserPromptSubmit", "rosterd-hook codex", 600)
        == "sha256:56c29567e86d1e7e102e0708b56f0621383395cf1924d8368bc753190ab32523"
    )
    assert (
        trust_hash("Stop", "rosterd-hook codex", 5)
        == "sha256:ffbe2e71cd96b71f5d521870a3f94022b039415ef3230044ed971df89548a156"
    )


def test_foreign_settings_are_kept_and_uninstall_is_exact(rosterd: Rosterd) -> None:
    home = codex_home(rosterd)
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    (home / "hooks.json").write_text(json.dumps(FOREIGN_HOOKS, indent=2) + "\n")
    originals = rosterd.files()
    rosterd.ok("integrate", "install", "codex")
    settings = config(rosterd)
    assert settings["features"] == {"daemon_auto_start": False, "foo": True}  # inside the user's own table
    assert settings["model_providers"]["fake"]["name"] == "Fake"
    stop = hooks(rosterd)["hooks"]["Stop"]
    assert stop[0] == FOREIGN_HOOKS["hooks"]["Stop"][0]
    assert trust_key(home / "hooks.json", "Stop", 1) in settings["hooks"]["state"]  # roost's group is second
    assert rosterd.status("codex")[0] == 0
    rosterd.ok("integrate", "uninstall", "codex")
    assert rosterd.files() == originals


def test_install_twice_is_install_once(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "codex")
    first = rosterd.files()
    assert "already installed" in rosterd.ok("integrate", "install", "codex")
    assert rosterd.files() == first


def test_a_daemon_setting_the_user_chose_is_kept(rosterd: Rosterd) -> None:
    home = codex_home(rosterd)
    home.mkdir()
    (home / "config.toml").write_text("[features]\ndaemon_auto_start = true\n")
    rosterd.ok("integrate", "install", "codex")
    assert config(rosterd)["features"] == {"daemon_auto_start": True}
    code, out = rosterd.status("codex")
    assert code == 0 and "daemon_auto_start is on" in out


def test_trust_codex_recorded_itself_is_left_to_codex(rosterd: Rosterd) -> None:
    home = codex_home(rosterd)
    home.mkdir()
    key = trust_key(home / "hooks.json", "Stop", 0)
    mine = trust_hash("Stop", "rosterd-hook codex", 3)
    (home / "config.toml").write_text(f'[hooks.state."{key}"]\ntrusted_hash = "{mine}"\n')
    rosterd.ok("integrate", "install", "codex")
    text = (home / "config.toml").read_text()
    assert text.count(key) == 1
    assert rosterd.status("codex")[0] == 0


def test_status_exit_codes(rosterd: Rosterd) -> None:
    code, out = rosterd.status("codex")
    assert (code, out.startswith("codex: not installed")) == (1, True)
    rosterd.ok("integrate", "install", "codex")
    assert rosterd.status("codex")[0] == 0
    path = codex_home(rosterd) / "config.toml"
    path.write_text(path.read_text().replace("sha256:", "sha256:0", 1))
    code, out = rosterd.status("codex")
    assert (code, out.startswith("codex: outdated")) == (1, True)
    assert "until they are trusted" in out
    rosterd.ok("integrate", "install", "codex")
    assert rosterd.status("codex")[0] == 0
    document = hooks(rosterd)
    document["hooks"]["Stop"][0]["hooks"][0]["timeout"] = 30
    (codex_home(rosterd) / "hooks.json").write_text(json.dumps(document))
    assert rosterd.status("codex")[0] == 1


def test_invalid_toml_is_refused_and_nothing_is_written(rosterd: Rosterd) -> None:
    home = codex_home(rosterd)
    home.mkdir()
    (home / "config.toml").write_text("model = \n")
    proc = rosterd.run("integrate", "install", "codex")
    assert proc.returncode == 1 and "not valid TOML" in proc.stderr
    assert rosterd.files() == {".codex/config.toml": b"model = \n"}


def test_codex_home_is_honoured(rosterd: Rosterd) -> None:
    elsewhere = rosterd.home / "cx"
    assert rosterd.run("integrate", "install", "codex", env={"CODEX_HOME": str(elsewhere)}).returncode == 0
    assert sorted(rosterd.files()) == ["cx/config.toml", "cx/hooks.json"]


def test_the_real_codex_trusts_every_installed_hook(rosterd: Rosterd, agent_bin: Path) -> None:
    """codex's own ``app-server`` lists roost's hooks as trusted: they will run."""
    codex = agent_bin / "codex"
    rosterd.ok("integrate", "install", "codex")
    requests = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "roost-tests", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(rosterd.home)]}},
    ]
    with subprocess.Popen(
        [str(codex), "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=rosterd.env,
        text=True,
    ) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        server.stdin.flush()
        deadline = time.monotonic() + 60
        listed = None
        while listed is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == 2:
                listed = message["result"]["data"][0]["hooks"]
        server.kill()
    assert listed is not None, "codex app-server never answered hooks/list"
    ours = {h["eventName"]: h["trustStatus"] for h in listed if h["command"] == "rosterd-hook codex"}
    assert len(ours) == len(EVENTS)
    assert set(ours.values()) == {"trusted"}
