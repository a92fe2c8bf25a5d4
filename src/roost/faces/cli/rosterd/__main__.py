"""``python -m roost.faces.cli.rosterd``: the ``rosterd`` command, run by an interpreter's absolute
path where a harness must not depend on PATH (the MCP bridge the daemon hands to harnesses)."""

import sys

from roost.faces.cli.rosterd import main

sys.exit(main())
