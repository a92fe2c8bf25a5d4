"""``roost doctor``: one line per check, the exact fix for each problem, exit 1 only on a fail."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from roost.faces.cli.installation import COMMANDS
from tests.conftest import BIN

REAL_TMUX = shutil.which("tmux")
CHECKOUT = BIN.parent.parent  # the .venv is in the checkout


@pytest.fixture
def fakebin(tmp_path: Path) -> Path:
    """A directory first on PATH for stand-ins: claude, rosterd, preen, tmux. Beside it,
    ``commands`` (next on PATH) links roost's own commands, as set-up leaves them."""
    directory = tmp_path / "fakebin"
    directory.mkdir()
    (tmp_path / "commands").mkdir()
    for name in COMMANDS:
        (tmp_path / "commands" / name).symlink_to(BIN / name)
    return directory


def script(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def doctor(roost, fakebin: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return roost.run("doctor", env={"PATH": f"{fakebin}:{fakebin.parent / 'commands'}:/usr/bin:/bin", **env})


def line_with(proc, text: str) -> str:
    found = [line for line in proc.stdout.splitlines() if text in line]
    assert len(found) == 1, proc.stdout
    return found[0]


def real_version() -> str:
    return subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()


def test_healthy_setup_exits_0(roost, fakebin):
    roost.start()
    script(fakebin, "preen", "cat")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 0, proc.stdout
    assert all(line[:6] in ("ok    ", "warn  ") for line in proc.stdout.splitlines())
    assert line_with(proc, real_version()).startswith("ok ")
    assert line_with(proc, f"roost server running on socket '{roost.socket}'").startswith("ok ")
    assert line_with(proc, "roost's own tmux config").startswith("ok ")
    assert line_with(proc, "@roost-bin is /").startswith("ok ")
    assert line_with(proc, "kept replies in").startswith("ok ")
    assert line_with(proc, "events log on").startswith("ok ")
    assert line_with(proc, "renders replies with preen (on PATH)").startswith("ok ")
    assert line_with(proc, "roost, rosterd, rosterd-hook and rosterd-holder are on PATH").startswith("ok ")
    assert "integration" not in proc.stdout  # no harness on PATH, nothing to check


def test_no_server_yet_is_no_fault(roost, fakebin):
    """Right after ``make run`` no tmux server runs: roost starts one with the first session."""
    script(fakebin, "preen", "cat")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 0
    assert line_with(proc, "no roost tmux server").startswith("ok ")
    assert f"on socket '{roost.socket}' yet, which is fine: the first session starts it" in proc.stdout
    assert "`roost new -d`" in proc.stdout
    assert "@roost-bin" not in proc.stdout
    assert "warn" not in proc.stdout


def test_missing_preen_is_a_warning_that_says_what_it_is_for(roost, fakebin):
    roost.start()
    proc = doctor(roost, fakebin)
    assert proc.returncode == 0
    line = line_with(proc, "roost read --render")
    assert line.startswith("warn")
    assert "`roost read --render` prints replies unrendered" in line
    assert "markdown and diffs with preen, which is not on PATH (optional" in line


def test_roost_bin_unset_fails_and_names_the_fix_that_works(roost, fakebin):
    roost.start()
    roost.tmux("set-option", "-gu", "@roost-bin")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 1
    line = line_with(proc, "@roost-bin is not set")
    assert line.startswith("fail")
    fix = line.split("`")[1]
    assert fix.startswith(f"tmux -S {roost.socket} set-option -g @roost-bin /")
    subprocess.run(shlex.split(fix), check=True, env=roost.env)
    assert doctor(roost, fakebin).returncode == 0


def test_roost_bin_pointing_nowhere_fails(roost, fakebin):
    roost.start()
    roost.tmux("set-option", "-g", "@roost-bin", "/nonexistent/roost")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 1
    assert line_with(proc, "/nonexistent/roost").startswith("fail")


def test_a_server_without_roosts_config_fails_and_names_the_fix_that_works(roost, fakebin):
    roost.start()
    roost.tmux("set-hook", "-gu", "pane-exited")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 1
    line = line_with(proc, "not started with roost's own tmux config")
    assert line.startswith("fail") and "pane-exited" in line
    fix = line.split("`")[1]
    assert fix.startswith(f"tmux -S {roost.socket} source-file /") and fix.endswith("roost.tmux.conf")
    subprocess.run(shlex.split(fix), check=True, env=roost.env)
    assert doctor(roost, fakebin).returncode == 0


def test_a_plain_tmux_server_on_the_socket_fails(roost, fakebin):
    subprocess.run(
        ["tmux", "-f", "/dev/null", "-S", roost.socket, "new-session", "-d"], check=True, env=roost.env
    )
    proc = doctor(roost, fakebin)
    assert proc.returncode == 1
    assert line_with(proc, "not started with roost's own tmux config").startswith("fail")
    assert line_with(proc, "@roost-bin is not set").startswith("fail")


def test_socket_by_name_names_the_fix_with_dash_L(roost, fakebin, tmp_path):
    env = {"ROOST_SOCKET": "doctortest", "TMUX_TMPDIR": str(tmp_path)}
    try:
        assert roost.run("new", "-d", env=env).returncode == 0
        subprocess.run(
            ["tmux", "-L", "doctortest", "set-option", "-gu", "@roost-bin"], env={**roost.env, **env}
        )
        proc = doctor(roost, fakebin, **env)
        assert "`tmux -L doctortest set-option -g @roost-bin /" in proc.stdout
        assert "(name," in line_with(proc, "roost server running")
    finally:
        roost.run("kill", env=env)


def test_records_and_log_off_are_reported(roost, fakebin):
    roost.start()
    proc = doctor(roost, fakebin, ROOST_RECORD_DIR="")
    assert proc.returncode == 0
    assert line_with(proc, "kept replies are off").startswith("ok")
    assert line_with(proc, "events log is off").startswith("ok")
    proc = doctor(roost, fakebin, ROOST_RECORD_DIR="", ROOST_EVENTS=str(roost.root / "ev"))
    assert line_with(proc, f"events log on, in {roost.root / 'ev'}").startswith("ok")


def test_a_records_dir_that_cannot_be_made_fails(roost, fakebin):
    roost.start()
    blocker = roost.root / "a-file"
    blocker.write_text("")
    proc = doctor(roost, fakebin, ROOST_RECORD_DIR=str(blocker / "panes"))
    assert proc.returncode == 1
    line = line_with(proc, "kept replies in")
    assert line.startswith("fail") and "is not a directory" in line and "ROOST_RECORD_DIR" in line


def reports(state: str) -> str:
    """A stand-in ``rosterd`` answering ``integrate status --json`` with ``state``."""
    doc = (
        '{"schema":1,"command":"integrate status","integrations":'
        f'[{{"harness":"claude","state":"{state}","paths":[],"detail":null}}]}}'
    )
    return f"echo '{doc}'; [ {shlex.quote(state)} = installed ]"


def test_integration_installed(roost, fakebin):
    script(fakebin, "claude", "exit 0")
    script(fakebin, "rosterd", reports("installed"))
    proc = doctor(roost, fakebin)
    assert line_with(proc, "claude integration installed").startswith("ok")


@pytest.mark.parametrize("state", ["not installed", "outdated"])
def test_integration_missing_or_outdated_names_the_fix(roost, fakebin, state):
    script(fakebin, "claude", "exit 0")
    script(fakebin, "rosterd", reports(state))
    proc = doctor(roost, fakebin)
    assert proc.returncode == 0
    line = line_with(proc, "claude is on PATH")
    assert line.startswith("warn") and f"is {state}: `rosterd integrate install claude`" in line


def test_the_named_integration_fix_works_with_the_real_rosterd(roost, fakebin):
    script(fakebin, "claude", "exit 0")
    path = f"{fakebin}:{BIN}:/usr/bin:/bin"
    proc = roost.run("doctor", env={"PATH": path})
    fix = line_with(proc, "claude is on PATH").split("`")[1]
    assert fix == "rosterd integrate install claude"
    assert (
        subprocess.run(shlex.split(fix), env={**roost.env, "PATH": path}, capture_output=True).returncode == 0
    )
    proc = roost.run("doctor", env={"PATH": path})
    assert line_with(proc, "claude integration installed").startswith("ok")


@pytest.mark.parametrize(
    ("rosterd", "said"),
    [
        (None, "could not ask rosterd"),
        ("echo 'usage: rosterd COMMAND' >&2; exit 2", "could not tell (exit 2"),
    ],
)
def test_integration_unknown_degrades_to_a_warning(roost, fakebin, rosterd, said):
    script(fakebin, "claude", "exit 0")
    if rosterd:
        script(fakebin, "rosterd", rosterd)
    else:
        (fakebin.parent / "commands" / "rosterd").unlink()
    proc = doctor(roost, fakebin)
    line = line_with(proc, "claude")
    assert line.startswith("warn") and said in line
    if rosterd:
        assert proc.returncode == 0
    else:  # no rosterd on PATH at all: that is a fail of its own, with its fix
        assert proc.returncode == 1
        assert line_with(proc, "rosterd is not on PATH").startswith("fail")


@pytest.mark.parametrize(
    ("version", "level", "said"),
    [
        ("tmux 3.5a", "warn", "may say lossy"),
        ("tmux 3.4", "warn", "may say lossy"),
        ("tmux 3.0", "fail", "too old"),
    ],
)
def test_tmux_versions(roost, fakebin, version, level, said):
    script(fakebin, "tmux", f'[ "$1" = -V ] && {{ echo "{version}"; exit 0; }}; exec {REAL_TMUX} "$@"')
    proc = doctor(roost, fakebin)
    line = line_with(proc, version)
    assert line.startswith(level) and said in line
    assert proc.returncode == (1 if level == "fail" else 0)


def test_tmux_missing_fails(roost, fakebin):
    proc = roost.run("doctor", env={"PATH": str(fakebin)})
    assert proc.returncode == 1
    assert line_with(proc, "tmux is not installed").startswith("fail")
    assert "server" not in proc.stdout


def test_doctor_takes_no_arguments(roost):
    proc = roost.run("doctor", "--fix")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage: roost doctor")


def test_commands_not_on_path_fail_and_name_the_fixes_that_work(roost):
    """Set-up's links are missing: the fix is the checkout's link-commands. Run, it links them
    into ~/.local/bin, which is not on PATH yet: the fix is then the profile line, and a new
    shell that reads the profile finds every command."""
    bare = {"PATH": "/usr/bin:/bin"}
    proc = roost.run("doctor", env=bare)
    assert proc.returncode == 1
    line = line_with(proc, "are not on PATH")
    linker = CHECKOUT / "scripts" / "link-commands"
    assert line == f"fail  roost, rosterd, rosterd-hook and rosterd-holder are not on PATH: `{linker}`"
    linked = subprocess.run(line.split("`")[1], env={**roost.env, **bare}, capture_output=True, text=True)
    assert linked.returncode == 0, linked.stdout
    local = roost.root / "home" / ".local" / "bin"
    assert all((local / name).resolve() == (BIN / name).resolve() for name in COMMANDS)

    proc = roost.run("doctor", env=bare)
    assert proc.returncode == 1
    profile_line = "echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> ~/.profile"  # SHELL is /bin/sh
    assert line_with(proc, "are not on PATH").endswith(
        f"are not on PATH: add {local} to PATH with `{profile_line}`, then open a new shell"
    )
    assert profile_line in linked.stdout  # link-commands said the same
    subprocess.run(["sh", "-c", profile_line], env={**roost.env, **bare}, check=True)
    new_shell = subprocess.run(
        ["sh", "-c", ". ~/.profile && roost doctor"],
        env={**roost.env, **bare},
        capture_output=True,
        text=True,
    )
    assert new_shell.returncode == 0, new_shell.stdout
    assert (
        line_with(new_shell, "are on PATH")
        == f"ok    roost, rosterd, rosterd-hook and rosterd-holder are on PATH (in {local})"
    )


def test_another_installations_command_first_on_path_is_a_warning(roost, fakebin):
    script(fakebin, "roost", "exit 0")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 0
    line = line_with(proc, "another installation's roost")
    assert line.startswith("warn") and f"({fakebin / 'roost'})" in line and f"{BIN / 'roost'}" in line


def test_a_bad_agent_manifest_is_a_fail_naming_the_file_and_the_field(roost, fakebin):
    roost.start()
    script(fakebin, "preen", "cat")
    agents = roost.root / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    (agents / "codex.toml").write_text("[hook]\ntimeout = true\n")
    proc = doctor(roost, fakebin)
    assert proc.returncode == 1, proc.stdout
    line = line_with(proc, "agent manifest ")
    assert line.startswith("fail ")
    assert f"{agents / 'codex.toml'} (codex): [hook]: timeout must be an integer, got True" in line
    assert line.endswith("this file is left out until it is fixed")
    (agents / "codex.toml").unlink()
    healthy = doctor(roost, fakebin)
    assert line_with(healthy, "every agent manifest is usable").startswith("ok ")
