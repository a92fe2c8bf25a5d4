"""The daemon around its served roster: the ledger, the reports socket, notifications, the
permission gates, the swarm, the MCP server and the whole API, built once the roster is served.

:mod:`roost.daemon.main` imports this module off its loop after its listeners answer
``GET /snapshot`` (:mod:`roost.faces.api.startup`), so what only these faces need (pydantic's request
models, the MCP server, the swarm's crypto and HTTP client) never delays the roster.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.routing import Route
from starlette.types import ASGIApp

from roost import __version__
from roost.actions import remote, terminals
from roost.actions.gates import Gates
from roost.actions.hookposts import HookPosts
from roost.actions.permission import Permissions
from roost.actions.remote import Act, Through
from roost.actions.sessions import Door
from roost.agents.mcpconfig import StdioServer
from roost.base import paths
from roost.daemon import listen, loglimit, secrets
from roost.daemon.config import Config
from roost.daemon.screenwatch import Screens
from roost.daemon.secrets import Secrets
from roost.daemon.wire import peer_process
from roost.faces import mcp
from roost.faces.api import auth, create_app, proxy, terminal
from roost.faces.api.app import VERBS
from roost.faces.api.context import Context
from roost.faces.api.hookroute import hook_app
from roost.faces.api.logins import Logins
from roost.headless.runner.runner import Runner
from roost.pane.tmux.topology import Topology
from roost.pane.tmux.view import Taps
from roost.remote.mesh import place, tailscale
from roost.remote.mesh.acts import Acted, Acting, Forwarding
from roost.remote.mesh.handoffs import Arrivals
from roost.remote.mesh.node import Mesh
from roost.remote.swarm.feed import Subscription
from roost.remote.swarm.identity import Identity
from roost.remote.swarm.peers import Peers
from roost.services.ledger import budgets as budgeting
from roost.services.ledger.budgets import Budgets
from roost.services.ledger.follow import Ledger
from roost.services.ledger.journal import Journal
from roost.services.ledger.usage import Usage
from roost.services.notify import vapid
from roost.services.notify.notifier import Notifier
from roost.services.notify.registrations import Registrations
from roost.services.notify.store import Store
from roost.services.notify.webhooks import Webhooks
from roost.truth.detect.attest import Attestor
from roost.truth.detect.scan import Scanner
from roost.truth.detect.selfreports import Reports
from roost.truth.roster.live import Live


class Whole:
    """Everything the daemon runs beside its roster, its scan and its runner: :meth:`start`
    builds it and returns the whole app, :meth:`running` runs its background parts,
    :meth:`stop` ends them in order, :meth:`close` releases what a failed start left."""

    def __init__(
        self,
        config: Config,
        keys: Secrets,
        live: Live,
        scanner: Scanner,
        runner: Runner,
        bridge: StdioServer,
        logins: Logins,
        clock: Callable[[], float],
        started_at: float,
        facts: dict[str, Any],
    ) -> None:
        self.config, self.keys, self.live, self.scanner = config, keys, live, scanner
        self.runner, self.bridge, self.logins = runner, bridge, logins
        self.clock, self.started_at, self.facts = clock, started_at, facts
        self.reports_path = paths.reports_socket()
        self.reports_server: Any = None
        self.mesh: Mesh | None = None
        self.hooks: ASGIApp | None = None
        """The hook port's app (:mod:`roost.faces.api.hookroute`), once :meth:`start` built it."""

    async def start(self) -> ASGIApp:
        config, live, clock, facts = self.config, self.live, self.clock, self.facts
        journal, usage = Journal(live.roster, clock), Usage()
        budgets = Budgets(
            live,
            usage,
            config.budget,
            budgeting.Store.beside(config.directory),
            clock,
            cancel=self.runner.cancel,
        )
        self.budgets = budgets
        # Before anything else may change the roster:
        self.ledger = Ledger(live, journal, usage, clock, tmux=self.scanner.server, budgets=budgets)
        reports = Reports(live.roster, live.apply, Attestor(self.scanner.server, self.scanner.names), clock)
        self.reports_server = await reports.serve(listen.unix(self.reports_path))
        facts["reports"] = {"unix": str(self.reports_path), "counts": reports.counts}
        self.notifier = Notifier(live, Store.default(), vapid.load(config.directory))
        taps = Taps(paths.taps_dir())
        taps.sweep()
        self.topology = Topology()
        permissions = Permissions(
            live,
            Gates(),
            clock,
            self.runner,
            answered=lambda record, given: journal.answered(
                record.session_key, answer=given.option, by=given.by, via=given.via, through=given.through
            ),
            gate_timeouts={name: h.gate_timeout_s for name, h in config.harness.items()},
        )
        peers = Peers(self.keys.node_id)
        acting = Acting(live.roster, _acted(journal))
        self.mesh = mesh = _mesh(config, clock, live, peers, acting, (journal, usage), Arrivals(self.runner))
        _count_peers(mesh, budgets)
        self.webhooks = Webhooks(_swarm_changes(mesh), Registrations.beside(config.directory))
        loglimit.limit(logging.getLogger("rosterd.webhooks"))
        door = Door(
            live,
            clock,
            tmux=self.scanner.server,
            runner=self.runner,
            permissions=permissions,
            taps=taps,
            topology=self.topology,
            peers=peers,
            forwarder=Forwarding(mesh.membership, mesh.dialer, peers, clock),
            budgets=budgets,
        )
        posts = HookPosts(door, Attestor(self.scanner.server, self.scanner.names))
        self.hooks = hook_app(posts)
        facts["hooks"] = {"listen": facts["listen"]["hooks"], "counts": posts.counts}
        tools = mcp.Context(door, allow_always=config.mcp.allow_always, lift_budgets=config.mcp.lift_budgets)
        self.mcp = mcp.McpServer(tools, peer=peer_process)
        app = create_app(
            Context(
                door,
                self.keys.token,
                self.started_at,
                config.api.max_streams,
                facts=facts,
                logins=self.logins,
                push=self.notifier,
                webhooks=self.webhooks,
                journal=journal,
                usage=usage,
                mcp=self.bridge,
                swarm=mesh,
            ),
            mounts=[Route("/mcp", self.mcp)],
        )
        acting.faces.update({remote.API: proxy.dispatcher(app, VERBS), remote.MCP: mcp.dispatcher(tools)})
        mesh.relay.serve = terminal.serving(app.state.context)
        mesh.serve_clients(auth.via(app, auth.TCP), self.keys.token)
        if mesh.exchange is not None:
            mesh.exchange.share_terminals(lambda: terminals.shared(door), self.topology)
        if mesh.exchange is not None:  # another node's sessions are pushed about as this node's
            mesh.exchange.listeners.append(self.notifier.observe)
        await mesh.start()
        facts["listen"]["swarm"] = mesh.listening
        if not mesh.listening:
            facts["listen"]["off"]["swarm"] = mesh.off_because
        facts["swarm"] = {
            "listen": mesh.listening,
            "off": mesh.off_because,
            "discovery": mesh.nodes()["discovery"],
        }
        return app

    def announce(self, api_path: object) -> None:
        """The daemon's lines on stderr once it all serves: where, how fast, the login link, and
        each listener that is off with why (said once, here; ``GET /status`` keeps saying it)."""
        facts, mesh = self.facts, self.mesh
        assert mesh is not None
        listening, off = facts["listen"], facts["listen"]["off"]
        web = f" and http://{listening['loopback']}" if listening["loopback"] else ""
        sys.stderr.write(
            f"rosterd: serving unix:{api_path}{web}; roster rebuilt "
            f"in {facts['rebuild']['ms']} ms ({facts['rebuild']['sessions']} sessions)\n"
        )
        if listening["loopback"]:
            link = self.logins.link(_origin(self.config))
            sys.stderr.write(f"rosterd: web app login (works once): {link}\n")
        else:
            why = f"{off['loopback']}; {listen.OPTIONAL['loopback']}"
            sys.stderr.write(f"rosterd: loopback listener off: {why}\n")
        hooks = listening.get("hooks")
        if hooks:
            sys.stderr.write(f"rosterd: hook port on {hooks}\n")
        elif self.config.node.hook_port:
            sys.stderr.write(f"rosterd: hook port off: {off['hooks']}; {listen.OPTIONAL['hooks']}\n")
        else:
            sys.stderr.write(f"rosterd: hook port off: {off['hooks']}\n")
        if mesh.listening:
            sys.stderr.write(f"rosterd: swarm listener on {mesh.listening} (TLS, members only)\n")
        else:
            sys.stderr.write(f"rosterd: swarm listener off: {mesh.off_because}\n")
        sys.stderr.flush()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The screen watcher, notifications, webhooks, the ledger and the MCP server, for as
        long as the daemon serves."""
        async with (
            Screens(self.scanner.server, self.live, self.clock, topology=self.topology),
            self.notifier,
            self.webhooks,
            self.ledger,
            self.budgets,
            self.mcp.serving(),
        ):
            yield

    async def stop(self) -> None:
        assert self.mesh is not None
        await self.mesh.stop()
        await self.runner.close()
        self.live.close()
        self.topology.close()

    async def close(self) -> None:
        if self.mesh is not None and self.mesh.listening:
            await self.mesh.stop()
        if self.reports_server is not None:
            self.reports_server.close()
            with contextlib.suppress(FileNotFoundError):
                self.reports_path.unlink()


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


def _count_peers(mesh: Mesh, budgets: Budgets) -> None:
    """The budgets count every node's spend: each peer's day is read from its ledger when one of
    its sessions spends and when its roster is heard whole (a link that came up), in the
    background; a peer that leaves the swarm no longer counts."""
    ledgers, exchange = mesh.ledgers, mesh.exchange
    if ledgers is None or exchange is None:
        return

    async def ask(node_id: str, since: float) -> dict[str, Any] | None:
        return await ledgers.ask(node_id, since, "folder")

    def node(node_id: str, heard: bool) -> None:
        if heard:
            budgets.peer_heard(node_id)
        else:
            budgets.peer_gone(node_id)

    budgets.ask = ask
    exchange.listeners.append(budgets.peer_changed)
    exchange.nodes.append(node)


def _swarm_changes(mesh: Mesh) -> Callable[[], Subscription]:
    """What the webhooks follow: the swarm's feed (every node's changes, this node's among them,
    numbered as ``GET /swarm/changes`` numbers them), from its head on."""
    exchange = mesh.exchange
    assert exchange is not None  # the daemon's mesh always has one: it holds the swarm's feed

    def follow() -> Subscription:
        feed = exchange.feed
        return feed.subscribe(feed.head, feed.epoch)

    return follow


def _origin(config: Config) -> str:
    return f"http://{listen.LOOPBACK}:{config.node.loopback_port}"
