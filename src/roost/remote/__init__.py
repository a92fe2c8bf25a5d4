"""The remote lane, another node's sessions: the swarm's signed formats, pure (``swarm``), and the
swarm on the wire (``mesh``).
"""
