"""Installing, removing and checking the adapters that make each agent call ``rosterd-hook``.

Boundaries, as sentences:

- Every file format a host agent reads is one module here (``claude``: Claude Code's
  settings.json, and Gemini CLI's, which takes the same hook groups; ``codex``: codex's
  hooks.json plus config.toml; ``asset``: a plugin or extension file roost owns outright);
  which agent uses which, and where its files live, is data in that agent's manifest
  (``[hook] kind``, ``dirs``, ``file``).
- Only entries roost marks as its own are ever changed or removed: a hook whose command runs
  ``rosterd-hook``, a TOML block between roost's marker comments, a file whose first line
  carries roost's marker. Everything else in a file is kept, and a file that would not change
  is not rewritten.
- Installing twice is installing once; uninstalling removes exactly what installing added.
- Every write goes through ``common.write_text`` (and its ``remove``, ``discard``): a file
  kept as a symbolic link (a dotfiles manager's) changes where the link ends and the link
  stays; a file that cannot be written is refused in one line, before any file changes.

    from roost.services.integrate import integration
    integration("claude").install()    # -> lines saying what changed
    integration("claude").status()     # -> Report(state="installed", ...)
    gated("claude").install(gate=True, gate_timeout_s=600)   # the permission gate, on
    gates()                            # -> {"claude": None}: on; else the command that turns it on
    missing("pi")                      # -> None, or why it is not in place and the fix
"""

from __future__ import annotations

from roost.services.integrate.common import (
    INSTALLED,
    KINDS,
    NOT_INSTALLED,
    OUTDATED,
    Gated,
    Integration,
    NoIntegration,
    Report,
    gated,
    gates,
    integration,
    missing,
    names,
)

__all__ = [
    "INSTALLED",
    "KINDS",
    "NOT_INSTALLED",
    "OUTDATED",
    "Gated",
    "Integration",
    "NoIntegration",
    "Report",
    "gated",
    "gates",
    "integration",
    "missing",
    "names",
]
