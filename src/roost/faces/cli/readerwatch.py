"""Ending a follow stream (``rosterd watch``, ``roost events --follow``) the moment its
stdout pipe loses its reader, rather than at its next line, which may be hours away.

Only :func:`roost.faces.cli.output.to_reader` uses this, and only for a follow verb, so the other
verbs never load it.
"""

from __future__ import annotations

import io
import os
import select
import signal
import stat
import sys
import threading

from roost.faces.cli.output import ReaderGone


class ReaderWatch:
    """Ends a follow stream in the main thread the moment its stdout pipe loses its reader.

    Linux reports ``POLLERR`` on a pipe's write end once no reader is left. A thread waits for
    that and sends ``SIGPIPE`` to the main thread: the signal interrupts the system call the
    stream is blocked in (a socket read, a sleep), and the handler raises :class:`ReaderGone`
    there, once. It does so only after the stream has printed something: before that, the
    stream is still starting, and a start that fails (no daemon, no server) keeps its exit
    status; one that succeeds prints at once and meets the closed pipe. A ``SIGPIPE`` from
    anything else (a write to a socket whose daemon went) is ignored, as Python ignores it by
    default, and left to the code that wrote.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._out = _Tally.over(fd)
        self._gone = False
        self._armed = True
        self._previous = signal.signal(signal.SIGPIPE, self._handle)
        self._main = threading.main_thread().ident
        # The thread starts with every signal blocked (a thread inherits its mask), so a signal
        # sent to the process goes to the main thread: one this thread took would leave the
        # main thread blocked in its read, never interrupted (a Ctrl-C that did not stop the
        # stream). Signals that come meanwhile wait, blocked, for the main thread's old mask.
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        try:
            threading.Thread(target=self._wait, name="reader-watch", daemon=True).start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    @classmethod
    def start(cls) -> ReaderWatch | None:
        """A watch on stdout, or None when stdout is not a pipe (a terminal hangs up by itself)
        or this is not the main thread (only it may handle signals)."""
        if sys.stdout is None or threading.current_thread() is not threading.main_thread():
            return None
        try:
            fd = sys.stdout.fileno()
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return None
        except (OSError, ValueError):
            return None
        return cls(fd)

    def _wait(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLERR)  # POLLOUT is not asked for: no busy loop
        poller.poll()
        self._gone = True
        signal.pthread_kill(self._main, signal.SIGPIPE)

    def _handle(self, signum: int, frame: object) -> None:
        if self._armed and self._gone and self._out.wrote:
            self._armed = False
            raise ReaderGone

    def stop(self) -> None:
        """Disarm: from here on a late signal does nothing (the handler is put back)."""
        self._armed = False
        signal.signal(signal.SIGPIPE, self._previous)


class _Tally(io.FileIO):
    """stdout's file descriptor, noting whether a write has been tried on the pipe yet.

    Noted before the write, not after: the reader may read it and go, and the signal be
    handled, between the write's return and any statement after it.
    """

    wrote = False

    def write(self, data: bytes | bytearray | memoryview) -> int:
        self.wrote = self.wrote or len(data) > 0
        return super().write(data)

    @classmethod
    def over(cls, fd: int) -> _Tally:
        """Rebuild ``sys.stdout`` as it was (buffered or not, same encoding) over a tally of ``fd``."""
        old = sys.stdout
        old.flush()
        raw = cls(fd, "wb", closefd=False)
        sys.stdout = io.TextIOWrapper(
            raw if isinstance(old.buffer, io.FileIO) else io.BufferedWriter(raw),
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=old.line_buffering,
            write_through=old.write_through,
        )
        return raw
