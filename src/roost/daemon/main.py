"""``run_daemon(config)``: wire the roster, the scan and the API, serve until told to stop.

One asyncio loop does everything: the same app (the API, and the MCP server at ``/mcp``) is
served on the unix socket and on 127.0.0.1, the scan runs on a timer, leases expire on the
roster's own deadline, and SIGTERM or SIGINT end the streams, close the listeners and remove
the socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

import uvicorn
from starlette.routing import Route

from roost import __version__, integrate, mcpserver, paths
from roost.actions import names, remote
from roost.actions.door import Door
from roost.actions.gates import Gates
from roost.actions.permission import Permissions
from roost.actions.remote import Act, Through
from roost.agents import manifest
from roost.api import Context, auth, create_app, proxy, terminal
from roost.api.app import VERBS
from roost.api.logins import Logins
from roost.daemon import listen, loglimit, secrets
from roost.daemon.config import Config
from roost.daemon.rebuild import Observer
from roost.daemon.screenwatch import Screens
from roost.daemon.wire import JsonErrors, peer_process
from roost.detect.attest import Attestor
from roost.detect.identify import Names
from roost.detect.scan import Scanner
from roost.detect.selfreports import Reports
from roost.ledger.follow import Ledger
from roost.ledger.journal import Journal
from roost.ledger.usage import Usage
from roost.mcpserver import acts
from roost.mesh import place, tailscale
from roost.mesh.acting import Acted, Acting
from roost.mesh.arrivals import Arrivals
from roost.mesh.forwarding import Forwarding
from roost.mesh.node import Mesh
from roost.notify import vapid
from roost.notify.notifier import Notifier
from roost.notify.registrations import Registrations
from roost.notify.store import Store
from roost.notify.webhooks import Webhooks
from roost.roster import Roster
from roost.roster.live import Live
from roost.runner.runner import Runner, settings_of
from roost.swarm.identity import Identity
from roost.swarm.peers import Peers
from roost.tmux.server import Server
from roost.tmux.tap import Taps
from roost.tmux.topology import Topology

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


def run_daemon(config: Config) -> int:
    """Serve until SIGTERM or SIGINT; returns the exit status."""
    return asyncio.run(_serve(config))


async def _serve(config: Config) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):  # from the start: a signal mid-startup is clean too
        loop.add_signal_handler(signum, stop.set)
    keys = secrets.load(config.directory)
    held = listen.lock()
    api_path = paths.api_socket()
    listeners: list[tuple[uvicorn.Server, socket.socket]] = []
    bound = False
    reports_path = paths.reports_socket()
    reports_server: asyncio.Server | None = None
    mesh: Mesh | None = None
    try:
        unix_sock = listen.unix(api_path)
        bound = True
        tcp_sock = listen.loopback(config.node.loopback_port)
        clock = time.time
        started_at = clock()
        live = Live(Roster(config.node.name, keys.node_id, clock), clock)
        scanner = Scanner(Server.from_env(), Names(manifest.load_all().values()))
        observer = Observer(scanner, live)
        rebuilt = observer.rebuild()
        names.restore(live, clock())
        bridge = mcpserver.stdio(api_path)
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
        journal, usage = Journal(live.roster, clock), Usage()
        ledger = Ledger(live, journal, usage, clock)  # before anything else may change the roster
        reports = Reports(live.roster, live.apply, Attestor(scanner.server, scanner.names), clock)
        reports_server = await reports.serve(listen.unix(reports_path))
        facts = {
            "listen": {"unix": str(api_path), "loopback": f"{listen.LOOPBACK}:{config.node.loopback_port}"},
            "rebuild": {
                "ms": round((rebuilt.seconds + rebuilt_headless) * 1000, 1),
                "sessions": rebuilt.sessions + headless,
                "headless": {"ms": round(rebuilt_headless * 1000, 1), "sessions": headless},
            },
            "reports": {"unix": str(reports_path), "counts": reports.counts},
        }
        logins = Logins(keys.token)
        notifier = Notifier(live, Store.default(), vapid.load(config.directory))
        webhooks = Webhooks(live, Registrations.beside(config.directory))
        loglimit.limit(logging.getLogger("rosterd.webhooks"))
        taps = Taps(paths.taps_dir())
        taps.sweep()
        topology = Topology()
        permissions = Permissions(
            live,
            Gates(),
            clock,
            runner,
            answered=lambda record, given: journal.answered(
                record.session_key, answer=given.option, by=given.by, via=given.via, through=given.through
            ),
            gate_timeouts={name: h.gate_timeout_s for name, h in config.harness.items()},
        )
        peers = Peers(keys.node_id)
        acting = Acting(live.roster, _acted(journal))
        mesh = _mesh(config, clock, live, peers, acting, (journal, usage), Arrivals(runner))
        door = Door(
            live,
            clock,
            tmux=scanner.server,
            runner=runner,
            permissions=permissions,
            taps=taps,
            topology=topology,
            peers=peers,
            forwarder=Forwarding(mesh.membership, mesh.dialer, peers, clock),
        )
        tools = mcpserver.Context(door, allow_always=config.mcp.allow_always)
        mcp = mcpserver.McpServer(tools, peer=peer_process)
        app = create_app(
            Context(
                door,
                keys.token,
                started_at,
                config.api.max_streams,
                facts=facts,
                logins=logins,
                push=notifier,
                webhooks=webhooks,
                journal=journal,
                usage=usage,
                mcp=bridge,
                swarm=mesh,
            ),
            mounts=[Route("/mcp", mcp)],
        )
        acting.faces.update({remote.API: proxy.dispatcher(app, VERBS), remote.MCP: acts.dispatcher(tools)})
        mesh.relay.serve = terminal.serving(app.state.context)
        if mesh.exchange is not None:  # another node's sessions are pushed about as this node's
            mesh.exchange.listeners.append(notifier.observe)
        for peer, sock in ((auth.UNIX, unix_sock), (auth.TCP, tcp_sock)):
            server = _server(auth.via(app, peer))
            await server.startup(sockets=[sock])
            listeners.append((server, sock))
        await mesh.start()
        facts["listen"]["swarm"] = mesh.listening
        facts["swarm"] = {
            "listen": mesh.listening,
            "off": mesh.off_because,
            "discovery": mesh.nodes()["discovery"],
        }
        sys.stderr.write(
            f"rosterd: serving unix:{api_path} and http://{facts['listen']['loopback']}; roster rebuilt "
            f"in {facts['rebuild']['ms']} ms ({facts['rebuild']['sessions']} sessions)\n"
        )
        sys.stderr.write(f"rosterd: web app login (works once): {logins.link(_origin(config))}\n")
        if mesh.listening:
            sys.stderr.write(f"rosterd: swarm listener on {mesh.listening} (TLS, members only)\n")
        else:
            sys.stderr.write(f"rosterd: swarm listener off: {mesh.off_because}\n")
        sys.stderr.flush()
        runner.begin()
        async with (
            Screens(scanner.server, live, clock, topology=topology),
            notifier,
            webhooks,
            ledger,
            mcp.serving(),
        ):
            await _until(stop, observer, config.sources.scan_interval_ms / 1000)
        await mesh.stop()
        await runner.close()
        live.close()
        topology.close()
        for server, sock in listeners:
            await server.shutdown(sockets=[sock])
        return 0
    finally:
        if mesh is not None and mesh.listening:
            await mesh.stop()
        if bound:
            _remove(api_path)
        if reports_server is not None:
            reports_server.close()
            _remove(reports_path)
        held.close()


async def _until(stop: asyncio.Event, observer: Observer, interval: float) -> None:
    """Scan on the timer until ``stop`` is set."""
    scanning = asyncio.create_task(observer.every(interval))
    try:
        await stop.wait()
    finally:
        scanning.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await scanning


def _acted(journal: Journal) -> Acted:
    """The journal's line for an act another node forwarded to this one."""

    def acted(key: str, act: Act, came: Through, status: int) -> None:
        who = {"by": act.by, "via": act.via, "through": came.node, "through_id": came.node_id}
        journal.acted(key, action=act.verb, status=status, **who)

    return acted


def _mesh(
    config: Config,
    clock: Callable[[], float],
    live: Live,
    peers: Peers,
    acting: Acting,
    ledgers: tuple[Journal, Usage],
    arrivals: Arrivals,
) -> Mesh:
    """This node on the swarm: its key from ``node.key``, its listener where ``[node] listen``
    puts it (off when nowhere), Tailscale for discovery when the program is there, the acts
    peers forward to it, the ledgers they read and the sessions they hand to it."""
    node_id, seed = secrets.node_key(config.directory)
    return Mesh(
        config.directory,
        Identity.from_seed(node_id, seed),
        name=config.node.name,
        place=place.place(config.node.listen, config.node.port),
        static_peers=config.swarm.static_peers,
        use_tailscale=tailscale.available(),
        version=__version__,
        clock=clock,
        live=live,
        peers=peers,
        routes=[acting.route(), arrivals.route()],
        limits=arrivals.limits,
        ledgers=ledgers,
    )


def _origin(config: Config) -> str:
    return f"http://{listen.LOOPBACK}:{config.node.loopback_port}"


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
