"""The web face: a single page of plain ES modules in ``static/``, served by ``rosterd``.

Boundaries:

- No build step: the browser loads ``static/`` as it is; third-party code (xterm.js and two
  of its addons) is vendored under ``static/vendor/`` at pinned versions with its licences,
  refreshed by ``scripts/vendor-xterm``.
- The page reads the roster and drives terminals only through the daemon's HTTP API, its
  change stream and its terminal WebSocket (see :mod:`roost.faces.api.page`,
  :mod:`roost.faces.api.terminal`); it holds no state the daemon does not give it.
- This package holds files, not code: the API locates them here and serves them.
"""
