"""The ``rosterd.toml`` setup writes: it changes nothing as written, and every line of it,
uncommented, is a key this version knows at its default."""

from __future__ import annotations

import re
from pathlib import Path

from roost.daemon import config


def test_the_written_config_changes_nothing_and_names_every_key_at_its_default(tmp_path: Path) -> None:
    text = config.default_text()
    path = tmp_path / "rosterd.toml"
    path.write_text(text)
    defaults = config.Config(path)
    assert config.load(path) == defaults
    assert all(not line or line.startswith("#") for line in text.splitlines())
    uncommented = re.sub(r"^# (\[|\w+ = )", r"\1", text, flags=re.M)
    path.write_text(uncommented)
    assert config.load(path) == defaults
    for section in (
        "node",
        "swarm",
        "runner",
        "sources",
        "api",
        "mcp",
        *(f"harness.{name}" for name in defaults.harness),
    ):
        assert f"\n[{section}]\n" in uncommented, section
