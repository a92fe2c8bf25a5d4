"""``scripts/link-commands``, which set-up runs: links to roost's commands where a shell finds them.

Every run has its own HOME and, where it says so, ``ROOST_BIN_DIR`` in a temp dir: no test
writes to the real ``~/.local/bin``. What the doctors make of the links (``roost.faces.cli.installation``)
is tested with each doctor.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from roost.faces.cli.installation import COMMANDS
from tests.conftest import BIN

LINKER = BIN.parent.parent / "scripts" / "link-commands"  # in the checkout the .venv is in
BARE_PATH = "/usr/bin:/bin"
OURS = {name: str(BIN / name) for name in COMMANDS}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    directory = tmp_path / "home"
    directory.mkdir()
    return directory


def link_commands(home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"HOME": str(home), "PATH": BARE_PATH, "SHELL": "/bin/bash", "LANG": "C.UTF-8"}
    return subprocess.run([str(LINKER)], env={**base, **env}, capture_output=True, text=True, timeout=30)


def links(directory: Path) -> dict[str, str]:
    return {name: os.readlink(directory / name) for name in COMMANDS if (directory / name).is_symlink()}


def test_links_each_command_into_local_bin_and_says_how_to_put_it_on_path(home: Path) -> None:
    proc = link_commands(home)
    assert proc.returncode == 0, proc.stdout
    local = home / ".local" / "bin"
    assert links(local) == OURS
    assert proc.stdout.splitlines() == [
        *(f"linked ~/.local/bin/{name} -> {BIN / name}" for name in COMMANDS),
        "~/.local/bin is not on PATH, so a new shell will not find roost; add it to your profile:",
        "    echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> ~/.bashrc",
    ]
    assert proc.stderr == ""


def test_a_second_run_changes_nothing_and_says_nothing(home: Path) -> None:
    local = home / ".local" / "bin"
    assert link_commands(home).returncode == 0
    before = {name: made(local / name) for name in COMMANDS}
    proc = link_commands(home, PATH=f"{local}:{BARE_PATH}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert {name: made(local / name) for name in COMMANDS} == before


def made(link: Path) -> tuple[int, int, int, str]:
    """What a run that changes a link changes: its inode, its times of change and its target
    (not its access time: reading a link is no change, and the run reads them)."""
    found = link.lstat()
    return found.st_ino, found.st_mtime_ns, found.st_ctime_ns, os.readlink(link)


def test_roost_bin_dir_moves_the_links(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "bin"
    proc = link_commands(home, ROOST_BIN_DIR=str(elsewhere), SHELL="/usr/bin/zsh")
    assert proc.returncode == 0
    assert links(elsewhere) == OURS
    assert not (home / ".local" / "bin").exists()
    assert f"    echo 'export PATH=\"{elsewhere}:$PATH\"' >> ~/.zshrc" in proc.stdout.splitlines()


def test_never_replaces_what_it_did_not_make(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "roost").write_text("#!/bin/sh\necho mine\n")
    other = tmp_path / "other-checkout" / ".venv" / "bin" / "rosterd"
    other.parent.mkdir(parents=True)
    other.write_text("")
    (bin_dir / "rosterd").symlink_to(other)
    proc = link_commands(home, ROOST_BIN_DIR=str(bin_dir), PATH=f"{bin_dir}:{BARE_PATH}")
    assert proc.returncode == 1
    assert (bin_dir / "roost").read_text() == "#!/bin/sh\necho mine\n"
    assert links(bin_dir) == {
        "rosterd": str(other),
        "rosterd-hook": OURS["rosterd-hook"],
        "rosterd-holder": OURS["rosterd-holder"],
    }
    assert proc.stdout.splitlines() == [
        f"left {bin_dir}/roost alone: it is not a link roost made; move it aside to use this checkout's",
        f"left {bin_dir}/rosterd alone: it links to {other}; remove it to use this checkout's",
        f"linked {bin_dir}/rosterd-hook -> {BIN / 'rosterd-hook'}",
        f"linked {bin_dir}/rosterd-holder -> {BIN / 'rosterd-holder'}",
    ]


def test_a_link_left_by_a_checkout_that_is_gone_is_replaced(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gone = tmp_path / "moved-away" / ".venv" / "bin" / "roost"
    (bin_dir / "roost").symlink_to(gone)
    proc = link_commands(home, ROOST_BIN_DIR=str(bin_dir), PATH=f"{bin_dir}:{BARE_PATH}")
    assert proc.returncode == 0
    assert links(bin_dir) == OURS
    assert proc.stdout.splitlines()[0] == (
        f"linked {bin_dir}/roost -> {BIN / 'roost'} (it pointed at {gone}, which is gone)"
    )


def test_no_home_and_no_bin_dir_is_said_and_fails(tmp_path: Path) -> None:
    proc = subprocess.run([str(LINKER)], env={"PATH": BARE_PATH}, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "neither HOME nor ROOST_BIN_DIR is set" in proc.stdout


def test_outside_a_checkout_setup_links_only_where_nothing_is_in_the_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rosterd setup``'s own linking, for an installation that is no checkout (no
    ``scripts/link-commands`` beside its ``bin``)."""
    from roost.base.errors import SetupError
    from roost.faces.cli import installation

    commands = tmp_path / "prefix" / "bin"
    commands.mkdir(parents=True)
    for name in COMMANDS:
        (commands / name).write_text("#!/bin/sh\n")
    bin_dir = tmp_path / "links"
    monkeypatch.setenv("ROOST_BIN_DIR", str(bin_dir))
    assert installation.fix_command(commands).startswith(f"mkdir -p {bin_dir} && ln -s {commands / 'roost'} ")
    assert installation.link(commands) == [
        f"linked {bin_dir / name} -> {commands / name}" for name in COMMANDS
    ]
    assert installation.linked(commands) and installation.link(commands) == []
    (bin_dir / "rosterd").unlink()
    (bin_dir / "rosterd").write_text("mine\n")
    with pytest.raises(SetupError, match=f"left {bin_dir / 'rosterd'} alone: it is not a link to"):
        installation.link(commands)
    assert (bin_dir / "rosterd").read_text() == "mine\n"
