"""The rows ``rosterd setup`` can do something about: each a check, and a fix where one can be
run for the person (every fix does nothing when its row is done already)."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from roost.base import files, paths
from roost.base.errors import RoostError, SetupError
from roost.daemon import config
from roost.faces.cli import installation
from roost.faces.cli.rosterd.machine import BROKEN, MISSING, OK, SKIP, Finding, Machine

NPM_TIMEOUT = 600
"""Seconds an adapter's ``npm install -g`` may take."""


def commands(machine: Machine, _: str) -> Finding:
    """Whether a shell finds roost's commands. Another installation's coming first is not a
    failure (its commands work): the detail says which one runs."""
    on_path = installation.check()
    if not on_path.missing:
        return Finding(OK, on_path.summary())
    ours = on_path.ours
    # Linked already, the directory is missing from PATH: only the person's profile can say so.
    outcome = BROKEN if installation.linked(ours) else MISSING
    return Finding(outcome, on_path.summary(), installation.fix_command(ours))


def link_commands(machine: Machine, _: str) -> list[str]:
    return installation.link(installation.ours()) or ["linked"]


def settings(machine: Machine, _: str) -> Finding:
    path = machine.config_file
    found = machine.settings
    if isinstance(found, RoostError):
        return Finding(BROKEN, found.message)
    if not path.exists():
        return Finding(MISSING, f"no {path}: every default applies", "rosterd setup --yes config")
    return Finding(OK, f"{path} parses")


def write_settings(machine: Machine, _: str) -> list[str]:
    """``rosterd.toml`` with every key at its default, commented out, unless a file is there."""
    path = machine.config_file
    paths.private_mkdir(path.parent)
    if not files.create(path, config.default_text(), mode=0o644):
        return [f"{path} is there already: left as it is"]
    return [f"wrote {path}: every key at its default, commented out"]


def service(machine: Machine, _: str) -> Finding:
    found = machine.service
    if isinstance(found, RoostError):
        return Finding(SKIP, found.message)
    if found.enabled is None:
        return Finding(SKIP, f"{found.detail}: start the daemon yourself (`rosterd daemon`)")
    if found.running:
        return Finding(OK, f"{found.path}: enabled and running")
    if not found.installed:
        if found.detail is not None:  # a file of someone else's at that path
            return Finding(BROKEN, found.detail)
        return Finding(MISSING, f"not installed: no {found.path}", "rosterd service install")
    missing = [
        word
        for word, done in (
            ("as this installation would write it", found.current),
            ("enabled", found.enabled),
            ("running", found.active),
        )
        if not done
    ]
    return Finding(MISSING, f"{found.path} is not {', not '.join(missing)}", "rosterd service install")


def install_service(machine: Machine, _: str) -> list[str]:
    from roost.services.autostart import install, manager

    return install(manager(hook_port=machine.hook_port))


def binary(machine: Machine, harness: str) -> Finding:
    """Where the harness's program is. One the person does not have is skipped, not failed,
    and its other rows are left out (see :func:`installed`)."""
    from roost.agents import manifest

    found = machine.binary(harness)
    if found is None:
        agent = manifest.load(harness)
        programs = " or ".join(agent.binaries) if agent and agent.binaries else harness
        return Finding(SKIP, f"not installed (no {programs} on PATH)")
    return Finding(OK, found)


def installed(machine: Machine, harness: str) -> bool:
    return machine.binary(harness) is not None


def hooks(machine: Machine, harness: str) -> Finding:
    from roost.services.integrate import INSTALLED, integration

    try:
        report = integration(harness).status()
    except RoostError as error:
        return Finding(BROKEN, error.message)
    if report.state != INSTALLED:
        return Finding(MISSING, report.line, f"rosterd integrate install {harness}")
    if report.hooks is None:
        return Finding(OK, report.line)
    from roost.services.autostart.systemd import held_hook_port

    held = held_hook_port()
    if report.hooks == "command":
        why = (
            f"a socket unit holds hook port {held}: `rosterd integrate install {harness} --http` "
            "would start no process per event"
            if held
            else "no socket unit holds the hook port open while rosterd is down"
        )
        return Finding(OK, f"{report.line}; command hooks: {why}")
    port = machine.hook_port
    if report.port != port:
        return Finding(
            BROKEN,
            f"{report.line}; but the daemon's hook port is {port} ([node] hook_port): nothing answers them",
            f"rosterd integrate install {harness} --http",
        )
    if held is not None and held == port:
        return Finding(OK, f"{report.line}; rosterd.socket holds that port open while rosterd is down")
    return Finding(
        BROKEN,
        f"{report.line}; but no socket unit holds port {port} open: while rosterd is down {harness} "
        "shows an error under every event",
        "rosterd service install",
    )


