"""What every face does to a session, whatever its lane.

A face (the HTTP API, the MCP server, the web app through the API) never decides how to act on
a session itself: it asks this package, which knows that a headless session is answered over
ACP and a tmux pane through its harness's gate, and refuses the same way for both. Boundaries:
actions read the roster and act through the runner and the terminal layer; they never apply a
claim but through the live roster, and they never import a face.
"""
