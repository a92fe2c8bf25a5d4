"""The keys of ``rosterd.toml``, as docs/contracts.md tables them, are the config's: every
field of every section in the table's order, with the default the table gives."""

from __future__ import annotations

import json
from dataclasses import fields

from roost.daemon import config
from tests.contracts.tables import table


def _documented() -> list[tuple[str, str, str]]:
    """(section, key, default cell) of each row, ``[harness.NAME]`` as ``harness``."""
    rows = []
    for row in table("`rosterd.toml`"):
        section, _, key = row["key"].partition("] ")
        rows.append((section.removeprefix("[").removesuffix(".NAME"), key, row["default"]))
    return rows


def test_the_table_is_every_key_the_config_reads() -> None:
    defaults = config.Config(config.default_path())
    known = [(name, item.name) for name, cls in config._SECTIONS.items() for item in fields(cls)]
    known += [("harness", item.name) for item in fields(config.Harness)]
    assert [(section, key) for section, key, _ in _documented()] == known
    for section, key, shown in _documented():
        try:
            expected = json.loads(shown)
        except ValueError:
            continue  # said in words: the host name, the manifest's value
        holder = config.Harness() if section == "harness" else getattr(defaults, section)
        value = getattr(holder, key)
        assert expected == (list(value) if isinstance(value, tuple) else value), (section, key)
