"""``rosterd doctor``: is this machine set up the way rosterd needs it? One line per check.

Each check says ``ok``, ``FAIL`` (with what to do) or ``skip`` (nothing to check), and the
exit status is 1 when any check failed: the daemon answers, its config parses, its secrets and
socket are 0600, its loopback port is bound on 127.0.0.1 and nowhere else, every agent
manifest of yours is usable, every harness on PATH has roost's integration installed, each ACP
adapter headless sessions need is found, roost's tmux server answers, and a shell finds
``roost``, ``rosterd`` and ``rosterd-hook`` on PATH.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from roost import paths
from roost.cli.daemonclient import Client, Refused, Unreachable
from roost.cli.rosterd import printing
from roost.cli.rosterd.options import parse
from roost.daemon import config, secrets
from roost.errors import RoostError

USAGE = (
    (
        "doctor [--config PATH]",
        "check the daemon, config, secrets, listeners, integrations, adapters, tmux, PATH",
    ),
)
_USAGE = "usage: rosterd doctor [--config PATH]"

OK, FAIL, SKIP = "ok", "FAIL", "skip"
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Check:
    outcome: str
    what: str
    detail: str


@dataclass
class Findings:
    """What earlier checks learned that later ones need: the config, the daemon's listeners."""

    config_path: Path | None
    settings: config.Config | None = None
    status: dict | None = None


def _daemon(found: Findings) -> Iterator[Check]:
    try:
        with Client() as client:
            found.status = json.loads(client.get("/status"))
    except (Unreachable, Refused) as error:
        yield Check(FAIL, "daemon", error.message)
        return
    where = (found.status.get("listen") or {}).get("unix") or "its socket"
    yield Check(OK, "daemon", f"answers on {where} (rosterd {found.status.get('version')})")


def _config(found: Findings) -> Iterator[Check]:
    path = found.config_path or config.default_path()
    try:
        found.settings = config.load(found.config_path)
    except RoostError as error:
        yield Check(FAIL, "config", error.message)
        return
    yield Check(OK, "config", f"{path} parses" if path.exists() else f"no {path}: every default applies")


def _private(what: str, path: Path, kind: Callable[[int], bool]) -> Check:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return Check(FAIL, what, f"{path} does not exist (the daemon creates it when it starts)")
    mode = stat.S_IMODE(info.st_mode)
    if not kind(info.st_mode):
        return Check(FAIL, what, f"{path} is not what rosterd made there")
    if info.st_uid != os.getuid() or mode != 0o600:
        return Check(FAIL, what, f"{path} is mode {mode:o}, owner uid {info.st_uid}: it must be yours, 600")
    return Check(OK, what, f"{path} is 600")


def _modes(found: Findings) -> Iterator[Check]:
    directory = (found.settings.path if found.settings else found.config_path or config.default_path()).parent
    yield _private("token", directory / secrets.TOKEN, stat.S_ISREG)
    yield _private("node key", directory / secrets.NODE_KEY, stat.S_ISREG)
    yield _private("socket", paths.api_socket(), stat.S_ISSOCK)


def _loopback_port(found: Findings) -> int | None:
    """The port the running daemon says it bound, else the config's."""
    bound = ((found.status or {}).get("listen") or {}).get("loopback")
    if isinstance(bound, str) and bound.rpartition(":")[2].isdigit():
        return int(bound.rpartition(":")[2])
    return found.settings.node.loopback_port if found.settings else None


def _loopback(found: Findings) -> Iterator[Check]:
    import psutil

    port = _loopback_port(found)
    if port is None:
        yield Check(SKIP, "loopback", "no config, no daemon: no port to check")
        return
    addresses = sorted(
        {
            conn.laddr.ip
            for conn in psutil.net_connections("inet")
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port
        }
    )
    if not addresses:
        yield Check(FAIL, "loopback", f"nothing listens on {LOOPBACK}:{port}")
    elif addresses != [LOOPBACK]:
        bound = ", ".join(addresses)
        yield Check(FAIL, "loopback", f"port {port} is bound on {bound}: only {LOOPBACK} may be")
    else:
        yield Check(OK, "loopback", f"port {port} is bound on {LOOPBACK} only")


