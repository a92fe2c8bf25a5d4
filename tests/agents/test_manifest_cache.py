"""``manifest.load`` caches each parsed manifest, and never serves a stale or foreign copy.

The hook loads a manifest on every event; parsing TOML each time costs more than the rest of
an unchanged event, so ``load`` keeps the parsed table as JSON in the runtime directory,
keyed by the file's identity.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roost.agents import manifest, model, schema

USER = """name = "claude"
binaries = ["claude"]

[hook.events]
Stop = "{action}"
"""


def parsed(path: Path) -> model.Manifest:
    """The packaged manifest at ``path``, checked and built without the cache."""
    table, problems = schema.resolve(path.stem, str(path), None)
    assert problems == [] and table is not None
    return model.Manifest(table)


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A private config dir (for user overrides) and runtime dir (for the cache)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    agents = tmp_path / "config" / "roost" / "agents"
    agents.mkdir(parents=True)
    return agents, tmp_path / "run" / "roost" / "manifests"


def test_cached_loads_equal_parsed_ones_for_every_packaged_manifest(dirs: tuple[Path, Path]) -> None:
    _, cache = dirs
    for path in sorted(manifest.PACKAGED.glob("*.toml")):
        expected = parsed(path)
        assert manifest.load(path.stem) == expected  # parsed, then stored
        manifest._memo.clear()  # as a new process starts: nothing but the cache
        assert manifest.load(path.stem) == expected  # from the cache
    assert len(list(cache.glob("*.json"))) == len(list(manifest.PACKAGED.glob("*.toml")))
    assert all(entry.stat().st_mode & 0o077 == 0 for entry in cache.iterdir())


def test_an_edited_manifest_is_read_again_even_with_the_same_size_and_mtime(dirs: tuple[Path, Path]) -> None:
    agents, _ = dirs
    user = agents / "claude.toml"
    user.write_text(USER.format(action="done"))
    assert manifest.load("claude").action("Stop") == "done"
    before = user.stat()
    user.write_text(USER.format(action="tool"))  # same length as "done"
    os.utime(user, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert manifest.load("claude").action("Stop") == "tool"


def test_a_user_manifest_appearing_or_going_wins_or_stops_winning_at_once(dirs: tuple[Path, Path]) -> None:
    agents, _ = dirs
    assert manifest.load("claude").action("Stop") == "done"
    (agents / "claude.toml").write_text(USER.format(action="error"))
    assert manifest.load("claude").action("Stop") == "error"
    (agents / "claude.toml").unlink()
    assert manifest.load("claude").action("Stop") == "done"


def test_a_corrupt_cache_entry_is_ignored_and_rewritten(dirs: tuple[Path, Path]) -> None:
    _, cache = dirs
    expected = manifest.load("claude")
    for entry in cache.iterdir():
        entry.write_text("{not json")
    manifest._memo.clear()
    assert manifest.load("claude") == expected
    assert manifest.load("claude") == expected
    assert all("not json" not in entry.read_text() for entry in cache.iterdir())


def test_an_unwritable_runtime_dir_only_costs_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(blocker))  # a file: no directory can be made under it
    assert manifest.load("claude") == parsed(manifest.PACKAGED / "claude.toml")
