"""``rosterd setup --yes`` on a fresh machine (a HOME of its own, with stand-in ``claude`` and
``codex`` programs on PATH): the first run fixes what is missing, the second changes nothing;
what it cannot fix makes it exit 1 and say why."""

from __future__ import annotations

import json
import re
from pathlib import Path

from roost.daemon import config
from roost.faces.cli.installation import COMMANDS
from tests.cli.rosterd.sandbox import BARE_PATH, Machine, machine, make
from tests.conftest import BIN

__all__ = ["machine"]

WORDS = ("done", "fixed", "failed", "skipped", "optional", "not picked", "needs you")


def rows(stdout: str) -> dict[str, tuple[str, str]]:
    """A setup run's lines as {row: (word, detail)}; a detail's further lines are joined to it."""
    found: dict[str, tuple[str, str]] = {}
    last = None
    for text in stdout.splitlines()[:-1]:
        match = re.fullmatch(rf"(\S+(?: \S+)?) +({'|'.join(WORDS)}) +(.*)", text)
        if match:
            last = match[1]
            found[last] = (match[2], match[3])
        else:
            assert last is not None and text.startswith(" "), text
            found[last] = (found[last][0], f"{found[last][1]}\n{text.strip()}")
    return found


def harnesses(machine: Machine) -> None:
    machine.program("claude")
    machine.program("codex")


def test_setup_twice_fixes_then_changes_nothing(machine: Machine, tmp_path: Path) -> None:
    harnesses(machine)
    first = machine.rosterd("setup", "--yes")
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stderr == ""
    found = rows(first.stdout)
    assert found["commands"][0] == "done"
    assert found["config"] == ("fixed", f"wrote {machine.config}: every key at its default, commented out")
    assert found["service"][0] == "skipped"  # no user service manager answers here
    assert found["claude"] == ("done", str(machine.bin / "claude"))
    assert found["claude hooks"][0] == "fixed"
    assert found["claude hooks"][1].startswith("installed claude hooks (SessionStart, UserPromptSubmit")
    assert found["codex hooks"][0] == "fixed"
    assert found["claude gate"][0] == "fixed"  # the first set-up turns it on (docs/web.md says why)
    assert found["claude adapter"][0] == found["codex adapter"][0] == "optional"
    assert found["claude adapter"][1].endswith("; run `npm install -g @agentclientprotocol/claude-agent-acp`")
    assert found["pi"] == ("skipped", "not installed (no pi on PATH)")
    assert "pi hooks" not in found  # a harness that is not installed is one row
    assert first.stdout.splitlines()[-1] == "fixed 4 rows; every needed row is done"
    written = machine.files()
    assert machine.config.read_text() == config.default_text()
    assert {
        str(machine.home / ".claude" / "settings.json"),
        str(machine.home / ".codex" / "hooks.json"),
    } <= set(written)

    second = machine.rosterd("setup", "--yes")
    assert second.returncode == 0, second.stdout
    assert {word for word, _ in rows(second.stdout).values()} <= {"done", "skipped", "optional"}
    assert second.stdout.splitlines()[-1] == "nothing changed: every needed row is done"
    assert machine.files() == written  # byte for byte

    # What setup wrote into an agent's own config is what `rosterd integrate install` writes.
    other = make(tmp_path / "other")
    harnesses(other)
    assert other.rosterd("integrate", "install", "claude", "--gate").returncode == 0
    assert other.rosterd("integrate", "install", "codex").returncode == 0
    there, here = str(other.root), str(machine.root)  # codex's config names its hooks file by path
    elsewhere = {
        path.replace(there, here): data.replace(there.encode(), here.encode())
        for path, data in other.files().items()
    }
    assert {path: written[path] for path in elsewhere} == elsewhere


