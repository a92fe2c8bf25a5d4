"""Two daemons on one machine: the second starts while the first holds the TCP ports both are
set to, and runs without them, saying once in its log, in ``GET /status`` and in ``rosterd
doctor`` which listener is off and why (docs/contracts.md, "Listeners a daemon starts
without"). Each daemon has its own sandbox (tmux server, XDG folders, runtime directory), as two
users on one server have."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from roost.daemon import listen
from tests.conftest import BIN, sandbox
from tests.daemon.fixture import Daemon, daemon

__all__ = ["daemon"]

IN_USE = "cannot listen on 127.0.0.1:{}: Address already in use"


@contextmanager
def beside(root: Path, port: int, hook_port: int) -> Iterator[Daemon]:
    """A second daemon in a sandbox of its own under ``root``, set to ``port`` and ``hook_port``;
    started, and killed on leaving."""
    runtime = Path(tempfile.mkdtemp(prefix="rd", dir="/tmp"))
    runtime.chmod(0o700)
    root.mkdir()
    with sandbox(root) as other:
        second = Daemon(other, runtime, port, hook_port=hook_port)
        try:
            second.start()
            yield second
        finally:
            if second.proc is not None and second.proc.poll() is None:
                second.proc.kill()
                second.proc.wait(10)
            shutil.rmtree(runtime, ignore_errors=True)


def doctor(daemon: Daemon) -> dict[str, dict[str, object]]:
    proc = subprocess.run(
        [str(BIN / "rosterd"), "doctor", "--json"],
        env=daemon.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return {row["name"]: row for row in json.loads(proc.stdout)["checks"]}


def test_a_second_daemon_starts_without_the_ports_the_first_holds(daemon: Daemon, tmp_path: Path) -> None:
    daemon.start()
    with beside(tmp_path / "second", daemon.port, daemon.hook_port) as second:
        status = second.get("/status")
        off = status["listen"]["off"]
        assert (status["listen"]["loopback"], status["listen"]["hooks"], status["hooks"]["listen"]) == (
            None,
            None,
            None,
        )
        assert (off["loopback"], off["hooks"]) == (
            IN_USE.format(daemon.port),
            IN_USE.format(daemon.hook_port),
        )
        assert status["listen"]["unix"] == str(second.socket)

        said = second.log.read_text()
        assert said.count(f"rosterd: loopback listener off: {off['loopback']}; ") == 1
        assert said.count(f"rosterd: hook port off: {off['hooks']}; ") == 1
        assert "web app login" not in said and "Traceback" not in said

        rows = doctor(second)
        assert rows["loopback"]["outcome"] == rows["hook port"]["outcome"] == "optional"
        assert rows["loopback"]["detail"] == f"off: {off['loopback']}; {listen.OPTIONAL['loopback']}"
        assert rows["hook port"]["detail"] == f"off: {off['hooks']}; {listen.OPTIONAL['hooks']}"

        told = subprocess.run(
            [str(BIN / "rosterd"), "status"], env=second.env, capture_output=True, text=True, timeout=60
        )
        assert f"loopback off ({off['loopback']}) and hooks off ({off['hooks']})" in told.stdout

        link = subprocess.run(
            [str(BIN / "rosterd"), "ui"], env=second.env, capture_output=True, text=True, timeout=60
        )
        assert link.returncode == 1 and link.stdout == ""  # the daemon refused it
        assert f"the web app is off: its loopback listener is off ({off['loopback']})" in link.stderr

        # The first keeps its ports, and the second answers everything but a browser on its socket.
        first = daemon.get("/status")["listen"]
        assert (
            first["loopback"] == f"127.0.0.1:{daemon.port}"
            and first["hooks"] == f"127.0.0.1:{daemon.hook_port}"
        )
        assert "loopback" not in first["off"] and "hooks" not in first["off"]
        assert second.snapshot()["node_id"] != daemon.snapshot()["node_id"]
    rows = doctor(daemon)
    assert rows["loopback"]["outcome"] == rows["hook port"]["outcome"] == "ok"
    assert rows["hook port"]["detail"] == f"listens on 127.0.0.1:{daemon.hook_port} (HTTP hooks post there)"


def test_a_hook_port_of_0_is_off_by_the_config_and_doctor_skips_it(daemon: Daemon) -> None:
    daemon.hook_port = 0
    daemon.start()
    assert daemon.get("/status")["listen"]["off"]["hooks"] == "[node] hook_port is 0"
    assert "rosterd: hook port off: [node] hook_port is 0\n" in daemon.log.read_text()
    row = doctor(daemon)["hook port"]
    assert (row["outcome"], row["detail"]) == ("skip", "off: [node] hook_port is 0")
