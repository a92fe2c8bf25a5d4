"""``rosterd-hook``: the one command every agent adapter calls.

It reads one event on stdin, stamps the tmux pane it runs in, fails open within 800 ms and
always exits 0: a broken roost must never break the agent it watches.
"""
