"""Headless sessions: the daemon's runner over ``rosterd-holder`` and ACP.

``runner`` keeps the lifecycle (start, prompt, suspend, resume, crash, rebuild), ``link`` is
the ACP client over one holder's socket, ``traffic`` turns ACP updates into claims, ``holders``
starts holders and reads what they leave, ``store`` keeps what must survive a reboot.
"""
