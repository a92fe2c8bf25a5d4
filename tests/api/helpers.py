"""Real processes for claims to be about, and claim bodies naming them."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.daemon.fixture import pid_start_ticks


@contextmanager
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A process that lives for the test: the scan ends sessions whose process is gone."""
    proc = subprocess.Popen(["sleep", "600"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


def about(proc: subprocess.Popen[bytes], **fields: Any) -> dict[str, Any]:
    """A claim body naming ``proc`` by pid and start ticks."""
    return {"pid": proc.pid, "start_ticks": pid_start_ticks(proc.pid), **fields}


def key_of(node_id: str, proc: subprocess.Popen[bytes]) -> str:
    return f"{node_id}:{proc.pid}:{pid_start_ticks(proc.pid)}"


def claimed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records some claim spoke for: what a refused request must leave as it was. The process
    scan sees every agent on the machine (another test's, the person's own), and one may come or
    go between two reads; a claim that got through would show here with its source."""
    return [record for record in records if set(record["sources"]) - {"scan"}]
