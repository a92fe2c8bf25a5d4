"""What is true of a session: detectors that turn what they see into claims (``detect``), and the
roster, the one place that applies claims (``roster``).
"""
