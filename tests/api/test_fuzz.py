"""Fuzzing the running daemon from its own OpenAPI document, with every check schemathesis has.

Schemathesis's CLI reads ``GET /openapi.json`` from a real daemon over TCP (bearer token) and
runs its coverage, fuzzing and stateful phases against every operation, the two SSE streams
included (each read for a few events). Every check is on, so beyond "no 5xx" a request valid
by the document must not be refused as malformed (positive_data_acceptance), an invalid one
must be (negative_data_rejection), an answer must be a status the document lists, in its
content type and shape, and a wrong method must get 405 with the path's methods in ``Allow``:
the models that check and the document are held to each other both ways.

What JSON Schema cannot say is said in the document's words and given here: a body larger
than its route's limit is 413, which both directions accept; ``{key}`` is a real session's, so
the handlers get past their lookup (``{pane}`` a real pane's). Some operations are fuzzed with
invalid requests only (:data:`OUTSIDE`, :data:`PENDING`, each saying why). Examples per
operation are bounded, and the seed fixed, so the run stays near a minute and repeats.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from tests.conftest import Roost
from tests.daemon.fixture import Daemon

EXAMPLES = 12
"""Examples per operation and phase."""
OUTSIDE = ("POST /launch", "POST /push/subscribe")
"""Called well, these reach outside the daemon (a command run in a new window, a push service the
notifier would call): fuzzed with invalid requests only."""
PENDING = (
    "POST /claim",
    "POST /gate",
    "POST /hooks",
    "POST /sessions",
    "POST /sessions/{key}/prompt",
    "POST /sessions/{key}/wait",
    "POST /swarm/{node}/sessions",
    "POST /swarm/{node}/sessions/{key}/prompt",
    "POST /swarm/{node}/sessions/{key}/wait",
)
"""Operations whose document still says less than the code checks, so a valid-looking request
may be refused (400): a claim's rules across fields (a session_key or a process, pid with
start_ticks, …), a webhook URL's host rules, which harnesses this daemon has adapters for, a
deadline at most five minutes past the daemon's clock (which no schema can say); and the same
routes under ``/swarm/{node}``, whose ``{node}`` is this daemon's own (its routes run here).
Fuzzed with invalid requests only until their models say it all; the rest are held to both."""
CONFIG = """\
max-stream-events = 1
request-timeout = 10

[parameters]
"path.key" = "{key}"
"path.pane" = "{pane}"
"path.node" = "{node}"

[generation]
max-examples = {examples}
database = "none"

[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "413", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "409", "413", "429"]
"""


def test_the_document_and_the_routes_agree(roost: Roost, running: Daemon, tmp_path: Path) -> None:
    # Generated input reaches this pane: it ignores the signals its terminal can send (^C ^\\ ^Z),
    # so it outlives the fuzzing; a pane vanishing mid-write is another test's subject.
    pane = roost.start("sh -c 'roost state working; trap \"\" INT QUIT TSTP; exec sleep 600'")
    session = running.wait_for(
        lambda: running.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane), what="a session"
    )
    config = tmp_path / "schemathesis.toml"
    # Given encoded: schemathesis decodes a path value before it encodes it, and %N is a pane's id.
    config.write_text(
        CONFIG.format(
            key=session["session_key"], pane=quote(pane, safe=""), node=session["node"], examples=EXAMPLES
        )
    )
    st = Path(sys.executable).with_name("st")
    command = [str(st), "--config-file", str(config), "run", f"http://127.0.0.1:{running.port}/openapi.json"]
    command += [
        "-H",
        f"Authorization: Bearer {running.token}",
        "--checks",
        "all",
        "--no-color",
        "--seed",
        "1",
    ]
    held = [option for name in (*OUTSIDE, *PENDING) for option in ("--exclude-name", name)]
    invalid = [option for name in (*OUTSIDE, *PENDING) for option in ("--include-name", name)]
    for options in (held, [*invalid, "--mode", "negative"]):
        run = subprocess.run([*command, *options], capture_output=True, text=True, timeout=600, cwd=tmp_path)
        report = run.stdout + run.stderr
        assert running.proc is not None and running.proc.poll() is None, "the daemon died"
        failures = report[report.find("=== FAILURES") : report.find("=== WARNINGS")]
        assert run.returncode == 0, failures[:20_000] or report[-20_000:]
