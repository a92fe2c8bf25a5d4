"""A pane's badge, its kept replies and the events log.

Boundaries: only this package writes the ``@roost-*`` pane options, the kept replies and
the log. State lives in tmux pane options so any tmux client can read it and it survives
every roost process; kept replies and the log live in files because they outlive panes.
"""
