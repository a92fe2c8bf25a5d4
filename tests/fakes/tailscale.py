#!/usr/bin/env python3
"""A stand-in ``tailscale`` for tests (no real one installs here): ``status --json`` prints the
document at ``$FAKE_TAILSCALE_STATUS``; anything else fails as tailscale does when it is down."""

import os
import sys

if sys.argv[1:] == ["status", "--json"]:
    with open(os.environ["FAKE_TAILSCALE_STATUS"]) as document:
        sys.stdout.write(document.read())
    sys.exit(0)
sys.stderr.write("failed to connect to local tailscaled\n")
sys.exit(1)
