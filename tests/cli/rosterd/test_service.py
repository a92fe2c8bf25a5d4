"""``rosterd service install|uninstall|status`` on Linux, run as the real command in a machine of
its own: where no user service manager answers (this container, CI) and, through the stand-in
manager, where one does."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from roost.services.autostart import systemd
from tests.cli.rosterd.sandbox import Machine, machine
from tests.conftest import BIN
from tests.contracts.tables import names, table

__all__ = ["machine"]

DOCUMENTS = {row["document"]: names(row["fields"]) for row in table("`rosterd --json` documents")}
STATUS_FIELDS = ["schema", "command", *DOCUMENTS["service status"]]
HOOK_PORT = 8792
"""``[node] hook_port``'s default: the port the socket unit holds."""
UNITS = "rosterd.socket and rosterd.service"


def expected_unit(machine: Machine) -> str:
    """The unit install must write in ``machine``: this installation's rosterd, and the variables
    the machine's environment sets among those a unit carries."""
    carried = {
        name: machine.env[name]
        for name in ("PATH", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR", "ROOST_SOCKET")
    }
    return systemd.unit(str(BIN / "rosterd"), carried, HOOK_PORT)


def socket(machine: Machine) -> Path:
    return machine.unit.with_name("rosterd.socket")


def calls(state: Path) -> list[list[str]]:
    return json.loads(state.read_text())["calls"]


def test_without_a_service_manager_install_writes_the_unit_says_so_and_exits_1(machine: Machine) -> None:
    proc = machine.rosterd("service", "install")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert re.fullmatch(
        rf"rosterd service: wrote {re.escape(str(machine.unit))} "
        rf"\(wrote {re.escape(str(socket(machine)))}\); "
        r"not enabled or started: "
        r"(systemctl is not installed|no user service manager answers \(systemctl --user: .+\))\. "
        r"Once a user service manager runs \(a login session, or `loginctl enable-linger`\), start it with "
        r"`systemctl --user daemon-reload && systemctl --user enable --now rosterd.socket rosterd.service`\n",
        proc.stderr,
    ), proc.stderr
    assert machine.unit.read_text() == expected_unit(machine)
    assert socket(machine).read_text() == systemd.socket_unit(HOOK_PORT)
    assert "ListenStream=127.0.0.1:8792\n" in socket(machine).read_text()
    written = machine.unit.stat()

    again = machine.rosterd("service", "install")
    assert again.returncode == 1
    assert again.stderr.startswith(f"rosterd service: unchanged: {machine.unit}; not enabled or started: ")
    assert machine.unit.stat().st_mtime_ns == written.st_mtime_ns  # not even rewritten

    status = machine.json("service", "status", "--json")
    assert list(status) == STATUS_FIELDS
    assert status["command"] == "service status" and status["manager"] == "systemd"
    assert status["path"] == str(machine.unit)
    assert (status["installed"], status["current"], status["enabled"], status["active"]) == (
        True,
        True,
        None,
        None,
    )
    assert status["detail"] in again.stderr


def test_uninstall_removes_its_own_file_and_nothing_else(machine: Machine) -> None:
    machine.rosterd("service", "install")
    neighbour = machine.unit.with_name("other.service")
    neighbour.write_text("[Service]\nExecStart=/bin/true\n")
    proc = machine.rosterd("service", "uninstall")
    assert proc.returncode == 0, proc.stderr
    assert f"removed {machine.unit}" in proc.stdout.splitlines()
    assert not machine.unit.exists() and neighbour.read_text() == "[Service]\nExecStart=/bin/true\n"
    again = machine.rosterd("service", "uninstall")
    assert (again.returncode, again.stdout) == (0, f"not installed: there is no {machine.unit}\n")
    status = machine.json("service", "status", "--json", code=1)
    assert (status["installed"], status["current"]) == (False, False)


def test_a_file_roost_did_not_write_is_left_alone(machine: Machine) -> None:
    machine.unit.parent.mkdir(parents=True)
    mine = "[Unit]\nDescription=my own rosterd\n[Service]\nExecStart=/usr/local/bin/rosterd daemon\n"
    machine.unit.write_text(mine)
    refusal = f"{machine.unit} was not written by roost: left alone (move it aside to install roost's)"
    for verb in ("install", "uninstall"):
        proc = machine.rosterd("service", verb)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"rosterd service: {refusal}\n"), verb
        assert machine.unit.read_text() == mine
    status = machine.json("service", "status", "--json", code=1)
    assert (status["installed"], status["detail"]) == (False, refusal)


def test_with_a_service_manager_install_enables_and_starts_it_once(machine: Machine) -> None:
    state = machine.manager()
    proc = machine.rosterd("service", "install")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"wrote {machine.unit} (wrote {socket(machine)})",
        f"enabled {UNITS}: started at every login",
        f"started {UNITS} (the log: journalctl --user -u rosterd)",
    ]
    asked = [["--user", "show-environment"], ["--user", "is-enabled", "rosterd.service"]]
    asked.append(["--user", "is-active", "rosterd.service"])
    assert calls(state) == [
        *asked,
        ["--user", "daemon-reload"],
        ["--user", "enable", "rosterd.socket", "rosterd.service"],
        ["--user", "start", "rosterd.socket", "rosterd.service"],
    ]
    status = machine.json("service", "status", "--json")
    assert {key: status[key] for key in ("installed", "current", "enabled", "active", "detail")} == {
        "installed": True,
        "current": True,
        "enabled": True,
        "active": True,
        "detail": None,
    }

    before = len(calls(state))
    again = machine.rosterd("service", "install")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        f"unchanged: {machine.unit}",
        "rosterd.service is enabled and running",
    ]
    assert calls(state)[before:] == asked  # asked, and changed nothing


