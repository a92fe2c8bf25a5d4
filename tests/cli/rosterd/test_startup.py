"""The CLI starts fast: ``rosterd status --json`` against ``python -c pass``, and what it imports.

The timing is printed for the report and bounded loosely (two cores shared with other work);
the import check is the exact one: no httpx, starlette, uvicorn or anyio on a read verb's path.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from tests.conftest import BIN
from tests.daemon.fixture import Daemon

RUNS = 15
RATIO_BOUND = 12.0  # loose on purpose: a shared machine; the printed numbers are the measurement
HEAVY = (
    "httpx",
    "httpcore",
    "starlette",
    "uvicorn",
    "anyio",
    "psutil",
    "roost.faces.api",
    "roost.truth.roster",
)


def timings(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(fastest, median) seconds over RUNS runs: the fastest is what the code costs, the median
    what this busy machine made of it."""
    took = []
    for _ in range(RUNS):
        began = time.perf_counter()
        subprocess.run(argv, env=env, check=True, capture_output=True)
        took.append(time.perf_counter() - began)
    return min(took), statistics.median(took)


def test_status_json_starts_within_a_small_multiple_of_bare_python(running: Daemon) -> None:
    status = [str(BIN / "rosterd"), "status", "--json"]
    bare = [sys.executable, "-c", "pass"]
    subprocess.run(status, env=running.env, check=True, capture_output=True)  # warm the page cache
    base_min, base_median = timings(bare, running.env)
    cli_min, cli_median = timings(status, running.env)
    print(
        f"rosterd status --json: fastest {cli_min * 1000:.1f} ms, median {cli_median * 1000:.1f} ms; "
        f"python -c pass: fastest {base_min * 1000:.1f} ms, median {base_median * 1000:.1f} ms; "
        f"ratio fastest x{cli_min / base_min:.1f}, median x{cli_median / base_median:.1f}"
    )
    assert cli_min / base_min < RATIO_BOUND


def test_read_verbs_import_nothing_heavy(running: Daemon) -> None:
    probe = (
        "import sys\n"
        "from roost.faces.cli.rosterd import main\n"
        "code = main(sys.argv[1:])\n"
        f"heavy = sorted(m for m in sys.modules if m.startswith({HEAVY!r}))\n"
        "print(heavy, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    for args in (["status", "--json"], ["list"], ["read", "nope"]):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *args], env=running.env, capture_output=True, text=True, timeout=60
        )
        assert proc.stderr.splitlines()[-1] == "[]", (args, proc.stderr)
