"""Running roost inside a pane, as an agent or its adapter would.

The self-pane verbs (whoami, state, reply, identify) read ``$TMUX``/``$TMUX_PANE``, which
only a process started by tmux has. A ``Shell`` types each command into a plain shell pane
and collects its stdout, stderr and exit status through files.
"""

from __future__ import annotations

import itertools
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import BIN, Roost

ROOST = str(BIN / "roost")
_RUNS = itertools.count()  # names each run's files: a %N is reused by a restarted server


@dataclass
class Shell:
    roost: Roost
    pane: str

    @classmethod
    def open(cls, roost: Roost, name: str = "sh") -> Shell:
        """A new window running ``sh`` (starting the server when it is not running)."""
        running = (
            subprocess.run(
                ["tmux", "-S", roost.socket, "has-session"], capture_output=True, env=roost.env
            ).returncode
            == 0
        )
        pane = roost.window(name, "sh") if running else roost.start("sh", window=name)
        return cls(roost, pane)

    def run(
        self,
        *args: str,
        input: str | None = None,
        env: dict[str, str] | None = None,
        program: str = ROOST,
        timeout: float = 30,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``roost ARGS`` in the pane and wait for it to finish."""
        base = self.roost.root / "inpane" / f"run{next(_RUNS)}"
        base.parent.mkdir(exist_ok=True)
        stdin = base.with_suffix(".in")
        stdin.write_text(input or "")
        rc = base.with_suffix(".rc")
        out, err, rc_q = (shlex.quote(str(base.with_suffix(s))) for s in (".out", ".err", ".rc"))
        assigns = [f"{k}={shlex.quote(v)}" for k, v in (env or {}).items()]
        line = " ".join(
            [
                *(["env", *assigns] if assigns else []),
                shlex.join([program, *args]),
                f"<{shlex.quote(str(stdin))} >{out} 2>{err};",
                f"echo $? >{rc_q}.tmp && mv {rc_q}.tmp {rc_q}",
            ]
        )
        self.roost.tmux("send-keys", "-t", self.pane, "-l", line)
        self.roost.tmux("send-keys", "-t", self.pane, "Enter")
        deadline = time.monotonic() + timeout
        while not rc.exists():
            if time.monotonic() > deadline:
                raise AssertionError(f"{args} did not finish in pane {self.pane}")
            time.sleep(0.05)
        return subprocess.CompletedProcess(
            args,
            int(rc.read_text()),
            base.with_suffix(".out").read_text(),
            base.with_suffix(".err").read_text(),
        )


def counting_tmux(directory: Path) -> tuple[dict[str, str], Path]:
    """A ``tmux`` first on PATH that counts its invocations, then runs the real one."""
    directory.mkdir(exist_ok=True)
    count = directory / "calls"
    real = subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True, text=True).stdout.strip()
    wrapper = directory / "tmux"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >>{count}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{directory}:{os.environ['PATH']}"}, count