def test_a_changed_unit_is_rewritten_and_the_running_service_restarted(machine: Machine) -> None:
    state = machine.manager()
    assert machine.rosterd("service", "install").returncode == 0
    machine.env["ROOST_SOCKET"] = "elsewhere"
    proc = machine.rosterd("service", "install")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"updated {machine.unit}",
        "restarted rosterd.service, which ran the unit as it was",
    ]
    assert machine.unit.read_text() == expected_unit(machine)
    assert calls(state)[-4:] == [
        ["--user", "daemon-reload"],
        ["--user", "stop", "rosterd.service"],
        ["--user", "restart", "rosterd.socket"],
        ["--user", "restart", "rosterd.service"],
    ]


def test_uninstall_stops_and_disables_before_removing(machine: Machine) -> None:
    state = machine.manager()
    assert machine.rosterd("service", "install").returncode == 0
    proc = machine.rosterd("service", "uninstall")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "stopped and disabled rosterd.service and rosterd.socket",
        f"removed {socket(machine)}",
        f"removed {machine.unit}",
    ]
    assert not socket(machine).exists()
    assert calls(state)[-2:] == [
        ["--user", "disable", "--now", "rosterd.service", "rosterd.socket"],
        ["--user", "daemon-reload"],
    ]
    assert json.loads(state.read_text())["enabled"] is False
    status = machine.json("service", "status", "--json", code=1)
    assert (status["installed"], status["enabled"], status["active"]) == (False, False, False)


def test_a_unit_linked_from_dotfiles_is_written_there_and_uninstall_takes_both(machine: Machine) -> None:
    machine.manager()
    kept = machine.root / "dotfiles" / "rosterd.service"
    kept.parent.mkdir()
    kept.write_text(expected_unit(machine).replace("daemon", "daemon --old", 1))  # an older one of roost's
    machine.unit.parent.mkdir(parents=True)
    machine.unit.symlink_to(kept)
    proc = machine.rosterd("service", "install")
    assert proc.returncode == 0, proc.stderr
    assert machine.unit.is_symlink() and kept.read_text() == expected_unit(machine)
    proc = machine.rosterd("service", "uninstall")
    assert proc.returncode == 0, proc.stderr
    assert not os.path.lexists(machine.unit) and not kept.exists()


def test_a_unit_that_cannot_be_written_is_refused_in_one_line(machine: Machine) -> None:
    state = machine.manager()
    machine.unit.parent.mkdir(parents=True)
    machine.unit.symlink_to(machine.root / "nowhere")
    proc = machine.rosterd("service", "install")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"rosterd service: {machine.unit} is a symbolic link to {machine.root / 'nowhere'}, "
        "which does not exist; left untouched\n"
    )
    machine.unit.unlink()
    assert machine.rosterd("service", "install").returncode == 0
    machine.unit.parent.chmod(0o555)
    try:
        before = calls(state)
        proc = machine.rosterd("service", "uninstall")
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == (
            f"rosterd service: {machine.unit} cannot be written: its directory {machine.unit.parent} "
            "is read-only; left untouched\n"
        )
        assert calls(state) == before  # not stopped for nothing
        assert machine.unit.read_text() == expected_unit(machine)
    finally:
        machine.unit.parent.chmod(0o755)


def test_a_manager_that_refuses_fails_install_with_its_words(machine: Machine) -> None:
    machine.manager(refuse="start")
    proc = machine.rosterd("service", "install")
    assert proc.returncode == 1
    assert proc.stderr.startswith("rosterd service: `")
    assert proc.stderr.endswith(
        " --user start rosterd.socket rosterd.service` failed: Job for rosterd failed: "
        "start refused by the fake systemctl\n"
    )
    assert machine.unit.read_text() == expected_unit(machine)  # written; running it is what failed


def test_status_in_words(machine: Machine) -> None:
    machine.manager()
    proc = machine.rosterd("service", "status")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "manager    systemd",
        f"file       {machine.unit}",
        "installed  no",
        "enabled    no",
        "active     no",
    ]
    machine.rosterd("service", "install")
    machine.unit.write_text(machine.unit.read_text().replace("RestartSec=3", "RestartSec=9"))
    proc = machine.rosterd("service", "status")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[2:] == [
        "installed  yes, but not as this installation would write it now",
        "enabled    yes",
        "active     yes",
    ]


def test_a_malformed_call_is_refused_and_changes_nothing(machine: Machine) -> None:
    for args in (
        ("service",),
        ("service", "bogus"),
        ("service", "install", "extra"),
        ("service", "status", "-x"),
    ):
        proc = machine.rosterd(*args)
        assert proc.returncode == 1 and proc.stdout == "", args
        assert proc.stderr.startswith("usage: rosterd service"), args
    assert not machine.unit.exists()
    helped = machine.rosterd("service", "--help")
    assert helped.returncode == 0 and "Exit status:" in helped.stdout
