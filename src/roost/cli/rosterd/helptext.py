"""``rosterd help``: one line per verb, gathered from each verb module's ``USAGE``."""

from __future__ import annotations

import importlib

from roost.cli.rosterd import VERBS
from roost.errors import UsageError


def run(verb: str, args: list[str]) -> int:
    if args:
        raise UsageError(f"usage: rosterd {verb}")
    rows = []
    for module_name in dict.fromkeys(VERBS.values()):
        rows += importlib.import_module(f"roost.cli.rosterd.{module_name}").USAGE
    width = max(len(usage) for usage, _ in rows) + len("rosterd ")
    for usage, what in rows:
        print(f"{'rosterd ' + usage:<{width}}  {what}")
    return 0


USAGE = (("help", "this list"),)