def _manifests(found: Findings) -> Iterator[Check]:
    """Every manifest file usable: one that is not is left out (the packaged one is used), and
    said here with the file and the field."""
    from roost.detect.manifests import load_catalog

    problems = load_catalog().problems
    for _, message in problems:
        yield Check(FAIL, "manifests", f"{message} (this file is left out until it is fixed)")
    if not problems:
        yield Check(OK, "manifests", "every agent manifest is usable")


def _integrations(found: Findings) -> Iterator[Check]:
    from roost.agents import manifest
    from roost.integrate import INSTALLED, integration, names

    for name in names():
        agent = manifest.load(name)
        binaries = agent.binaries if agent else ()
        on_path = next((where for where in map(shutil.which, binaries) if where), None)
        if on_path is None:
            yield Check(SKIP, name, f"{' or '.join(binaries)} is not on PATH")
            continue
        try:
            report = integration(name).status()
        except RoostError as error:
            yield Check(FAIL, name, error.message)
            continue
        if report.state == INSTALLED:
            yield Check(OK, name, f"{on_path}: integration installed")
        else:
            yield Check(FAIL, name, f"{on_path}: {report.line}; run `rosterd integrate install {name}`")


def _adapters(found: Findings) -> Iterator[Check]:
    """Per harness with an ACP adapter, whether headless sessions of it can start: its command
    is found. An adapter not installed is no failure (headless sessions are optional); the
    detail names the npm package that provides it."""
    import shlex

    from roost.agents import manifest

    settings = found.settings or config.Config(config.default_path())
    for name, harness in settings.harness.items():
        if not harness.adapter:
            continue
        program = shlex.split(harness.adapter)[0]
        where = shutil.which(program)
        if where:
            yield Check(OK, f"{name} adapter", f"{where}: headless sessions can start")
            continue
        agent = manifest.load(name)
        package = agent.acp.package if agent and agent.acp else None
        fix = f"; `npm install -g {package}` provides it" if package else ""
        yield Check(SKIP, f"{name} adapter", f"{program} is not on PATH{fix}")
    sandbox = os.environ.get("IS_SANDBOX")
    if sandbox not in (None, "1") and os.geteuid() == 0:
        yield Check(
            OK,
            "IS_SANDBOX",
            f"is {sandbox!r} here, as root: Claude's adapter fails every session under that, "
            "so the runner leaves it out of each adapter's environment",
        )


def _commands(found: Findings) -> Iterator[Check]:
    """Whether a shell finds roost's commands. Another installation's coming first is not a
    failure (its commands work): the detail says which one runs."""
    from roost.cli import installation

    on_path = installation.check()
    yield Check(FAIL if on_path.missing else OK, "commands", on_path.summary())


def _tmux(found: Findings) -> Iterator[Check]:
    from roost.tmux.server import Server

    server = Server.from_env()
    try:
        running = server.running()
    except OSError as error:
        yield Check(FAIL, "tmux", f"cannot run tmux: {error.strerror or error}")
        return
    if running:
        yield Check(OK, "tmux", f"roost's server answers on {server.socket}")
    else:
        yield Check(FAIL, "tmux", f"no tmux server answers on {server.socket} (`roost` starts one)")


CHECKS = (_daemon, _config, _modes, _loopback, _manifests, _integrations, _adapters, _tmux, _commands)


def run(verb: str, args: list[str]) -> int:
    options = parse(args, _USAGE, valued=("--config",))
    given = options.values.get("--config")
    found = Findings(Path(given) if given else None)
    checks = [check for step in CHECKS for check in step(found)]
    for text in printing.columns([[c.outcome, c.what, c.detail] for c in checks]):
        printing.line(text)
    return 1 if any(c.outcome == FAIL for c in checks) else 0
