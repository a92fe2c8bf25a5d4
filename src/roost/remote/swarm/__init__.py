"""The swarm's core: who a node is, who the members are, and how one node proves itself to another.

Boundaries:

- Every node is the only writer of its own roster. Peer snapshots are kept beside the roster,
  never merged into it, so there is nothing to reconcile.
- Nothing waits on a peer: an unreachable peer is served from its last snapshot, marked, with
  its age; an action that needs it fails fast with a clear code and is never queued or retried.
- The swarm listener binds the Tailscale address (or an address named in config for static
  setups and tests) and nothing else; the loopback listener and the unix socket stay as they are.
- The node never dials a client; it dials only member nodes.
- This package is pure: it signs, checks, seals and merges values it is handed, with the clock
  as an argument; it opens no socket and reads no file but ``swarm.json`` (``members.load``).
- Every document from a peer is checked here, at the door, before anything trusts a field of
  it; a refusal is :class:`~roost.base.errors.PeerRefused` with one ``code``.

``identity`` is a node's keys and certificate; ``canonical`` the bytes a signature covers;
``invites`` the single-use join token; ``sealing`` the swarm key sealed to a joiner;
``members`` the signed member records, their merge rule and ``swarm.json``; ``peers`` the peers'
rosters kept beside this node's; ``union`` this node's records and theirs as one document;
``feed`` the swarm's numbered change stream (the one piece here with a queue per subscriber,
and still no socket); ``signing`` a signed request between nodes; ``hello`` the signed
greeting. ``docs/swarm.md`` has the wire formats. Nothing is imported here, and neither
the hook nor ``roost`` imports this package.
"""
