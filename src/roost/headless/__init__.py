"""The headless lane: sessions over ACP that rosterd drives (``runner``), and the small process
that holds each one's adapter (``holder``, a program of its own).
"""