def test_setup_installs_the_service_where_a_service_manager_answers(machine: Machine) -> None:
    state = machine.manager()
    proc = machine.rosterd("setup", "--yes", "service")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.splitlines() == [
        f"service  fixed       wrote {machine.unit} (wrote {machine.unit.with_name('rosterd.socket')})",
        "                     enabled rosterd.socket and rosterd.service: started at every login",
        "                     started rosterd.socket and rosterd.service "
        "(the log: journalctl --user -u rosterd)",
        "fixed 1 row; every needed row is done",
    ]
    assert json.loads(state.read_text())["active"] is True
    again = machine.rosterd("setup", "--yes", "service")
    assert again.stdout.splitlines() == [
        f"service  done        {machine.unit}: enabled and running",
        "nothing changed: every needed row is done",
    ]


def test_a_row_that_needs_a_person_makes_setup_exit_1_with_its_reason(machine: Machine) -> None:
    harnesses(machine)
    machine.config.parent.mkdir(parents=True)
    machine.config.write_text("[node]\nloopback_prot = 1\n")
    settings = machine.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    proc = machine.rosterd("setup", "--yes")
    assert proc.returncode == 1
    found = rows(proc.stdout)
    assert found["config"] == (
        "needs you",
        f"{machine.config}: unknown key 'loopback_prot' in [node]; "
        "known: name, port, listen, loopback_port, hook_port",
    )
    assert found["claude hooks"][0] == "needs you"
    assert found["claude hooks"][1].startswith(f"{settings} is not valid JSON")
    assert found["codex hooks"][0] == "fixed"  # the rest is still done
    assert proc.stdout.splitlines()[-1] == "not done: config, claude hooks"
    assert settings.read_text() == "{not json" and machine.config.read_text() == "[node]\nloopback_prot = 1\n"


def test_a_fix_that_fails_makes_setup_exit_1_and_says_what_stood_in_the_way(machine: Machine) -> None:
    links = machine.root / "links"
    links.mkdir()
    (links / "roost").write_text("#!/bin/sh\necho mine\n")
    machine.env.update(PATH=f"{links}:{machine.bin}:{BARE_PATH}", ROOST_BIN_DIR=str(links))
    proc = machine.rosterd("setup", "--yes", "commands")
    assert proc.returncode == 1
    word, detail = rows(proc.stdout)["commands"]
    assert word == "failed"
    assert detail.startswith(f"left {links}/roost alone: it is not a link roost made")
    assert proc.stdout.splitlines()[-1] == "not done: commands"
    assert (links / "roost").read_text() == "#!/bin/sh\necho mine\n"


def test_a_settings_file_setup_cannot_write_fails_its_row_in_one_line(machine: Machine) -> None:
    harnesses(machine)
    settings = machine.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{}\n")
    settings.chmod(0o444)
    proc = machine.rosterd("setup", "--yes", "claude hooks")
    assert proc.returncode == 1 and proc.stderr == ""
    assert rows(proc.stdout)["claude hooks"] == ("failed", f"{settings} is read-only; left untouched")
    assert settings.read_text() == "{}\n"


def test_a_settings_link_to_nothing_is_a_row_that_needs_a_person(machine: Machine) -> None:
    harnesses(machine)
    settings = machine.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.symlink_to(machine.root / "dotfiles" / "settings.json")
    proc = machine.rosterd("setup", "--yes", "claude hooks")
    assert proc.returncode == 1 and proc.stderr == ""
    assert rows(proc.stdout)["claude hooks"] == (
        "needs you",
        f"{settings} is a symbolic link to {machine.root}/dotfiles/settings.json, which does not exist;"
        " left untouched",
    )
    assert settings.is_symlink() and not (machine.root / "dotfiles").exists()


def test_setup_links_the_commands_where_path_finds_them(machine: Machine) -> None:
    links = machine.root / "links"
    machine.env.update(PATH=f"{links}:{machine.bin}:{BARE_PATH}", ROOST_BIN_DIR=str(links))
    proc = machine.rosterd("setup", "--yes", "commands")
    assert proc.returncode == 0, proc.stdout
    word, detail = rows(proc.stdout)["commands"]
    assert word == "fixed"
    assert detail.splitlines() == [f"linked {links}/{name} -> {BIN / name}" for name in COMMANDS]
    again = machine.rosterd("setup", "--yes", "commands")
    assert rows(again.stdout)["commands"] == (
        "done",
        f"{', '.join(COMMANDS[:-1])} and {COMMANDS[-1]} are on PATH (in {links})",
    )


