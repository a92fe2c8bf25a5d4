"""The fork refusals table: each row's failure exits and answers as the table says, and its codes
are exactly those the fork's code raises (``actions/fork.py`` and the runner's ``forkable``).
What each refusal is, and that it starts nothing, is walked against real panes, daemons and
adapters in ``tests/cli/roost/test_fork.py`` and ``tests/runner/test_fork.py``."""

from __future__ import annotations

import re

from roost.actions import fork
from roost.base import errors
from roost.headless.runner import lifecycle
from tests.contracts.tables import table

ROWS = table("Forking a session")
FAILURE = re.compile(r"(?P<name>\w+) \((?P<exit>\d+), (?P<status>\d+)\)")


def test_each_refusal_exits_and_answers_as_its_failure_does() -> None:
    for row in ROWS:
        found = FAILURE.fullmatch(row["failure (exit, HTTP)"])
        assert found, row
        failure = getattr(errors, found["name"])
        assert (failure.exit_code, failure.status) == (int(found["exit"]), int(found["status"])), row


def test_the_table_names_every_code_a_fork_is_refused_with() -> None:
    codes = {row["code"] for row in ROWS if row["code"]}
    assert codes == {fork.NO_CONVERSATION, fork.CANNOT_FORK, fork.NAME_TAKEN}
    assert (lifecycle.CANNOT_FORK, lifecycle.NO_CONVERSATION) == (fork.CANNOT_FORK, fork.NO_CONVERSATION)
