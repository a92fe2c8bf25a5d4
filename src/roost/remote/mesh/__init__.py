"""The swarm on the wire: the listener, the dialer, TLS pinned to the members, the rounds.

Boundaries:

- The swarm listener binds the Tailscale address (or one address named in config, for static
  setups and tests) and nothing else; with neither it stays off, says why, and nothing else
  the daemon does changes. The loopback listener and the unix socket are not this package's.
- Every request between nodes is signed by its sender and checked before routing; a request
  that fails any check gets one answer, whatever the reason, so a stranger learns nothing.
- TLS pins members' own certificates, both ways, at the handshake: there is no CA.
- The node never dials a client; it dials only member nodes (and, to join, the admitter its
  invite names, pinned to that invite's key).
- Nothing waits on a peer: a peer that does not answer is tried again next round, never
  queued for, and a verb that needs it fails at once (``PeerUnreachable``, exit 3).
- The mesh reads this node's roster to serve peers and writes what peers send into
  :class:`~roost.remote.swarm.peers.Peers`, beside the roster, never into it.
- :mod:`roost.remote.swarm` decides what is valid (pure, no sockets); this package decides what to
  do with it and owns ``swarm.json`` while the daemon runs.

``place`` says where the listener binds; ``tailscale`` reads ``tailscale status --json``;
``tls`` makes the pinned contexts; ``membership`` is ``swarm.json`` and every change to it;
``listener`` the signed door and route table; ``dialer`` signed requests to members and the
join, over ``transport``, the HTTP transport of every client to a peer; ``rounds`` discovery
and hellos; ``exchange`` one roster stream per peer, each way, and ``events`` the bounded
reader of a peer's stream; ``node`` puts them together as :class:`Mesh`.
``docs/swarm.md`` has the wire formats and the verbs.
"""
