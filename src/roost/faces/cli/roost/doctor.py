"""``roost doctor``: check this machine's setup, one line per check, naming the fix.

Each line starts with ``ok``, ``warn`` or ``fail``. Only a fail makes it exit 1: a warning is
something that works less well (no renderer, a lossy tmux), not something that is broken. No
tmux server yet is neither: roost starts one with the first session, and ``rosterd doctor``
says the same (:mod:`roost.faces.cli.noserver`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from roost.agents import manifest
from roost.base import paths
from roost.base.errors import UsageError
from roost.faces.cli import installation
from roost.faces.cli.noserver import not_yet
from roost.faces.cli.output import line
from roost.pane.state.newpane import BIN_OPTION, roost_bin
from roost.pane.tmux.server import CONFIG, SEP, THEN, Server, fields

OK, WARN, FAIL = "ok", "warn", "fail"
LOSSY_TMUX = ("3.4", "3.5a")
RECONCILE_HOOKS = ("pane-exited", "after-kill-pane", "window-unlinked", "session-closed")
INTEGRATE_TIMEOUT = 10

Check = tuple[str, str]


def _tmux_version() -> Iterator[Check]:
    try:
        proc = subprocess.run(["tmux", "-V"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        yield FAIL, "tmux is not installed or does not run: install tmux 3.2 or later (apt-get install tmux)"
        return
    version = proc.stdout.strip().removeprefix("tmux ")
    if version in LOSSY_TMUX:
        caveat = "it stores a reply's control bytes and invalid UTF-8 as escape text, so read --json"
        yield WARN, f"tmux {version}: {caveat} may say lossy; tmux 3.6 and later keep the bytes"
        return
    number = re.match(r"(\d+)\.(\d+)", version)
    if number and (int(number[1]), int(number[2])) < (3, 2):
        yield FAIL, f"tmux {version} is too old for roost's config: install tmux 3.2 or later"
        return
    yield OK, f"tmux {version}"


def _tmux_command(server: Server, *args: str) -> str:
    flag = "-S" if server.kind == "path" else "-L"
    return shlex.join(["tmux", flag, server.socket, *args])


def _server(server: Server) -> Iterator[Check]:
    if shutil.which("tmux") is None:
        return  # already a fail above; there is no server to ask
    proc = server.run(
        "display-message",
        "-p",
        SEP.join(("#{start_time}-#{pid}", "#{@roost-bin}", "#{@roost-send-ready-timeout}")),
        THEN,
        "show-hooks",
        "-g",
        THEN,
        "show-hooks",
        "-gw",
        check=False,
    )
    if proc.returncode != 0:
        yield OK, not_yet(server.socket)
        return
    lines = proc.stdout.decode(errors="replace").splitlines()
    key, bin_option, marker = fields(lines[0], 3)[:3]
    yield OK, f"roost server running on socket '{server.socket}' ({server.kind}, boot key {key})"
    hooks = "\n".join(lines[1:])
    missing = [h for h in RECONCILE_HOOKS if not re.search(rf"^{h}\[\d+\] .*events --reconcile", hooks, re.M)]
    if not marker or missing:
        lacking = f" (no {', '.join(missing)} hook)" if missing else ""
        fix = _tmux_command(server, "source-file", str(CONFIG))
        yield FAIL, f"the server was not started with roost's own tmux config{lacking}: load it with `{fix}`"
    else:
        yield OK, "the server runs roost's own tmux config"
    yield _roost_bin(server, bin_option)


def _roost_bin(server: Server, value: str) -> Check:
    fix = f"`{_tmux_command(server, 'set-option', '-g', BIN_OPTION, roost_bin())}`"
    if not value:
        return FAIL, f"@roost-bin is not set, so closed panes are not logged: {fix}"
    if not (os.path.isfile(value) and os.access(value, os.X_OK)):
        return FAIL, f"@roost-bin points at {value}, which is not an executable roost: {fix}"
    return OK, f"@roost-bin is {value}"


def _writable(what: str, directory: Path, env: str) -> Check:
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return FAIL, f"{what} {directory} cannot be made: {existing} is not a directory; set {env}"
    if not os.access(existing, os.W_OK | os.X_OK):
        return FAIL, f"{what} {directory} is not writable: `chmod u+rwx {existing}`, or set {env}"
    return OK, f"{what} {directory}"


def _records() -> Iterator[Check]:
    records = paths.record_dir()
    if records is None:
        yield OK, 'kept replies are off (ROOST_RECORD_DIR=""): send names no turns'
    else:
        yield _writable("kept replies in", records, "ROOST_RECORD_DIR")
    events = paths.events_dir()
    if events is None:
        yield OK, "the events log is off: `roost events` exits 1 (set ROOST_EVENTS=DIR to turn it on)"
    else:
        yield _writable("events log on, in", events, "ROOST_EVENTS")


def _commands() -> Check:
    """Whether a shell finds roost's commands; another installation's first is a warning."""
    found = installation.check()
    level = FAIL if found.missing else WARN if found.elsewhere else OK
    return level, found.summary()


def _manifests() -> Iterator[Check]:
    """Every manifest file usable: one that is not is left out (the packaged one is used), and
    said here with the file and the field, so a mistake never quietly changes an agent."""
    from roost.truth.detect.manifests import load_catalog

    problems = load_catalog().problems
    for _, message in problems:
        yield FAIL, f"agent manifest {message}: this file is left out until it is fixed"
    if not problems:
        yield OK, "every agent manifest is usable"


def _integrations() -> Iterator[Check]:
    for name, agent in sorted(manifest.load_all().items()):
        found = next((b for b in agent.binaries if shutil.which(b)), None)
        if found is not None:
            yield _integration(name, found)


def _integration(harness: str, binary: str) -> Check:
    """Ask ``rosterd integrate status --json HARNESS``; an answer it cannot give is a warning."""
    fix = f"`rosterd integrate install {harness}`"
    argv = ["rosterd", "integrate", "status", "--json", harness]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=INTEGRATE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return WARN, f"{harness} ({binary}) is on PATH; could not ask rosterd if it is integrated: {error}"
    state = _reported_state(proc.stdout)
    if state == "installed":
        return OK, f"{harness} integration installed"
    if state in ("not installed", "outdated"):
        return WARN, f"{harness} is on PATH but its roost integration is {state}: {fix}"
    said = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
    detail = f"exit {proc.returncode}" + (f": {said[0][:160]}" if said else "")
    return WARN, f"{harness} is on PATH; `rosterd integrate status {harness}` could not tell ({detail})"


def _reported_state(stdout: str) -> str | None:
    try:
        return json.loads(stdout)["integrations"][0]["state"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _renderer() -> Check:
    """``roost read --render`` (``-r``) pipes a reply through ``preen``, a markdown and diff
    renderer: optional, since plain ``read`` is the payload and never needs it."""
    if shutil.which("preen"):
        return OK, "`roost read --render` renders replies with preen (on PATH)"
    return WARN, (
        "`roost read --render` prints replies unrendered: it renders their markdown and diffs with "
        "preen, which is not on PATH (optional: nothing else needs it)"
    )


def checks(server: Server) -> Iterator[Check]:
    yield from _tmux_version()
    yield from _server(server)
    yield from _records()
    yield _commands()
    yield from _manifests()
    yield from _integrations()
    yield _renderer()


def run(verb: str, args: list[str]) -> int:
    if args:
        raise UsageError("usage: roost doctor")
    failed = False
    for level, message in checks(Server.from_env()):
        line(f"{level:<4}  {message}")
        failed = failed or level == FAIL
    return 1 if failed else 0
