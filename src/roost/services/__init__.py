"""What the daemon offers beside the roster: notifications and webhooks (``notify``), installing
agent integrations (``integrate``), the journal and usage (``ledger``), and the daemon as a per-
user service (``autostart``).
"""
