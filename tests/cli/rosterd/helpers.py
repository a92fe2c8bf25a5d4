"""Running the real ``rosterd`` command against a test's daemon, and reading its streams.

``rosterd`` runs as a separate process with the daemon's environment (its runtime dir, so
its socket), exactly as a person or script would run it. ``Follower`` reads a long-running
verb (``watch``, ``changes``) line by line in a thread, stamping each line on arrival, so a
test can say how soon a change reached it.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon

GENEROUS = 20.0  # seconds for anything that waits on a loaded machine

_CLOCKS = re.compile(rb'"(generated_at|uptime_s|streams)":("[^"]*"|[0-9.]+)')


def rosterd(
    daemon: Daemon, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``rosterd ARGS`` as a real process in the daemon's environment (plus ``env``); stdout and
    stderr as bytes."""
    return subprocess.run(
        [str(BIN / "rosterd"), *args], env={**daemon.env, **(env or {})}, capture_output=True, timeout=timeout
    )


def ok(daemon: Daemon, *args: str) -> bytes:
    proc = rosterd(daemon, *args)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == b"", proc.stderr.decode()
    return proc.stdout


def fails(daemon: Daemon, code: int, *args: str) -> str:
    """Run a call that must fail with ``code`` and print nothing on stdout; its stderr."""
    proc = rosterd(daemon, *args)
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == b"", proc.stdout
    return proc.stderr.decode()


def body(daemon: Daemon, path: str, method: str = "GET") -> bytes:
    """The same resource as the CLI reads it, fetched with httpx over the unix socket."""
    with daemon.unix() as client:
        response = client.request(method, path)
    assert response.status_code == 200, response.text
    return response.content


def masked(content: bytes) -> bytes:
    """A body with the values that move on their own (the clock, open streams) blanked out."""
    return _CLOCKS.sub(rb'"\1":"*"', content)


def same_as_api(daemon: Daemon, path: str, *args: str) -> bytes:
    """``rosterd ARGS`` prints ``GET path``'s body byte for byte (plus a newline). Other agents on
    this machine are sessions too and may change the roster meanwhile: the output must equal
    the body fetched just before or just after it, and a few tries absorb a busy moment."""
    for _ in range(5):
        before = body(daemon, path)
        printed = ok(daemon, *args)
        after = body(daemon, path)
        if masked(printed) in (masked(before) + b"\n", masked(after) + b"\n"):
            return printed
    raise AssertionError(f"rosterd {args} printed {printed!r}, the API said {before!r} then {after!r}")


def badged(roost: Roost, word: str, session: str) -> str:
    """A pane whose own program badged itself with ``roost state WORD``, then stays."""
    pane = roost.start(f"sh -c 'roost state {word}; exec sleep 600'", session=session)
    roost.wait_for(lambda: roost.option(pane, "@roost-state") == word, what=f"{pane} badged {word}")
    return pane


def state(roost: Roost, pane: str, word: str) -> None:
    """``roost state WORD`` as the pane's own program would run it."""
    proc = roost.run("state", word, env={"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane})
    assert proc.returncode == 0, proc.stderr


def session_of(daemon: Daemon, pane: str) -> dict[str, Any]:
    """The record of the session in ``pane``, once the daemon has it."""
    return daemon.wait_for(
        lambda: daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane),
        GENEROUS,
        f"a session in {pane}",
    )


class Follower:
    """A running ``rosterd watch|changes``; its stdout lines as they arrive."""

    def __init__(self, daemon: Daemon, *args: str) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "rosterd"), *args], env=daemon.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self._lines: queue.Queue[tuple[bytes, float] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.put((raw.rstrip(b"\n"), time.monotonic()))
        self._lines.put(None)

    def next(self, timeout: float = GENEROUS) -> tuple[bytes, float]:
        """The next line and when it arrived (``time.monotonic()``)."""
        item = self._lines.get(timeout=timeout)
        assert item is not None, f"rosterd ended: {self.finish()}"
        return item

    def until(self, predicate: Callable[[bytes], bool], timeout: float = GENEROUS) -> tuple[bytes, float]:
        deadline = time.monotonic() + timeout
        while True:
            line, at = self.next(max(0.01, deadline - time.monotonic()))
            if predicate(line):
                return line, at

    def finish(self, timeout: float = GENEROUS) -> tuple[int, str]:
        """Wait for it to end by itself; its exit status and stderr."""
        code = self.proc.wait(timeout)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode()

    def stop(self) -> int:
        """Interrupt it as a person would (Ctrl-C) and return its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(GENEROUS)
        finally:
            if self.proc.poll() is None:  # it did not stop: end it, so the reader sees its pipe end
                self.proc.kill()
                self.proc.wait(GENEROUS)
            self._thread.join(GENEROUS)
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *_: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.stop()
