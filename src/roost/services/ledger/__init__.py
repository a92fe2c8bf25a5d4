"""The ledger: what happened to each session (the journal), what its turns used and cost
(usage, priced by the price table), and what its budgets make of that, kept on disk where a
person can look back over days, not just the live roster.

Boundaries:

- The ledger follows the roster's changes and writes its own files. It claims two fields of a
  record, and no other: ``spend`` (what its turns used, as counted here) and ``budget`` (what
  the budgets make of it), as rosterd's own word; it never claims an activity. It acts on a
  session in one way only, through the runner's cancel the daemon hands its budgets (a headless
  turn under way when a budget is exceeded); the runner never calls it.
- It reads an agent's transcript only where the agent's manifest says, and only for numbers:
  each answer's token counts, id and model.
- Never a prompt, a reply, a recap, a pending request's summary or any other agent text is
  written: a line holds keys, names, words and numbers.
- Both files are append-only JSON lines under ``${XDG_STATE_HOME}/roost/ledger/`` (moved by
  ``$ROOST_LEDGER``), rotated at a size cap with one older file kept: bounded, newest first kept.

``since`` parses ``--since``; ``lines`` is the bounded file; ``journal`` and ``usage`` are the
two ledgers; ``prices`` is the price table, ``transcripts`` the reading of an agent's own
record, ``budgets`` the limits on spend; ``follow`` is the daemon's follower that feeds them.
Nothing is imported here, so a CLI verb that only needs ``since`` loads only that.
"""
