"""The two unit files, generated on Linux and checked: the systemd unit by ``systemd-analyze
verify`` where it is installed and, everywhere, against the keys systemd documents for each
section; the LaunchAgent parsed with ``plistlib`` and checked key by key."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from roost.base.errors import SetupError
from roost.services import autostart
from roost.services.autostart import common, launchd, systemd
from tests.conftest import BIN

PROGRAM = str(BIN / "rosterd")
ENVIRONMENT = {"PATH": "/home/me/.local/bin:/usr/bin:/bin", "XDG_CONFIG_HOME": "/home/me/.config"}

# The keys systemd documents for each section this unit may use (systemd.unit(5) for [Unit]
# and [Install], systemd.service(5), systemd.exec(5) and systemd.kill(5) for [Service]), each
# with what its value must look like.
TIME = re.compile(r"\d+(s|min|ms)?")
DOCUMENTED = {
    "Unit": {
        "Description": re.compile(r"\S.*"),
        "StartLimitIntervalSec": TIME,
        "StartLimitBurst": re.compile(r"\d+"),
    },
    "Service": {
        "Type": re.compile(r"simple|exec|forking|oneshot|dbus|notify|idle"),
        "ExecStart": re.compile(r'"/[^"]*" daemon'),
        "Restart": re.compile(r"no|on-success|on-failure|on-abnormal|on-watchdog|on-abort|always"),
        "RestartSec": TIME,
        "KillMode": re.compile(r"control-group|mixed|process|none"),
        "RuntimeDirectory": re.compile(r"[\w.-]+"),
        "RuntimeDirectoryMode": re.compile(r"0?[0-7]{3}"),
        "RuntimeDirectoryPreserve": re.compile(r"yes|no|restart"),
        "Environment": re.compile(r'"[A-Z_][A-Z0-9_]*=[^"]*"'),
        "StandardOutput": re.compile(r"inherit|null|tty|journal|kmsg|journal\+console|kmsg\+console"),
        "StandardError": re.compile(r"inherit|null|tty|journal|kmsg|journal\+console|kmsg\+console"),
        "SyslogIdentifier": re.compile(r"\S+"),
    },
    "Install": {"WantedBy": re.compile(r"[\w.@-]+\.target")},
}
REQUIRED = {"Unit": {"Description"}, "Service": {"ExecStart"}, "Install": {"WantedBy"}}


def parse(text: str) -> dict[str, list[tuple[str, str]]]:
    """A unit file as {section: [(key, value), …]}; comments and blank lines left out."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[(\w+)\]", line)
        if header:
            current = sections.setdefault(header[1], [])
            continue
        assert current is not None, f"{line!r} is outside any section"
        key, eq, value = line.partition("=")
        assert eq and key == key.strip(), f"{line!r} is not KEY=VALUE"
        current.append((key, value))
    return sections


def test_the_systemd_unit_uses_only_documented_keys_with_documented_values() -> None:
    sections = parse(systemd.unit(PROGRAM, ENVIRONMENT))
    assert set(sections) == set(DOCUMENTED)
    for name, entries in sections.items():
        keys = [key for key, _ in entries]
        assert REQUIRED[name] <= set(keys), name
        for key, value in entries:
            assert key in DOCUMENTED[name], f"[{name}] {key} is no key systemd documents there"
            assert DOCUMENTED[name][key].fullmatch(value), f"[{name}] {key}={value}"
        repeated = {key for key in keys if keys.count(key) > 1}
        assert repeated <= {"Environment"}, repeated


def test_the_systemd_unit_says_what_the_service_needs() -> None:
    entries = dict(
        (key, value)
        for key, value in parse(systemd.unit(PROGRAM, ENVIRONMENT))["Service"]
        if key != "Environment"
    )
    assert entries["ExecStart"] == f'"{PROGRAM}" daemon'
    assert entries["Restart"] == "on-failure" and int(entries["RestartSec"]) > 0
    assert entries["KillMode"] == "process"  # the holders and tmux outlive a restart
    assert entries["StandardOutput"] == entries["StandardError"] == "journal"
    # The daemon's runtime directory is $XDG_RUNTIME_DIR/roost (roost.base.paths): the unit makes
    # that directory, private, kept across stops, and gives the daemon the same XDG_RUNTIME_DIR.
    assert entries["RuntimeDirectory"] == "roost" and entries["RuntimeDirectoryMode"] == "0700"
    assert entries["RuntimeDirectoryPreserve"] == "yes"
    environment = [
        value for key, value in parse(systemd.unit(PROGRAM, ENVIRONMENT))["Service"] if key == "Environment"
    ]
    assert environment == [
        '"XDG_RUNTIME_DIR=%t"',
        '"PATH=/home/me/.local/bin:/usr/bin:/bin"',
        '"XDG_CONFIG_HOME=/home/me/.config"',
    ]
    assert parse(systemd.unit(PROGRAM, ENVIRONMENT))["Install"] == [("WantedBy", "default.target")]


