"""``python -m roost.headless.holder``: the holder where its console script is not installed."""

import sys

from roost.headless.holder.main import main

sys.exit(main())
