"""``rosterd daemon [--config PATH]``: the same daemon as ``python -m roost.daemon``, via the CLI."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.cli.rosterd.helpers import GENEROUS, fails, rosterd
from tests.conftest import BIN
from tests.daemon.fixture import Daemon


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=lambda signum: signum.name)
def test_rosterd_daemon_serves_until_a_signal_and_says_it_stopped(
    daemon: Daemon, signum: signal.Signals
) -> None:
    """``make run`` is this daemon in the foreground: a stop (SIGTERM, or Ctrl-C's SIGINT) is
    its last line on stderr, so a person never mistakes it for a crash."""
    daemon.write_config()
    proc = subprocess.Popen(
        [str(BIN / "rosterd"), "daemon", "--config", str(daemon.config)],
        env=daemon.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + GENEROUS
        while (answer := rosterd(daemon, "status", "--json")).returncode != 0:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, answer.stderr
            time.sleep(0.05)
        assert json.loads(answer.stdout)["listen"]["loopback"] == f"127.0.0.1:{daemon.port}"
        proc.send_signal(signum)
        assert proc.wait(GENEROUS) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(GENEROUS)
    assert not daemon.socket.exists()
    assert proc.stderr is not None
    said = proc.stderr.read().decode().splitlines()
    assert said[-1] == (
        f"rosterd: stopped on {signum.name}; every session keeps running (in tmux, or in its holder), "
        "and the next rosterd daemon finds it"
    )


def test_rosterd_daemon_with_a_missing_config_exits_1(daemon: Daemon) -> None:
    missing = daemon.roost.root / "nowhere.toml"
    assert (
        fails(daemon, 1, "daemon", "--config", str(missing))
        == f"rosterd daemon: no config file at {missing}\n"
    )
