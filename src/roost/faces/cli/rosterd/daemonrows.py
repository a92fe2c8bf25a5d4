"""The rows only ``rosterd doctor`` shows: the running daemon and what it made (its secrets,
socket, loopback and hook ports), the agent manifests and roost's tmux server. Setup does not list
them: the daemon makes these itself when it starts, and a person fixes the rest."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from roost.base import paths
from roost.base.errors import RoostError
from roost.daemon import config, listen, secrets
from roost.faces.cli.noserver import not_yet
from roost.faces.cli.rosterd.machine import BROKEN, MISSING, OK, SKIP, Finding, Machine

LOOPBACK = "127.0.0.1"


def daemon(machine: Machine, _: str) -> Finding:
    found = machine.daemon
    if isinstance(found, RoostError):
        return Finding(BROKEN, found.message, machine.start_command())
    where = (found.get("listen") or {}).get("unix") or "its socket"
    return Finding(OK, f"answers on {where} (rosterd {found.get('version')})")


def _directory(machine: Machine) -> Path:
    found = machine.settings
    return found.directory if isinstance(found, config.Config) else machine.config_file.parent


def _private(machine: Machine, path: Path, kind: Callable[[int], bool]) -> Finding:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return Finding(
            BROKEN, f"{path} does not exist (the daemon creates it when it starts)", machine.start_command()
        )
    mode = stat.S_IMODE(info.st_mode)
    if not kind(info.st_mode):
        return Finding(BROKEN, f"{path} is not what rosterd made there")
    if info.st_uid != os.getuid():
        return Finding(BROKEN, f"{path} belongs to uid {info.st_uid}: it must be yours, 600")
    if mode != 0o600:
        return Finding(BROKEN, f"{path} is mode {mode:o}: it must be 600", f"chmod 600 {path}")
    return Finding(OK, f"{path} is 600")


def token(machine: Machine, _: str) -> Finding:
    return _private(machine, _directory(machine) / secrets.TOKEN, stat.S_ISREG)


def node_key(machine: Machine, _: str) -> Finding:
    return _private(machine, _directory(machine) / secrets.NODE_KEY, stat.S_ISREG)


def socket(machine: Machine, _: str) -> Finding:
    return _private(machine, paths.api_socket(), stat.S_ISSOCK)


def _loopback_port(machine: Machine) -> int | None:
    """The port the running daemon says it bound, else the config's."""
    found = machine.daemon
    bound = (found.get("listen") or {}).get("loopback") if isinstance(found, dict) else None
    if isinstance(bound, str) and bound.rpartition(":")[2].isdigit():
        return int(bound.rpartition(":")[2])
    settings = machine.settings
    return settings.node.loopback_port if isinstance(settings, config.Config) else None


def _off(machine: Machine, listener: str) -> str | None:
    """Why the running daemon says ``listener`` is off, or None (on, or no daemon to ask)."""
    found = machine.daemon
    off = (found.get("listen") or {}).get("off") if isinstance(found, dict) else None
    why = off.get(listener) if isinstance(off, dict) else None
    return str(why) if why else None


def loopback(machine: Machine, _: str) -> Finding:
    """Where the web app and HTTP clients reach the daemon. Off (its port taken by another
    daemon or program) is no failure: the daemon runs, and the detail says why and what to do."""
    import psutil

    off = _off(machine, "loopback")
    if off:
        return Finding(MISSING, f"off: {off}; {listen.OPTIONAL['loopback']}")
    port = _loopback_port(machine)
    if port is None:
        return Finding(SKIP, "no config, no daemon: no port to check")
    addresses = sorted(
        {
            conn.laddr.ip
            for conn in psutil.net_connections("inet")
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port
        }
    )
    if not addresses:
        return Finding(BROKEN, f"nothing listens on {LOOPBACK}:{port}", machine.start_command())
    if addresses != [LOOPBACK]:
        return Finding(BROKEN, f"port {port} is bound on {', '.join(addresses)}: only {LOOPBACK} may be")
    return Finding(OK, f"port {port} is bound on {LOOPBACK} only")


def hook_port(machine: Machine, _: str) -> Finding:
    """Where HTTP hooks post, as the running daemon says. Off is no failure: only HTTP hooks
    need it, and the detail says why it is off (``[node] hook_port = 0``: ``skip``)."""
    found = machine.daemon
    if not isinstance(found, dict):
        return Finding(SKIP, "no daemon answers: nothing to ask (see the daemon row)")
    where = (found.get("listen") or {}).get("hooks")
    if where:
        return Finding(OK, f"listens on {where} (HTTP hooks post there)")
    off = _off(machine, "hooks") or "no hook port"
    settings = machine.settings
    if isinstance(settings, config.Config) and not settings.node.hook_port:
        return Finding(SKIP, f"off: {off}")
    return Finding(MISSING, f"off: {off}; {listen.OPTIONAL['hooks']}")


def swarm(machine: Machine, _: str) -> Finding:
    """Where the swarm listener is (the running daemon's word, else what the config would give)
    and how peers are found. Off is ``skip``, no failure: everything but the swarm works
    without it, and the detail says why it is off."""
    from roost.remote.mesh import place, tailscale

    discovery = (
        "discovery: Tailscale's online peers, [swarm] static_peers and the members' addresses"
        if tailscale.available()
        else "discovery: static peers and the members' addresses only (no `tailscale` on PATH)"
    )
    found = machine.daemon
    facts = found.get("swarm") if isinstance(found, dict) else None
    if isinstance(facts, dict):
        if facts.get("listen"):
            return Finding(OK, f"listens on {facts['listen']} (TLS, members only); {discovery}")
        return Finding(SKIP, f"off: {facts.get('off')}; {discovery}")
    settings = machine.settings
    if not isinstance(settings, config.Config):
        return Finding(SKIP, "no usable config: nothing to place")
    where = place.place(settings.node.listen, settings.node.port)
    if where.address is None:
        return Finding(SKIP, f"off when the daemon starts: {where.why}; {discovery}")
    return Finding(OK, f"will listen on {where.address} ({where.why}); {discovery}")


def swarm_file(machine: Machine, _: str) -> Finding:
    return _private(machine, _directory(machine) / "swarm.json", stat.S_ISREG)


def in_swarm(machine: Machine, _: str) -> bool:
    return (_directory(machine) / "swarm.json").exists()


def manifests(machine: Machine, _: str) -> Finding:
    """Every manifest file usable: one that is not is left out (the packaged one is used), and
    said here with the file and the field."""
    from roost.truth.detect.manifests import load_catalog

    problems = [
        f"{message} (this file is left out until it is fixed)" for _, message in load_catalog().problems
    ]
    if problems:
        return Finding(BROKEN, "; ".join(problems))
    return Finding(OK, "every agent manifest is usable")


def tmux(machine: Machine, _: str) -> Finding:
    from roost.actions.terminals import server_answers

    try:
        where, running = server_answers()
    except OSError as error:
        return Finding(BROKEN, f"cannot run tmux: {error.strerror or error}")
    if running:
        return Finding(OK, f"roost's server answers on {where}")
    return Finding(SKIP, not_yet(where))


def sandbox_set(machine: Machine, _: str) -> bool:
    return os.environ.get("IS_SANDBOX") not in (None, "1") and os.geteuid() == 0


def sandbox(machine: Machine, _: str) -> Finding:
    value = os.environ.get("IS_SANDBOX")
    return Finding(
        OK,
        f"is {value!r} here, as root: Claude's adapter fails every session under that, "
        "so the runner leaves it out of each adapter's environment",
    )
