"""Fuzzing the running daemon from its own OpenAPI document: no request a client can make, valid
or not, gets a 5xx.

Schemathesis reads ``GET /openapi.json`` from a real daemon over TCP (bearer token) and, for
every operation there, generates requests that fit the schema and requests that do not,
``not_a_server_error`` being the one check: other tests own what each answer says. The two SSE
streams are left out: they never end, so a generated call would wait on them forever. The
examples per operation are bounded so the whole run stays well under a minute.

The operations are driven with Hypothesis directly (``APIOperation.as_strategy``) rather than
through schemathesis's pytest plugin, whose lazy ``from_fixture`` schema does not work with
the pytest this project uses (it reads a private attribute pytest 9 no longer has).
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.conftest import Roost
from tests.daemon.fixture import Daemon

EXAMPLES = 10
"""Examples per operation and mode: ~29 operations, two modes, a few ms each."""
STREAMS = r"^/(events|changes)$"
OUTSIDE = {"POST /launch", "POST /push/subscribe"}
"""Operations whose valid calls reach outside the daemon (a command run in a new window, a
push service the notifier would call): fuzzed with invalid bodies only."""
REFUSALS = ["400", "401", "403", "404", "405", "409", "413", "429"]
"""What an invalid request may be answered with: 413 for one whose size is its fault."""
_ANSWERS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
CHECKS = {GenerationMode.POSITIVE: _ANSWERS, GenerationMode.NEGATIVE: [*_ANSWERS, negative_data_rejection]}
"""Every answer is no 5xx, a status the document lists, in its content type and shape; and an
invalid request is refused, which holds the validating models and the document to each other."""


def fuzz(
    operation: schemathesis.APIOperation, mode: GenerationMode, headers: dict[str, str], key: str | None
) -> None:
    """``EXAMPLES`` generated calls of one operation; with ``key``, every ``{key}`` in the path is
    that real session's, so the handlers get past their lookup."""
    strategy = operation.as_strategy(mode)
    if key is not None:
        strategy = strategy.map(lambda case: (case.path_parameters.update(key=key), case)[1])

    @given(case=strategy)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS[mode], timeout=20)

    run()


def test_no_request_gets_a_server_error(roost: Roost, running: Daemon) -> None:
    # Generated input reaches this pane: it ignores the signals its terminal can send (^C ^\\ ^Z),
    # so it outlives the fuzzing; a pane vanishing mid-write is another test's subject.
    pane = roost.start("sh -c 'roost state working; trap \"\" INT QUIT TSTP; exec sleep 600'")
    session = running.wait_for(
        lambda: running.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane), what="a session"
    )
    headers = {"Authorization": f"Bearer {running.token}"}
    schema = schemathesis.openapi.from_url(f"http://127.0.0.1:{running.port}/openapi.json", headers=headers)
    schema.config.checks.negative_data_rejection.expected_statuses = REFUSALS
    operations = [result.ok() for result in schema.exclude(path_regex=STREAMS).get_all_operations()]
    assert len(operations) >= 8, [op.label for op in operations]
    failed = []
    rounds = [(GenerationMode.POSITIVE, None), (GenerationMode.NEGATIVE, None)]
    rounds.append((GenerationMode.POSITIVE, session["session_key"]))
    for operation in operations:
        for mode, key in rounds:
            if key is not None and "{key}" not in operation.path:
                continue
            if mode is GenerationMode.POSITIVE and operation.label in OUTSIDE:
                continue
            takes = {"parameters", "requestBody"} & set(operation.definition.raw)
            if mode is GenerationMode.NEGATIVE and not takes:
                continue  # nothing in the request to get wrong
            try:
                fuzz(operation, mode, headers, key)
            except Exception as error:  # every operation is fuzzed; all failures are reported together
                failed.append(f"{operation.label} ({mode.value}{', real key' if key else ''}): {error}")
    assert running.proc is not None and running.proc.poll() is None, "the daemon died"
    assert not failed, "\n\n".join(failed)