def test_the_unit_is_a_pure_function_of_its_arguments() -> None:
    assert systemd.unit(PROGRAM, ENVIRONMENT) == systemd.unit(PROGRAM, dict(ENVIRONMENT))
    assert systemd.unit(PROGRAM, ENVIRONMENT) != systemd.unit(PROGRAM, {"PATH": "/bin"})
    assert launchd.plist("l", PROGRAM, ENVIRONMENT, "/log") == launchd.plist(
        "l", PROGRAM, dict(ENVIRONMENT), "/log"
    )


def test_quoting_keeps_spaces_quotes_backslashes_and_percent_signs() -> None:
    text = systemd.unit("/opt/my roost 100%/bin/rosterd", {"PATH": '/a b:/c\\d:%h:"q"'})
    assert 'ExecStart="/opt/my roost 100%%/bin/rosterd" daemon' in text.splitlines()
    assert 'Environment="PATH=/a b:/c\\\\d:%%h:\\"q\\""' in text.splitlines()
    with pytest.raises(SetupError, match="control character"):
        systemd.unit(PROGRAM, {"PATH": "/bin\n[Service]\nExecStartPre=/bin/evil"})
    for unsafe in ('/opt/"roost"/rosterd', "/opt/it's/rosterd", "/opt/back\\slash/rosterd"):
        with pytest.raises(
            SetupError, match="systemd starts no program whose path holds a quote or a backslash"
        ):
            systemd.unit(unsafe, {})


def _verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    runtime = tmp_path / "runtime"
    runtime.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_systemd_analyze_finds_nothing_wrong_where_it_is_installed(tmp_path: Path) -> None:
    """Where systemd is installed, its own checker reads the unit: no unknown key, no value it
    cannot parse, and the program it starts is there — found at a path with a space, a dollar
    and a percent sign in it, so the quoting is systemd's."""
    if shutil.which("systemd-analyze") is None:
        return  # the documented-keys test above is the check there
    odd = tmp_path / "odd dir $HOME 100%"
    odd.mkdir()
    (odd / "rosterd").symlink_to(PROGRAM)
    for program in (PROGRAM, str(odd / "rosterd")):
        unit = tmp_path / "rosterd.service"
        unit.write_text(systemd.unit(program, ENVIRONMENT))
        proc = _verify(unit, tmp_path)
        assert (proc.returncode, proc.stderr, proc.stdout) == (0, "", ""), program
    unit.write_text(systemd.unit(PROGRAM, ENVIRONMENT).replace("KillMode=process", "KillMode=sometimes"))
    assert "Failed to parse kill mode" in _verify(unit, tmp_path).stderr  # it reads what it is given


# launchd.plist(5): the keys a LaunchAgent may carry that this one uses, with their types.
PLIST_KEYS = {
    "Label": str,
    "ProgramArguments": list,
    "RunAtLoad": bool,
    "KeepAlive": dict,
    "AbandonProcessGroup": bool,
    "EnvironmentVariables": dict,
    "StandardOutPath": str,
    "StandardErrorPath": str,
}


def test_the_launch_agent_parses_and_says_what_the_service_needs() -> None:
    log = "/Users/me/Library/Logs/roost/rosterd.log"
    document = plistlib.loads(launchd.plist(launchd.LABEL, PROGRAM, ENVIRONMENT, log))
    assert {key: type(value) for key, value in document.items()} == PLIST_KEYS
    assert document["Label"] == launchd.LABEL == "dev.roost.rosterd"
    assert document["ProgramArguments"] == [PROGRAM, "daemon"]
    assert document["RunAtLoad"] is True
    assert document["KeepAlive"] == {
        "SuccessfulExit": False
    }  # again whenever it fails, not after a clean exit
    assert document["AbandonProcessGroup"] is True
    assert document["EnvironmentVariables"] == ENVIRONMENT
    assert document["StandardOutPath"] == document["StandardErrorPath"] == log


def test_each_platform_has_its_manager_and_others_are_told_to_run_the_daemon() -> None:
    assert autostart.manager("linux").kind == "systemd"
    assert autostart.manager("darwin").kind == "launchd"
    with pytest.raises(SetupError, match=r"no service unit for win32: run `rosterd daemon` yourself"):
        autostart.manager("win32")


def test_a_unit_carries_path_and_roosts_own_variables_only() -> None:
    environ = {
        "PATH": "/bin",
        "XDG_STATE_HOME": "/s",
        "ROOST_SOCKET": "work",
        "ANTHROPIC_API_KEY": "secret",
        "HOME": "/home/me",
        "XDG_CONFIG_HOME": "",
    }
    assert common.carried(environ) == {"PATH": "/bin", "XDG_STATE_HOME": "/s", "ROOST_SOCKET": "work"}
