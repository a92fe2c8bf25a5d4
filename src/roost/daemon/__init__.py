"""``rosterd daemon``: one process per machine and user that keeps the roster and serves it.

Boundaries:

- The daemon owns the roster's clock and its only event loop: claims from the API, the scan
  timer and lease expiry are all applied on that loop, one at a time.
- It binds a 0600 unix socket and 127.0.0.1, never another interface.
- Nothing about status is persisted: on start the roster is rebuilt from roost's tmux server
  and a process scan. Only its secrets (node key, loopback token) are kept, beside its config.
"""
