"""Headless sessions: the daemon's runner over ``rosterd-holder`` and ACP.

``runner`` is the door other packages call (its verbs refuse what the session's state does not
allow); ``launch`` opens a session on a new holder; ``lifecycle`` suspends, resumes, stops and
ends one, and runs the idle timer; ``rebuild`` brings the sessions a restart or a reboot left
back into the roster; ``claims`` is how a session shows there; ``stamps`` is which processes may
be signalled; ``headless`` is one session as the runner drives it. ``link`` is the ACP client
over one holder's socket, ``traffic`` turns ACP updates into claims, ``holders`` starts holders
and reads what they leave, ``store`` keeps what must survive a reboot, ``lock`` pins each
harness's adapter version.
"""
