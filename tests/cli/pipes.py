"""Running a verb into a real pipe whose reader goes, as ``VERB | head -c0`` does in a shell.

Whether the reader is gone before the verb's first write or only before its exit flush is a
race, so each verb runs ``TRIES`` times, half of them with ``PYTHONUNBUFFERED`` set (every
write meets the closed pipe) and half without (the buffered text meets it at the last flush);
a failing verb also has its stderr in that pipe every other pair of tries.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator

TRIES = 20
GENEROUS = 20.0


def tries(env: dict[str, str]) -> Iterator[dict[str, str]]:
    """``TRIES`` environments, alternating unbuffered and buffered stdout."""
    buffered = {name: value for name, value in env.items() if name != "PYTHONUNBUFFERED"}
    for n in range(TRIES):
        yield {**buffered, "PYTHONUNBUFFERED": "1"} if n % 2 else buffered


def fails_quietly(argv: list[str], env: dict[str, str], code: int, said: bytes) -> None:
    """``argv`` fails with ``code`` on every try, its stderr starting ``said`` (empty when stderr
    goes into the closed pipe too), whether or not its reader is there to see it."""
    for n, each in enumerate(tries(env)):
        stderr_too = n % 4 >= 2
        got, stderr = into_closed_pipe(argv, each, stderr_too)
        assert got == code, (argv, stderr_too, stderr)
        assert stderr == b"" if stderr_too else stderr.startswith(said), (argv, stderr)


def into_closed_pipe(argv: list[str], env: dict[str, str], stderr_too: bool = False) -> tuple[int, bytes]:
    """Run ``argv`` with stdout (and with ``stderr_too`` stderr) into a pipe read by ``head -c0``,
    which exits at once without reading; the exit status and what reached stderr."""
    read, write = os.pipe()
    with subprocess.Popen(["head", "-c0"], stdin=read):  # waited for on leaving
        os.close(read)
        try:
            proc = subprocess.Popen(
                argv, stdout=write, stderr=write if stderr_too else subprocess.PIPE, env=env
            )
        finally:
            os.close(write)
        return finish(proc), b"" if stderr_too else drained(proc)


def finish(proc: subprocess.Popen[bytes], timeout: float = GENEROUS) -> int:
    """Its exit status; a process still running after ``timeout`` is killed and fails the test."""
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{proc.args} did not end within {timeout}s of its reader going") from None
    return proc.returncode


def drained(proc: subprocess.Popen[bytes]) -> bytes:
    assert proc.stderr is not None
    with proc.stderr:
        return proc.stderr.read()


def first_line_then_gone(argv: list[str], env: dict[str, str]) -> tuple[int, bytes, float]:
    """Read the first line ``argv`` prints, then close the pipe as ``head -1`` does; its exit
    status, its stderr and how many seconds it took to end after the close."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline(), f"{argv} printed nothing"
    finally:
        proc.stdout.close()
    closed = time.monotonic()
    code = finish(proc)
    return code, drained(proc), time.monotonic() - closed
