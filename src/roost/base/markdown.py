"""Rendering an agent's markdown for a person, by piping it through ``preen``.

Rendering is a convenience, never the payload: every way it can go wrong (no ``preen``, a
``preen`` that fails or hangs, a render that comes back visually empty) gives the caller a
reason instead of output, so the caller prints the raw text and says why.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass

PREEN = "preen"
TIMEOUT = 10.0

# CSI and OSC escape sequences, and lone two-byte escapes: what colours a render but draws nothing.
_ESCAPES = re.compile(rb"\x1b\[[0-9;?<=>!]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


@dataclass(frozen=True)
class Rendered:
    """Either the rendered bytes or the reason there are none."""

    output: bytes | None
    problem: str | None = None


def visually_empty(data: bytes) -> bool:
    """True when ``data`` would draw nothing: only whitespace and escape sequences."""
    return not _ESCAPES.sub(b"", data).strip()


def render(text: bytes, timeout: float = TIMEOUT) -> Rendered:
    """Pipe ``text`` through ``preen -``; preen writes plain bytes, colour kept, to a pipe."""
    binary = shutil.which(PREEN)
    if binary is None:
        return Rendered(None, f"{PREEN} is not installed (not found on PATH)")
    try:
        proc = subprocess.Popen(
            [binary, "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        return Rendered(None, f"{PREEN} could not be started: {error.strerror}")
    try:
        out, err = proc.communicate(text, timeout=timeout)
    except subprocess.TimeoutExpired:
        # preen runs a renderer of its own: end the whole group so no pipe stays open.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Rendered(None, f"{PREEN} did not finish within {timeout:g} s")
    if proc.returncode != 0:
        detail = err.decode(errors="replace").strip().splitlines()
        said = f": {detail[-1]}" if detail else ""
        return Rendered(None, f"{PREEN} failed with exit {proc.returncode}{said}")
    if visually_empty(out):
        return Rendered(None, f"{PREEN} rendered the reply as nothing visible")
    return Rendered(out)
