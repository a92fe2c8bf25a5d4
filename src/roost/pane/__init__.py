"""The pane lane's substrate: roost's tmux server (``tmux``) and what only roost writes on a pane
(``state``: its badge, kept replies, events log and the server's layout).
"""
