"""``rosterd-holder``: the keeper of one headless session, and the ACP adapter's only parent.

A headless session is holder → ACP adapter → harness. The holder is a process of its own, in a
session of its own, so the session outlives the daemon that started it: ``rosterd restart`` or
a ``kill -9`` of the daemon leaves the turn running, and the next daemon reconnects to the
holder's socket and replays what it missed. The holder knows ACP only as far as keeping it
needs: it tells notifications from requests, notices the session id go by, and sends
``session/cancel`` on the way out. Everything else it relays unchanged.

``relay`` runs the holder and sends each line where it belongs; ``replay`` is what a daemon
that connects later needs of the traffic it missed; ``adapter`` is the ACP adapter as the
holder's child; ``statefile`` is the state file; ``tree`` owns every process below the holder.
"""
