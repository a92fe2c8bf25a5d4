"""The command-line faces: ``roost`` (drive agents in tmux) and ``rosterd`` (the daemon's CLI).

Faces parse arguments, call the layers below and print. They never import each other.
"""
