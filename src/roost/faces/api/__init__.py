"""The HTTP API: rosterd's roster over JSON and server-sent events.

Boundaries:

- The API reads the roster and sends claims to it through the daemon's live roster; it never
  edits a session itself.
- One app serves the 0600 unix socket (peers trusted: only the owner can connect) and
  127.0.0.1 (a bearer token on every request). It never learns another interface.
- Every failure is ``{"error": …}`` JSON with a 4xx status, mapped in :mod:`roost.faces.api.errors`.
- Nothing from outside (no global, no environment) reaches a route but the context the app
  was built with, so a test can build the same app around any roster.
- Importing this package loads no route: the daemon serves its roster before the rest of the
  app (:mod:`roost.faces.api.startup`), so the names below load their modules when first asked for.
"""

from importlib import import_module

_HOMES = {"Context": "roost.faces.api.context", "create_app": "roost.faces.api.app"}

__all__ = ["Context", "create_app"]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
