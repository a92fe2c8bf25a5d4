"""The ``[runner]`` section of ``rosterd.toml``: how headless sessions are kept.

Defined here, beside the runner that reads it; the daemon's config loader checks a file's
section against these fields and their types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from roost.base import paths


@dataclass(frozen=True)
class RunnerSection:
    """The ``[runner]`` section's keys, as the daemon's config loader checks them."""

    default_permission_policy: str = "attention"
    """``auto`` answers every permission with the adapter's allow-once; ``attention`` asks."""
    idle_timeout_s: int = 1800
    """Seconds with no turn and nothing pending before a session is suspended."""
    suspend_on_needs_attention: bool = False
    """Whether the idle timer suspends a session waiting on a permission too (losing it)."""
    resume_on_crash: bool = True
    max_resumes_per_hour: int = 6
    recap: bool = True
    """Keep each turn's final assistant message as the record's ``recap``."""


@dataclass(frozen=True)
class Settings:
    """The ``[runner]`` section, each harness's adapter (``[harness.NAME] adapter``), and the
    folder of the config they came from."""

    adapters: dict[str, list[str]]
    runner: RunnerSection = RunnerSection()
    folder: Path = field(default_factory=paths.config_home)
    """The config's folder, where ``adapters.lock`` is kept beside the config's other files."""
    extensions: frozenset[str] = frozenset()
    """Harnesses whose adapter has no claims or permission gate of its own and relies on roost's
    integration for them (``[harness.NAME] extension``): one starts only while it is in place."""
    unloadable: frozenset[str] = frozenset()
    """Harnesses whose adapter cannot load a session back (their manifest's ``[acp] resumes =
    false``): a session of one is never suspended, and one found suspended is not resumed."""
