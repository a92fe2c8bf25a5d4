"""What every face does to a session, whatever its lane.

A face (the HTTP API, the MCP server, the web app and the CLIs through the API) never decides
how to act on a session itself: it parses, calls one action here, and renders what comes back.
:mod:`~roost.actions.sessions` finds what a caller named, once, and is the one place that knows
its lane (a headless session the runner drives, or a pane of roost's tmux server); the actions
are :mod:`~roost.actions.prompt` (a fenced prompt to a pane), :mod:`~roost.actions.headless`
(start, spawn, prompt, cancel, suspend, resume, stop), :mod:`~roost.actions.close` (either
lane; a pane's steps are :mod:`~roost.actions.paneclose`, which ``roost close`` shares),
:mod:`~roost.actions.fork` (either lane; ``roost fork`` calls its pane part directly),
:mod:`~roost.actions.rawinput`, :mod:`~roost.actions.names`, :mod:`~roost.actions.permission`,
:mod:`~roost.actions.budgets` (read, set, clear and lift the ledger's budgets),
:mod:`~roost.actions.gates` (a gate's request, held open), :mod:`~roost.actions.windows`
(the launcher's window) and :mod:`~roost.actions.waits`, with the terminals read through
:mod:`~roost.actions.terminals`. :mod:`~roost.actions.restore` brings a gone tmux server's
layout and agents back (``roost restore``), from the record whose agent parts
:mod:`~roost.actions.agentstart` reads. Boundaries: actions read the roster and act through the runner
and the terminal layer; they never apply a claim but through the live roster, and they never
import a face.
"""
