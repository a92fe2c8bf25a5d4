"""``run_daemon(config)``: wire the roster, the scan and the API, serve until told to stop.

One asyncio loop does everything: the same app (the API, and the MCP server at ``/mcp``) is
served on the unix socket and on 127.0.0.1, the scan runs on a timer, leases expire on the
roster's own deadline, and SIGTERM or SIGINT end the streams, close the listeners and remove
the socket.

The roster comes first: this module imports only what binding, rebuilding and serving
``GET /snapshot`` need, serves that (:mod:`roost.faces.api.startup`), and only then imports the rest
of the daemon (:mod:`roost.daemon.compose`) off the loop and hands its whole app to the
listeners. ``tests/daemon/test_opening.py`` holds it to that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
import signal
import socket
import sys
import time
from importlib import import_module
from pathlib import Path

import uvicorn

from roost.actions import names
from roost.actions.sessions import Door
from roost.agents import manifest
from roost.base import heap, paths
from roost.daemon import listen, loglimit, secrets
from roost.daemon.config import Config
from roost.daemon.rebuild import Observer
from roost.daemon.wire import JsonErrors
from roost.faces.api import auth
from roost.faces.api.context import Context
from roost.faces.api.logins import Logins
from roost.faces.api.startup import Opening, early, hooks_early
from roost.faces.mcp.bridge import stdio
from roost.headless.runner.runner import Runner, settings_of
from roost.pane.tmux.server import Server
from roost.services import integrate
from roost.truth.detect.identify import Names
from roost.truth.detect.scan import Scanner
from roost.truth.roster import Roster
from roost.truth.roster.live import Live

GRACE = 2.0
"""Seconds a stopping daemon lets open requests finish before it drops them."""


def _server(app: object) -> uvicorn.Server:
    config = uvicorn.Config(
        app,  # type: ignore[arg-type]
        http=JsonErrors,
        lifespan="off",
        log_config=None,
        access_log=False,
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=GRACE,
    )
    config.load()
    loglimit.limit(logging.getLogger("uvicorn.error"))
    server = uvicorn.Server(config)
    # startup()/shutdown() without serve(): serve() would poll a flag every 100 ms and install its
    # own signal handlers; this daemon sleeps until a signal or a request wakes it.
    server.lifespan = config.lifespan_class(config)
    return server


def _more_descriptors() -> None:
    """Raise the soft limit on open descriptors to the hard one (at most 65536), as servers do:
    the swarm listener's connection budget is a share of it (:func:`roost.remote.mesh.connections.budget`),
    and a default soft limit of 1024 would leave a swarm of a few hundred nodes no room."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def run_daemon(config: Config) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit status."""
    _more_descriptors()
    heap.settle()
    return asyncio.run(_serve(config))


async def _serve(config: Config) -> int:
    stop = asyncio.Event()
    stopped_by: list[signal.Signals] = []
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):  # from the start: a signal mid-startup is clean too
        loop.add_signal_handler(signum, _stopping, stop, stopped_by, signum)
    keys = secrets.load(config.directory)
    held = listen.lock()
    hook_sock = None
    api_path = paths.api_socket()
    listeners: list[tuple[uvicorn.Server, socket.socket]] = []
    bound = False
    whole = None
    off: dict[str, str] = {}
    try:
        hook_sock = listen.activated()
        unix_sock = listen.unix(api_path)
        bound = True
        tcp_sock = listen.optional("loopback", config.node.loopback_port, off)
        if hook_sock is None and config.node.hook_port:
            hook_sock = listen.optional("hooks", config.node.hook_port, off)
        elif hook_sock is None:
            off["hooks"] = "[node] hook_port is 0"
        clock = time.time
        started_at = clock()
        live = Live(Roster(config.node.name, keys.node_id, clock), clock)
        scanner = Scanner(Server.from_env(), Names(manifest.load_all().values()))
        observer = Observer(scanner, live)
        rebuilt = observer.rebuild()
        names.restore(live, clock())
        bridge = stdio(api_path)
        runner = Runner(
            live,
            settings_of(config.runner, config.harness, config.directory),
            clock,
            mcp=[bridge],
            extension_missing=integrate.missing,
        )
        began = time.perf_counter()
        headless = await runner.rebuild()
        rebuilt_headless = time.perf_counter() - began
        logins = Logins(keys.token)
        roster_only = Context(
            Door(live, clock), keys.token, started_at, config.api.max_streams, logins=logins
        )
        opening = Opening(early(roster_only))
        for peer, sock in ((auth.UNIX, unix_sock), (auth.TCP, tcp_sock)):
            if sock is None:
                continue
            server = _server(auth.via(opening, peer))
            await server.startup(sockets=[sock])
            listeners.append((server, sock))
        hooks = Opening(hooks_early())
        if hook_sock is not None:  # a hook that woke the daemon waits for it, never refused
            server = _server(hooks)
            await server.startup(sockets=[hook_sock])
            listeners.append((server, hook_sock))
        facts = {
            "listen": {
                "unix": str(api_path),
                "loopback": None if tcp_sock is None else f"{listen.LOOPBACK}:{config.node.loopback_port}",
                "hooks": None if hook_sock is None else "{}:{}".format(*hook_sock.getsockname()),
                "swarm": None,  # the mesh says, once it starts
                "off": off,
            },
            "rebuild": {
                "ms": round((rebuilt.seconds + rebuilt_headless) * 1000, 1),
                "sessions": rebuilt.sessions + headless,
                "headless": {"ms": round(rebuilt_headless * 1000, 1), "sessions": headless},
            },
        }
        rest = await asyncio.to_thread(import_module, "roost.daemon.compose")
        whole = rest.Whole(config, keys, live, scanner, runner, bridge, logins, clock, started_at, facts)
        opening.open(await whole.start())
        assert whole.hooks is not None
        hooks.open(whole.hooks)
        whole.announce(api_path)
        runner.begin()
        async with whole.running():
            await _until(stop, observer, config.sources.scan_interval_ms / 1000)
        await whole.stop()
        for server, sock in listeners:
            await server.shutdown(sockets=[sock])
        _stopped(stopped_by)
        return 0
    finally:
        if whole is not None:
            await whole.close()
        if bound:
            _remove(api_path)
        if hook_sock is not None:
            hook_sock.close()
        held.close()


def _stopping(stop: asyncio.Event, stopped_by: list[signal.Signals], signum: signal.Signals) -> None:
    stopped_by.append(signum)
    stop.set()


def _stopped(stopped_by: list[signal.Signals]) -> None:
    """The daemon's last line: a daemon in the foreground (``make run``) that ends without a
    word leaves a person wondering whether it crashed. Sessions outlive it, so it says that too."""
    why = f" on {stopped_by[0].name}" if stopped_by else ""
    sys.stderr.write(
        f"rosterd: stopped{why}; every session keeps running (in tmux, or in its holder), "
        "and the next rosterd daemon finds it\n"
    )
    sys.stderr.flush()


async def _until(stop: asyncio.Event, observer: Observer, interval: float) -> None:
    """Scan on the timer, and give the heap's free pages back on another, until ``stop`` is set."""
    timers = (asyncio.create_task(observer.every(interval)), asyncio.create_task(heap.every()))
    try:
        await stop.wait()
    finally:
        for timer in timers:
            timer.cancel()
        for timer in timers:
            with contextlib.suppress(asyncio.CancelledError):
                await timer


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