def install_hooks(machine: Machine, harness: str) -> list[str]:
    from roost.services.integrate import integration

    return integration(harness).install()


def gate(machine: Machine, harness: str) -> Finding:
    """The permission gate: on, it says what that allows and how to turn it off; off is fine
    too (it is optional), and it says how to turn it on (docs/web.md, "Answering a request",
    says why the first set-up turns it on)."""
    from roost.services.integrate import gated, integration

    try:
        report = integration(harness).status()
        hold = gated(harness).gate_timeout()
    except RoostError:
        return Finding(SKIP, f"its hooks' file cannot be read: see the {harness} hooks row")
    if report.gate:
        return Finding(
            OK,
            f"on: a permission request can be answered from the web app, `rosterd allow`/`deny` and MCP "
            f"as well as in the terminal, each held up to {hold} s; "
            f"`rosterd integrate install {harness} --no-gate` turns it off",
        )
    fix = f"rosterd integrate install {harness} --gate"
    return Finding(MISSING, "off: its permission requests are answered in the terminal only", fix)


def install_gate(machine: Machine, harness: str) -> list[str]:
    from roost.services.integrate import gated

    hold = config.load(machine.config_path).harness.get(harness, config.Harness()).gate_timeout_s
    said = gated(harness).install(gate=True, gate_timeout_s=hold)
    return [gate(Machine(machine.config_path), harness).detail, *said]


def first_setup(machine: Machine, harness: str) -> bool:
    """Whether roost's hooks for ``harness`` were never installed here: the first set-up turns
    its gate on; a later one keeps what the person chose (``--no-gate``) since."""
    from roost.services.integrate import NOT_INSTALLED, integration

    try:
        return integration(harness).status().state == NOT_INSTALLED
    except RoostError:
        return False


def has_gate(machine: Machine, harness: str) -> bool:
    from roost.agents import manifest

    agent = manifest.load(harness)
    return agent is not None and agent.hook.gate is not None and has_hooks(machine, harness)


def has_hooks(machine: Machine, harness: str) -> bool:
    from roost.agents import manifest
    from roost.services.integrate import KINDS

    agent = manifest.load(harness)
    return agent is not None and agent.hook.kind in KINDS and installed(machine, harness)


def _adapter(machine: Machine, harness: str) -> tuple[str, str | None] | None:
    """The adapter's program and the npm package that provides it, when the config names one."""
    from roost.agents import manifest

    found = machine.settings
    settings = found if isinstance(found, config.Config) else config.Config(config.default_path())
    entry = settings.harness.get(harness)
    if entry is None or not entry.adapter:
        return None
    agent = manifest.load(harness)
    return shlex.split(entry.adapter)[0], agent.acp.package if agent and agent.acp else None


def has_adapter(machine: Machine, harness: str) -> bool:
    return _adapter(machine, harness) is not None and installed(machine, harness)


def adapter(machine: Machine, harness: str) -> Finding:
    """Whether headless sessions of the harness can start: its ACP adapter is found. Without it
    the harness still runs in a terminal, so the row is optional."""
    program, package = _adapter(machine, harness) or ("", None)
    where = shutil.which(program)
    if where:
        return Finding(OK, f"{where}: headless sessions can start")
    if package is None:
        return Finding(MISSING, f"{program} is not on PATH")
    return Finding(MISSING, f"{program} is not on PATH; npm package {package} provides it", _npm(package))


def _npm(package: str) -> str:
    return f"npm install -g {shlex.quote(package)}"


def install_adapter(machine: Machine, harness: str) -> list[str]:
    _, package = _adapter(machine, harness) or ("", None)
    npm = shutil.which("npm")
    if package is None or npm is None:
        raise SetupError("npm is not on PATH" if package else "no npm package is known to provide it")
    try:
        proc = subprocess.run(
            [npm, "install", "-g", package], capture_output=True, text=True, timeout=NPM_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise SetupError(f"`{_npm(package)}` took more than {NPM_TIMEOUT} s") from None
    if proc.returncode != 0:
        words = [line for line in proc.stderr.splitlines() if line.strip()]
        raise SetupError(f"`{_npm(package)}` failed: {words[-1] if words else proc.returncode}")
    return [f"installed {package} with npm"]
