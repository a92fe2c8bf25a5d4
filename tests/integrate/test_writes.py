"""How every integration writes a host's files: through a dotfiles manager's symbolic link to
the file it names, keeping the link; and never into a file it cannot write, saying so in one
line and changing nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integrate.conftest import Rosterd

SETTINGS = ".claude/settings.json"
CODEX_HOOKS = ".codex/hooks.json"
CODEX_CONFIG = ".codex/config.toml"
PLUGIN = ".config/opencode/plugins/roost.js"
FOREIGN = json.dumps(
    {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}, indent=2
)
CONFIG = 'model = "gpt-fake"\n\n[features]\nfoo = true\n'


def dotfiles(rosterd: Rosterd) -> Path:
    return rosterd.home.parent / "dotfiles"


def linked(rosterd: Rosterd, relpath: str, content: str) -> tuple[Path, Path]:
    """HOME/relpath as a relative link to the same path in a dotfiles repository that holds
    ``content``, as GNU Stow makes them; (the link, the file it names)."""
    target = dotfiles(rosterd) / relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    link = rosterd.home / relpath
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))
    return link, target


def tree(*roots: Path) -> dict[str, object]:
    """Every entry under ``roots``: a link's target, a file's mode and bytes, a directory's mode."""
    found: dict[str, object] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            info = path.lstat()
            if path.is_symlink():
                found[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                found[str(path)] = ("dir", info.st_mode)
            else:
                found[str(path)] = ("file", info.st_mode, path.read_bytes())
    return found


def refused(rosterd: Rosterd, action: str, harness: str, names: Path) -> str:
    """Run ``action`` expecting the one-line refusal a SetupError gives (exit 1) naming ``names``."""
    proc = rosterd.run("integrate", action, harness)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.startswith("rosterd integrate: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert str(names) in proc.stderr
    return proc.stderr


def test_claude_settings_linked_from_dotfiles_change_where_they_live(rosterd: Rosterd) -> None:
    link, target = linked(rosterd, SETTINGS, FOREIGN + "\n")
    pointer = os.readlink(link)
    rosterd.ok("integrate", "install", "claude")
    assert os.readlink(link) == pointer
    document = json.loads(target.read_text())
    assert document["model"] == "opus"
    assert document["hooks"]["Stop"][1] == {"hooks": [{"type": "command", "command": "rosterd-hook"}]}
    assert [p.name for p in target.parent.iterdir()] == ["settings.json"]  # nothing left beside it
    assert rosterd.status("claude")[0] == 0
    rosterd.ok("integrate", "uninstall", "claude")
    assert os.readlink(link) == pointer
    assert target.read_text() == FOREIGN + "\n"


def test_a_linked_file_only_roost_filled_is_emptied_and_the_link_kept(rosterd: Rosterd) -> None:
    link, target = linked(rosterd, SETTINGS, "{}\n")
    rosterd.ok("integrate", "install", "claude")
    rosterd.ok("integrate", "uninstall", "claude")
    assert link.is_symlink() and link.resolve() == target
    assert json.loads(target.read_text()) == {}


def test_codex_files_linked_from_dotfiles_change_where_they_live(rosterd: Rosterd) -> None:
    hooks_link, hooks_target = linked(rosterd, CODEX_HOOKS, FOREIGN + "\n")
    config_link, config_target = linked(rosterd, CODEX_CONFIG, CONFIG)
    links = {link: os.readlink(link) for link in (hooks_link, config_link)}
    rosterd.ok("integrate", "install", "codex")
    assert {link: os.readlink(link) for link in links} == links
    assert len(json.loads(hooks_target.read_text())["hooks"]["Stop"]) == 2
    assert "trusted_hash" in config_target.read_text()
    assert rosterd.status("codex")[0] == 0
    rosterd.ok("integrate", "uninstall", "codex")
    assert {link: os.readlink(link) for link in links} == links
    assert (hooks_target.read_text(), config_target.read_text()) == (FOREIGN + "\n", CONFIG)


def test_a_linked_plugin_is_updated_in_place_and_uninstall_removes_it_and_the_link(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "opencode")
    installed = (rosterd.home / PLUGIN).read_text()
    (rosterd.home / PLUGIN).unlink()
    link, target = linked(rosterd, PLUGIN, installed.replace("rosterd-hook", "rosterd-hook-old"))
    assert "installed the opencode plugin" in rosterd.ok("integrate", "install", "opencode")
    assert link.is_symlink() and target.read_text() == installed
    assert rosterd.status("opencode")[0] == 0
    said = rosterd.ok("integrate", "uninstall", "opencode")
    assert f"and the file it linked to, {target}" in said
    assert not os.path.lexists(link) and not target.exists()


@pytest.mark.parametrize(
    ("harness", "relpath"), [("claude", SETTINGS), ("codex", CODEX_HOOKS), ("opencode", PLUGIN)]
)
def test_a_link_that_names_nothing_is_refused(rosterd: Rosterd, harness: str, relpath: str) -> None:
    link = rosterd.home / relpath
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles(rosterd) / "gone")
    before = tree(rosterd.home)
    for action in ("install", "status", "uninstall"):  # no install could fix it: status says so
        error = refused(rosterd, action, harness, link)
        assert f"is a symbolic link to {dotfiles(rosterd) / 'gone'}, which does not exist" in error
    assert tree(rosterd.home) == before
    assert not dotfiles(rosterd).exists()


def test_a_link_to_a_file_that_cannot_be_written_is_refused(rosterd: Rosterd) -> None:
    link, target = linked(rosterd, SETTINGS, FOREIGN + "\n")
    target.chmod(0o444)  # as a Nix store's files are
    before = tree(rosterd.home, dotfiles(rosterd))
    error = refused(rosterd, "install", "claude", link)
    assert f"{link} (a link to {target}) is read-only; left untouched" in error
    assert tree(rosterd.home, dotfiles(rosterd)) == before


def read_only_file(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG if path.suffix == ".toml" else "{}\n")
    path.chmod(0o444)


def read_only_directory(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.parent.chmod(0o555)


def directory_in_its_place(path: Path) -> None:
    path.mkdir(parents=True)


UNWRITABLE: dict[str, tuple[Callable[[Path], None], str]] = {
    "read-only file": (read_only_file, "{path} is read-only; left untouched"),
    "read-only directory": (read_only_directory, "its directory {path.parent} is read-only; left untouched"),
    "directory": (directory_in_its_place, "cannot read {path}: Is a directory"),
}


@pytest.mark.parametrize("case", list(UNWRITABLE))
@pytest.mark.parametrize(("harness", "relpath"), [("claude", SETTINGS), ("codex", CODEX_CONFIG)])
def test_a_file_that_cannot_be_written_is_refused_in_one_line_and_nothing_changes(
    rosterd: Rosterd, harness: str, relpath: str, case: str
) -> None:
    make, words = UNWRITABLE[case]
    path = rosterd.home / relpath
    make(path)
    before = tree(rosterd.home)
    try:
        error = refused(rosterd, "install", harness, path.parent)
        assert words.format(path=path) in error, error
        assert tree(rosterd.home) == before  # codex's hooks.json was not written either
    finally:
        path.parent.chmod(0o755)


def test_uninstall_refuses_a_read_only_file_and_leaves_the_other_alone(rosterd: Rosterd) -> None:
    rosterd.ok("integrate", "install", "codex")
    config = rosterd.home / CODEX_CONFIG
    config.chmod(0o444)
    before = tree(rosterd.home)
    assert "is read-only; left untouched" in refused(rosterd, "uninstall", "codex", config)
    assert tree(rosterd.home) == before
