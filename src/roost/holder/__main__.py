"""``python -m roost.holder``: the holder where its console script is not installed."""

import sys

from roost.holder.main import main

sys.exit(main())