def test_links_off_path_are_done_but_the_profile_line_is_the_persons(machine: Machine) -> None:
    links = machine.root / "links"
    machine.env.update(PATH=f"{machine.bin}:{BARE_PATH}", ROOST_BIN_DIR=str(links))
    proc = machine.rosterd("setup", "--yes", "commands")
    assert proc.returncode == 1
    word, detail = rows(proc.stdout)["commands"]
    assert word == "failed"
    profile = f"echo 'export PATH=\"{links}:$PATH\"' >> ~/.profile"
    assert detail.endswith(f"add {links} to PATH with `{profile}`, then open a new shell")
    again = machine.rosterd("setup", "--yes", "commands")
    assert rows(again.stdout)["commands"][0] == "needs you"


def test_rows_can_be_named_and_an_unknown_one_is_refused(machine: Machine) -> None:
    proc = machine.rosterd("setup", "--yes", "config")
    assert proc.stdout.splitlines() == [
        f"config  fixed       wrote {machine.config}: every key at its default, commented out",
        "fixed 1 row; every needed row is done",
    ]
    refused = machine.rosterd("setup", "--yes", "nosuch")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith(
        "rosterd setup: no row 'nosuch' here; the rows are: commands, config, service, "
    )


def test_without_a_terminal_setup_asks_for_yes_and_changes_nothing(machine: Machine) -> None:
    harnesses(machine)
    proc = machine.rosterd("setup")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "usage: rosterd setup asks on a terminal: run it from one, or with --yes\n"
    assert machine.files() == {}


def test_the_first_setup_turns_the_gate_on_and_says_what_that_means(machine: Machine) -> None:
    harnesses(machine)
    machine.config.parent.mkdir(parents=True, exist_ok=True)
    machine.config.write_text("[harness.claude]\ngate_timeout_s = 300\n")
    first = machine.rosterd("setup", "--yes")
    assert first.returncode == 0, first.stdout + first.stderr
    word, said = rows(first.stdout)["claude gate"]
    settings = machine.home / ".claude" / "settings.json"
    assert (word, said.splitlines()[0]) == (
        "fixed",
        "on: a permission request can be answered from the web app, `rosterd allow`/`deny` and MCP as well "
        "as in the terminal, each held up to 300 s; "
        "`rosterd integrate install claude --no-gate` turns it off",
    )
    assert "with the gate (holds a permission request up to 300 s)" in said.splitlines()[1]
    assert "codex gate" not in rows(first.stdout)  # codex offers none
    (group,) = json.loads(settings.read_text())["hooks"]["PermissionRequest"]
    assert group["hooks"][0]["command"].split()[-1] == "--gate"
    again = machine.rosterd("setup", "--yes")
    assert rows(again.stdout)["claude gate"] == ("done", said.splitlines()[0])
    assert again.stdout.splitlines()[-1] == "nothing changed: every needed row is done"


def test_a_later_setup_keeps_the_gate_off_once_turned_off_and_says_how_to_turn_it_on(
    machine: Machine,
) -> None:
    harnesses(machine)
    assert machine.rosterd("setup", "--yes").returncode == 0
    assert machine.rosterd("integrate", "install", "claude", "--no-gate").returncode == 0
    settings = machine.home / ".claude" / "settings.json"
    before = settings.read_bytes()
    again = machine.rosterd("setup", "--yes")
    assert again.returncode == 0, again.stdout
    assert rows(again.stdout)["claude gate"] == (
        "optional",
        "off: its permission requests are answered in the terminal only; "
        "run `rosterd integrate install claude --gate`",
    )
    assert settings.read_bytes() == before
    named = machine.rosterd("setup", "--yes", "claude gate")  # asked for by name: turned on again
    assert rows(named.stdout)["claude gate"][0] == "fixed"
