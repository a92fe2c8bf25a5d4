"""The ACP adapter as the holder's child, on the holder's loop: written to, watched for its
exit, and ended.

The adapter is the holder's only child, started by :mod:`roost.headless.holder.spawn` before the loop
runs. Its stdin and stdout are the relay's other side, its standard error goes to a file of its
own (a failed start quotes its last error line), and its environment carries its holder's mark
(``ROSTERD_HOLDER``), by which a daemon later tells the adapter a dead holder left from any
other process. Its exit is noticed by a pidfd, and ending it is bounded in time at every step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess

from roost.base import paths

LINE_LIMIT = paths.HOLDER_LINE_LIMIT
CANCEL_PAUSE = 0.2
"""After ``session/cancel``, how long the adapter gets to end its turn before its stdin closes."""
STDIN_GRACE = 3.0
"""After its stdin closes, how long the adapter gets to exit by itself (codex-acp takes 2 s)."""
SIGNAL_GRACE = 2.0
"""After SIGTERM, how long any process of the tree gets before SIGKILL."""


class Adapter:
    """One adapter process: ``lines`` is its stdout, ``exit`` its exit status once it exits."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        lines: asyncio.StreamReader,
        to: asyncio.StreamWriter,
        exit: asyncio.Future[int],
    ) -> None:
        self.popen = popen
        self.lines = lines
        self.exit = exit
        self._to = to

    @property
    def pid(self) -> int:
        return self.popen.pid

    @classmethod
    async def attach(cls, popen: subprocess.Popen[bytes]) -> Adapter:
        """The adapter :func:`roost.headless.holder.spawn.spawn` started, its pipes on the loop."""
        loop = asyncio.get_running_loop()
        assert popen.stdin is not None and popen.stdout is not None
        lines = asyncio.StreamReader(limit=LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines), popen.stdout)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, popen.stdin)
        to = asyncio.StreamWriter(transport, protocol, None, loop)
        return cls(popen, lines, to, _exit_of(popen))

    async def write(self, line: bytes) -> None:
        """One line to the adapter's stdin; nothing once that is closed or broken."""
        if self._to.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            self._to.write(line)
            await self._to.drain()

    async def end(self, session_id: str | None) -> None:
        """``session/cancel`` (when a session is open), then EOF on stdin, then signals: each
        bounded in time."""
        adapter = self.popen
        with contextlib.suppress(ConnectionError, RuntimeError):
            if session_id is not None:
                cancel = {
                    "jsonrpc": "2.0",
                    "method": "session/cancel",
                    "params": {"sessionId": session_id},
                }
                self._to.write(json.dumps(cancel).encode() + b"\n")
                await self._to.drain()
                await asyncio.sleep(CANCEL_PAUSE)
            self._to.close()
        for step, grace in (
            (lambda: None, STDIN_GRACE),
            (adapter.terminate, SIGNAL_GRACE),
            (adapter.kill, SIGNAL_GRACE),
        ):
            with contextlib.suppress(ProcessLookupError):
                step()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.exit), grace)
                return


def _exit_of(proc: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """The adapter's exit status, as soon as it exits.

    Not asyncio's subprocess wait: that also waits for the adapter's pipes to close, and a tool
    the adapter started keeps them open after it is gone. A pidfd turns readable on the exit
    itself."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[int] = loop.create_future()
    pidfd = os.pidfd_open(proc.pid)

    def exited() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        done.set_result(proc.wait())

    loop.add_reader(pidfd, exited)
    return done
