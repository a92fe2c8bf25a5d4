"""Fuzzing the running daemon from its own OpenAPI document, with every check schemathesis has.

Schemathesis's CLI reads ``GET /openapi.json`` from a real daemon over TCP (bearer token) and
runs its coverage, fuzzing and stateful phases against every operation, the two SSE streams
included (each read for a few events). Every check is on, so beyond "no 5xx" a request valid
by the document must not be refused as malformed (positive_data_acceptance), an invalid one
must be (negative_data_rejection), an answer must be a status the document lists, in its
content type and shape, and a wrong method must get 405 with the path's methods in ``Allow``:
the models that check and the document are held to each other both ways, and 413 is no
answer either direction takes.

What JSON Schema cannot say the document says in roost's own keywords (a size in bytes, a
moment against the daemon's clock, a folder that must exist, a host name that must resolve),
and :mod:`tests.api.fuzzhooks` holds each generated case to them as schemathesis hooks.
``{key}`` is a real session's, so the handlers get past their lookup (``{pane}`` a real
pane's). Every harness's adapter is a command this machine lacks, so a start the document
allows reaches the runner and is refused there (409 ``adapter_missing``) rather than starting an
agent. A gate holds a request until someone answers it, so a person who denies each one at once
(:class:`Answerer`) stands beside the run: without one every valid ``POST /gate`` would wait
out ``gate_timeout_s``. Two operations are fuzzed with invalid requests only (:data:`OUTSIDE`,
saying why).
Examples per operation are bounded, and the seed fixed, so the run stays near a minute and
repeats.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import httpx

from roost.agents import manifest
from tests.conftest import Roost
from tests.daemon.fixture import Daemon

EXAMPLES = 12
"""Examples per operation and phase."""
OUTSIDE = ("POST /launch", "POST /push/subscribe")
"""Called well, these reach outside the daemon (a command run in a new window, a push service the
notifier would call): fuzzed with invalid requests only."""
HOOKS = Path(__file__).with_name("fuzzhooks.py")
NO_ADAPTER = "roost-fuzz-has-no-adapter"
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
expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "429"]

[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "409", "429"]
"""


class Answerer(threading.Thread):
    """Denies every request a gate holds open as soon as the roster shows it."""

    def __init__(self, daemon: Daemon) -> None:
        super().__init__(daemon=True)
        self.daemon_under_test = daemon
        self.done = threading.Event()

    def run(self) -> None:
        with self.daemon_under_test.unix() as client:
            while not self.done.wait(0.05):
                try:
                    records = client.get("/snapshot").json()["records"]
                    for record in records:
                        asked = record.get("pending") or {}
                        if asked.get("answerable"):
                            body = {"option": "reject", "request_id": asked.get("id")}
                            client.post(f"/sessions/{record['session_key']}/permission", json=body)
                except httpx.HTTPError:
                    continue

    def __enter__(self) -> Answerer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.join(10)


def test_the_document_and_the_routes_agree(roost: Roost, daemon: Daemon, tmp_path: Path) -> None:
    for agent in manifest.ordered():
        if agent.acp is not None:
            daemon.settings[f"harness.{agent.name}"] = {"adapter": NO_ADAPTER}
    daemon.start()
    # Generated input reaches this pane: it ignores the signals its terminal can send (^C ^\\ ^Z),
    # so it outlives the fuzzing; a pane vanishing mid-write is another test's subject.
    pane = roost.start("sh -c 'roost state working; trap \"\" INT QUIT TSTP; exec sleep 600'")
    session = daemon.wait_for(
        lambda: daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane), what="a session"
    )
    config = tmp_path / "schemathesis.toml"
    # Given encoded: schemathesis decodes a path value before it encodes it, and %N is a pane's id.
    config.write_text(
        CONFIG.format(
            key=session["session_key"], pane=quote(pane, safe=""), node=session["node"], examples=EXAMPLES
        )
    )
    st = Path(sys.executable).with_name("st")
    command = [str(st), "--config-file", str(config), "run", f"http://127.0.0.1:{daemon.port}/openapi.json"]
    command += [
        "-H",
        f"Authorization: Bearer {daemon.token}",
        "--checks",
        "all",
        "--no-color",
        "--seed",
        "1",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS)}
    held = [option for name in OUTSIDE for option in ("--exclude-name", name)]
    invalid = [option for name in OUTSIDE for option in ("--include-name", name)]
    for options in (held, [*invalid, "--mode", "negative"]):
        with Answerer(daemon):
            run = subprocess.run(
                [*command, *options], capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env
            )
        report = run.stdout + run.stderr
        assert daemon.proc is not None and daemon.proc.poll() is None, "the daemon died"
        failures = report[report.find("=== FAILURES") : report.find("=== WARNINGS")]
        assert run.returncode == 0, failures[:20_000] or report[-20_000:]
