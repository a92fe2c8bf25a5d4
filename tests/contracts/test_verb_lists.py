"""The verbs ``roost help`` and ``rosterd help`` list are the verbs the exit-code tables hold:
a verb without rows, or rows for a verb no help lists, fails."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import BIN, Roost
from tests.contracts.tables import names, table

ANY_VERB = re.compile(r"\(any daemon verb: (?P<verbs>[^)]*)\)")


USAGE_INDENT = {"roost": "  ", "rosterd": ""}
"""Where each help starts a usage line: a wrapped usage's or summary's further lines are
indented past it, and ``roost``'s first line (its version) starts left of it."""


def _listed(roost: Roost, cli: str) -> set[str]:
    """The first word of each help line's usage (``roost`` alone: attach)."""
    proc = subprocess.run([str(BIN / cli), "help"], capture_output=True, text=True, env=roost.env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    usages = re.findall(rf"^{USAGE_INDENT[cli]}{cli}((?: \S+)*)(?: {{2,}}\S|$)", proc.stdout, re.MULTILINE)
    assert usages, proc.stdout
    return {usage.split()[0] if usage else "attach" for usage in usages}


def _tabled(heading: str) -> set[str]:
    """Each row's verb: a row for several (``(any daemon verb: a, b)``) counts for each of them;
    ``attach (or no verb)`` is ``attach``; the unknown verb's row names none."""
    verbs = set()
    for row in table(heading):
        many = ANY_VERB.fullmatch(row["verb"])
        if many:
            verbs.update(names(many["verbs"]))
        elif not row["verb"].startswith("("):
            verbs.add(row["verb"].split()[0])
    return verbs


def test_every_roost_verb_in_help_has_rows_and_no_other_verb_does(roost: Roost) -> None:
    assert _tabled("`roost` exit codes") == _listed(roost, "roost")


def test_every_rosterd_verb_in_help_has_rows_and_no_other_verb_does(roost: Roost) -> None:
    assert _tabled("`rosterd` exit codes") == _listed(roost, "rosterd")
