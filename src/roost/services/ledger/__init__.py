"""The ledger: what happened to each session (the journal) and what its turns used (usage),
kept on disk where a person can look back over days, not just the live roster.

Boundaries:

- The ledger follows the roster's changes and writes only its own files; it never claims,
  never acts on a session, and the runner never calls it.
- Never a prompt, a reply, a recap, a pending request's summary or any other agent text is
  written: a line holds keys, names, words and numbers.
- Both files are append-only JSON lines under ``${XDG_STATE_HOME}/roost/ledger/`` (moved by
  ``$ROOST_LEDGER``), rotated at a size cap with one older file kept: bounded, newest first kept.

``since`` parses ``--since``; ``lines`` is the bounded file; ``journal`` and ``usage`` are the
two ledgers; ``follow`` is the daemon's follower that feeds them. Nothing is imported here, so
a CLI verb that only needs ``since`` loads only that.
"""
