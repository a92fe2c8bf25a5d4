"""The daemon process: its files and their modes, its listeners, its lock, its shutdown."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import time

import psutil
import pytest

from roost.daemon import cli
from roost.daemon.main import GRACE
from tests.daemon.fixture import Daemon


def mode(path: os.PathLike[str]) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_secrets_and_socket_are_private_and_created_on_first_run(running: Daemon) -> None:
    assert mode(running.socket) == 0o600
    assert stat.S_ISSOCK(os.stat(running.socket).st_mode)
    for name in ("loopback.token", "node.key"):
        assert mode(running.config_dir / name) == 0o600
    assert len(running.token) >= 32
    node = json.loads((running.config_dir / "node.key").read_text())
    assert running.get("/status")["node_id"] == node["id"]


def test_secrets_survive_a_restart(running: Daemon) -> None:
    token, node_id = running.token, running.get("/status")["node_id"]
    assert running.stop() == 0
    running.start()
    assert running.token == token
    assert running.get("/status")["node_id"] == node_id


def test_binds_only_loopback_and_its_socket(running: Daemon) -> None:
    assert running.proc is not None
    process = psutil.Process(running.proc.pid)
    inet = [c for c in process.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    bound = sorted((c.laddr.ip, c.laddr.port) for c in inet)
    assert bound == sorted([("127.0.0.1", running.port), ("127.0.0.1", running.hook_port)])
    unix = [c.laddr for c in process.net_connections(kind="unix") if c.laddr]
    assert str(running.socket) in unix


@pytest.mark.alone  # a bound on time: the best of five answers, far under the 40 ms it guards against
def test_an_answer_on_the_loopback_listener_does_not_wait_for_a_delayed_ack(running: Daemon) -> None:
    """Nagle off: without it each answer waited ~40 ms between its headers and its body."""
    with running.tcp(running.token) as client:
        client.get("/status")
        took = []
        for _ in range(5):
            began = time.perf_counter()
            assert client.get("/status").status_code == 200
            took.append(time.perf_counter() - began)
    assert min(took) < 0.030, took


def test_sigterm_and_sigint_stop_cleanly_and_remove_the_socket(daemon: Daemon) -> None:
    for signum in (signal.SIGTERM, signal.SIGINT):
        daemon.start()
        assert daemon.stop(signum) == 0
        assert not daemon.socket.exists()


def test_sigterm_ends_open_streams(running: Daemon) -> None:
    with running.unix(timeout=20) as client, client.stream("GET", "/changes") as response:
        lines = response.iter_lines()
        assert next(lines).startswith("id: ")
        began = time.monotonic()
        assert running.stop() == 0
        stopped = time.monotonic() - began
        assert list(lines)[-1] == ""  # the stream ended cleanly, after its last frame
    print(f"stopped in {stopped * 1000:.0f} ms with a stream open")
    assert stopped < GRACE  # the stream was ended, not waited on until the grace ran out


def test_a_second_daemon_refuses_to_start(running: Daemon) -> None:
    second = running.spawn()
    assert second.wait(20) == 1
    assert "already running" in running.log.read_text()
    assert running.get("/status")["status_epoch"]  # the first one still answers


def test_a_stale_socket_from_a_killed_daemon_is_replaced(running: Daemon) -> None:
    assert running.stop(signal.SIGKILL) == -signal.SIGKILL
    assert running.socket.exists()
    running.start()
    assert mode(running.socket) == 0o600


def test_an_unknown_config_key_is_refused(daemon: Daemon) -> None:
    daemon.settings = {"node": {"loopback-port": 1}}
    daemon.write_config()
    proc = daemon.spawn()
    assert proc.wait(20) == 1
    assert "unknown key 'loopback-port' in [node]" in daemon.log.read_text()


def test_a_section_nothing_reads_is_refused(daemon: Daemon) -> None:
    daemon.settings = {"journal": {"keep_days": 30}}
    daemon.write_config()
    assert daemon.spawn().wait(20) == 1
    assert f"{daemon.config}: unknown section [journal]" in daemon.log.read_text()


def test_a_key_it_would_not_act_on_is_refused_in_one_line_and_nothing_starts(daemon: Daemon) -> None:
    """A wildcard swarm listener would open the node to every network: refused, not bound."""
    daemon.settings = {"node": {"listen": "0.0.0.0"}}
    daemon.write_config()
    assert daemon.spawn().wait(20) == 1
    assert daemon.log.read_text() == (
        f'rosterd daemon: {daemon.config}: [node] listen = "0.0.0.0" is refused: rosterd listens on '
        'loopback, its unix socket and the Tailscale interface only; write "tailscale", "off", or a '
        "loopback or Tailscale address\n"
    )
    assert not daemon.socket.exists()
    assert not (daemon.config_dir / "loopback.token").exists()


def test_with_no_tailscale_and_no_address_named_the_swarm_listener_stays_off_and_says_why(
    daemon: Daemon,
) -> None:
    daemon.settings = {"swarm": {"static_peers": ["100.64.0.12:8791"]}, "node": {"listen": "tailscale"}}
    daemon.start()
    assert (
        "rosterd: swarm listener off: no `tailscale` on PATH and [node] listen names no address"
    ) in daemon.log.read_text()
    status = daemon.get("/status")
    assert status["listen"]["swarm"] is None
    assert status["swarm"]["off"].startswith("no `tailscale` on PATH")
    assert daemon.get("/swarm/nodes")["listen_off"] == status["swarm"]["off"]


def test_a_bad_config_value_is_refused(daemon: Daemon) -> None:
    daemon.settings = {"node": {"loopback_port": "8790"}}
    daemon.write_config()
    assert daemon.spawn().wait(20) == 1
    assert "[node] loopback_port must be an int" in daemon.log.read_text()


def test_config_path_is_taken_from_the_command_line(daemon: Daemon) -> None:
    other = daemon.roost.root / "elsewhere" / "rosterd.toml"
    other.parent.mkdir()
    other.write_text(
        f"[node]\nloopback_port = {daemon.port}\nhook_port = {daemon.hook_port}\nname = 'elsewhere'\n"
    )
    daemon.proc = daemon.spawn("--config", str(other))
    daemon.wait_ready()
    assert daemon.get("/status")["node"] == "elsewhere"
    assert mode(other.parent / "loopback.token") == 0o600  # secrets live beside the config


def test_a_missing_config_named_on_the_command_line_is_an_error(daemon: Daemon) -> None:
    assert daemon.spawn("--config", str(daemon.roost.root / "nope.toml")).wait(20) == 1
    assert "no config file at" in daemon.log.read_text()


def test_usage(daemon: Daemon) -> None:
    assert daemon.spawn("--bogus").wait(20) == 1
    assert daemon.log.read_text().startswith("usage: rosterd daemon [--config PATH]")


def test_a_token_readable_by_others_is_refused(daemon: Daemon) -> None:
    daemon.config_dir.mkdir(parents=True)
    token = daemon.config_dir / "loopback.token"
    token.write_text("x" * 43 + "\n")
    token.chmod(0o644)
    daemon.write_config()
    assert daemon.spawn().wait(20) == 1
    assert "readable by others" in daemon.log.read_text()


def test_a_loopback_port_in_use_leaves_the_web_app_off_not_the_daemon(daemon: Daemon) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", daemon.port))
        taken.listen()
        daemon.start()
        status = daemon.get("/status")
    why = f"cannot listen on 127.0.0.1:{daemon.port}: Address already in use"
    assert status["listen"]["loopback"] is None and status["listen"]["off"]["loopback"] == why
    assert f"rosterd: loopback listener off: {why}; " in daemon.log.read_text()


@pytest.mark.parametrize("which", ["port", "hook_port"])
def test_a_port_an_outgoing_connection_holds_is_off_and_said_not_a_traceback(
    daemon: Daemon, which: str
) -> None:
    """A bind with SO_REUSEADDR succeeds on the local port of a connection going out; only
    ``listen`` finds the conflict, and the daemon says so in one line and serves without it."""
    with socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen()
        client.connect(server.getsockname())
        port = client.getsockname()[1]
        setattr(daemon, which, port)
        daemon.start()
        off = daemon.get("/status")["listen"]["off"]
    said = daemon.log.read_text()
    assert (
        off["loopback" if which == "port" else "hooks"]
        == f"cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert said.count(f"cannot listen on 127.0.0.1:{port}: Address already in use") == 1
    assert "Traceback" not in said


def test_the_dispatcher_can_list_the_verb() -> None:
    assert cli.USAGE == (("daemon [--config PATH]", "run the daemon in the foreground"),)


def test_rosterd_socket_moves_the_api_socket(daemon: Daemon) -> None:
    moved = daemon.runtime / "elsewhere.sock"
    daemon.write_config()
    daemon.roost.env["ROSTERD_SOCKET"] = str(moved)
    proc = daemon.spawn()
    try:
        daemon.wait_for(moved.exists, what="the moved socket")
        assert mode(moved) == 0o600
        assert not daemon.socket.exists()
    finally:
        proc.terminate()  # early, maybe mid-startup: the shutdown is clean all the same
        assert proc.wait(20) == 0
    assert not moved.exists()


def test_a_file_where_the_socket_goes_is_left_alone(daemon: Daemon) -> None:
    daemon.socket.parent.mkdir(mode=0o700, parents=True)
    daemon.socket.write_text("not a socket")
    daemon.write_config()
    assert daemon.spawn().wait(20) == 1
    assert "something that is not a socket is there" in daemon.log.read_text()
    assert daemon.socket.read_text() == "not a socket"
