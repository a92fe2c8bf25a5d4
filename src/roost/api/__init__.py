"""The HTTP API: rosterd's roster over JSON and server-sent events.

Boundaries:

- The API reads the roster and sends claims to it through the daemon's live roster; it never
  edits a session itself.
- One app serves the 0600 unix socket (peers trusted: only the owner can connect) and
  127.0.0.1 (a bearer token on every request). It never learns another interface.
- Every failure is ``{"error": …}`` JSON with a 4xx status, mapped in :mod:`roost.api.errors`.
- Nothing from outside (no global, no environment) reaches a route but the context the app
  was built with, so a test can build the same app around any roster.
"""

from roost.api.app import Context, create_app

__all__ = ["Context", "create_app"]
