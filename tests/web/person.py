"""A person in ``tmux attach``: a real tmux client on a pseudo-terminal of a chosen size.

Its output is read and thrown away on a thread (a client nobody reads would stall), and
``type`` writes keys as if typed, which is what makes tmux count it as the latest client.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import struct
import subprocess
import termios
import threading

from tests.conftest import Roost


class Person:
    def __init__(self, roost: Roost, session: str, cols: int, rows: int) -> None:
        self._master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        env = {**roost.env, "TERM": "xterm-256color"}
        self.proc = subprocess.Popen(
            ["tmux", "-S", roost.socket, "attach-session", "-t", session],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        with contextlib.suppress(OSError):
            while os.read(self._master, 65536):
                pass

    def type(self, keys: bytes) -> None:
        os.write(self._master, keys)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        with contextlib.suppress(OSError):
            os.close(self._master)
        self._reader.join(5)

    def __enter__(self) -> Person:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
