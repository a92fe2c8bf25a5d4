"""``rosterd.toml``: the daemon's settings, every key optional, every key either read or refused.

It lives at ``${XDG_CONFIG_HOME}/roost/rosterd.toml`` unless ``--config PATH`` names another
file; a missing file means every default, and every file the daemon keeps beside its config
(secrets, ``webhooks.json``, ``adapters.lock``) is kept beside the file actually read. A key
this version does not know, or a value it cannot act on, is an error naming the file and the
key rather than silently ignored: a misspelt ``loopback_port`` must not quietly bind the
default port, and ``[sources] files = true`` must not seem to read files.

``[node] port`` and ``listen`` place the swarm listener (``roost.remote.mesh.place``); ``[node]
name`` is the name the node goes by in its swarm (pinned here: a renamed machine keeps its id
and takes the name this file gives it); ``[swarm] static_peers`` are dialled besides the
members and Tailscale's peers.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import re
import shlex
import socket
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from roost.agents import manifest
from roost.base import paths
from roost.base.errors import SetupError
from roost.headless.runner.settings import RunnerSection
from roost.services.ledger.budgets import Settings as BudgetSection

FILE = "rosterd.toml"


class ConfigError(SetupError):
    """The config file cannot be read or says something impossible."""


LISTEN_WORDS = ("tailscale", "off")
"""``[node] listen`` in words: the Tailscale interface's address, or no swarm listener."""

TAILNET = (ipaddress.ip_network("100.64.0.0/10"), ipaddress.ip_network("fd7a:115c:a1e0::/48"))
"""The addresses Tailscale gives its nodes: a listen address inside them is the tailnet's."""


@dataclass(frozen=True)
class Node:
    name: str = field(default_factory=socket.gethostname)
    port: int = 8791
    """The swarm listener's port."""
    listen: str = "tailscale"
    """Where the swarm listener binds: ``tailscale``, ``off``, or one loopback or Tailscale
    address (a static setup, a test). Never another interface: rosterd binds loopback, its
    unix socket and the tailnet only, so a wildcard or LAN address is refused, not bound."""
    loopback_port: int = 8790
    hook_port: int = 8792
    """Where agents' HTTP hooks post (:mod:`roost.faces.api.hookroute`), on 127.0.0.1; 0: nowhere.
    A service whose socket unit holds the port open passes that socket instead (its port is
    the unit's)."""


@dataclass(frozen=True)
class Swarm:
    """``[swarm]``: how this node finds its peers besides its members and Tailscale."""

    static_peers: tuple[str, ...] = ()
    """``host:port`` of peers to dial when Tailscale does not find them (the fallback
    without Tailscale); dialled, never bound, so any host is allowed."""


@dataclass(frozen=True)
class Sources:
    files: bool = False
    """Whether rosterd reads harnesses' session files as a claim source. This version makes no
    claim of them (it reads an agent's transcript only for the token counts of each turn, which
    are the ledger's, never a state), so only false is taken: true is refused."""
    scan_interval_ms: int = 2000


@dataclass(frozen=True)
class Api:
    max_streams: int = 64
    """Open SSE streams at most; one more is refused with 429 rather than starving the loop."""


@dataclass(frozen=True)
class Mcp:
    allow_always: bool = False
    """Whether an MCP caller (an agent) may answer a permission ``allow_always``: a person's
    answer, which allows every later request of its kind, so off unless a person turns it on."""
    lift_budgets: bool = False
    """Whether an MCP caller (an agent) may lift a budget: a person's decision to spend more,
    which an agent held by the budget could otherwise make for itself, so off unless a person
    turns it on."""


@dataclass(frozen=True)
class Harness:
    """Per agent, the ACP adapter the headless runner starts (a command line) and how long a
    gate waits; the defaults come from the manifests' ``[acp]`` sections."""

    adapter: str | None = None
    extension: bool = False
    """The adapter has no claims or permission gate of its own and roost's integration for the
    harness (``rosterd integrate install NAME``) supplies them: a headless session of it is
    refused at its start while that integration is not in place, and only a harness roost has
    an integration for may say true."""
    gate_timeout_s: int = 3600


def _default_harnesses() -> dict[str, Harness]:
    """Each agent whose manifest names an ACP adapter (``[acp]``), with that adapter."""
    return {
        agent.name: Harness(adapter=shlex.join(agent.acp.command), extension=agent.acp.extension)
        for agent in manifest.ordered()
        if agent.acp is not None
    }


@dataclass(frozen=True)
class Config:
    """The whole file. ``path`` is where it was (or would be) read from; secrets live beside it."""

    path: Path
    node: Node = field(default_factory=Node)
    swarm: Swarm = field(default_factory=Swarm)
    runner: RunnerSection = field(default_factory=RunnerSection)
    sources: Sources = field(default_factory=Sources)
    api: Api = field(default_factory=Api)
    mcp: Mcp = field(default_factory=Mcp)
    budget: BudgetSection = field(default_factory=BudgetSection)
    harness: dict[str, Harness] = field(default_factory=_default_harnesses)

    @property
    def directory(self) -> Path:
        return self.path.parent


def default_path() -> Path:
    return paths.config_home() / FILE


_KINDS: dict[str, type | tuple[type, ...]] = {"int": int, "bool": bool, "str": str, "float": (int, float)}
_SECTIONS: dict[str, type] = {
    "node": Node,
    "swarm": Swarm,
    "runner": RunnerSection,
    "sources": Sources,
    "api": Api,
    "mcp": Mcp,
    "budget": BudgetSection,
}


def _value(where: str, kind: str, value: Any) -> Any:
    """One value checked against its field's annotation (written as text: ``from __future__``)."""
    if kind == "tuple[str, ...]":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{where} must be a list of strings")
        return tuple(value)
    if kind in ("str | None", "float | None"):
        kind = kind.removesuffix(" | None")
    expected = _KINDS[kind]
    if not isinstance(value, expected) or (kind in ("int", "float") and isinstance(value, bool)):
        what = "a number" if kind == "float" else f"{'an' if kind == 'int' else 'a'} {kind}"
        raise ConfigError(f"{where} must be {what}, got {value!r}")
    return float(value) if kind == "float" else value


def _folders(table: Any) -> dict[str, float]:
    """``[budget.folders]``: each absolute folder's limit on its sessions' spend in a UTC day."""
    if not isinstance(table, dict):
        raise ConfigError("[budget.folders] must be a table of folders and their limits")
    folders = {}
    for folder, limit in table.items():
        if not folder.startswith("/"):
            raise ConfigError(f"[budget.folders] {json.dumps(folder)} is not an absolute folder")
        if isinstance(limit, bool) or not isinstance(limit, int | float) or not 0 < limit <= 1e9:
            raise ConfigError(f"[budget.folders] {json.dumps(folder)} must be a limit greater than 0")
        folders[folder.rstrip("/") or "/"] = float(limit)
    return folders


def _section(cls: type, name: str, table: Any, base: Any = None) -> Any:
    """``[name]`` as ``cls``; the keys it sets replace ``base``'s (a harness's default) one by one."""
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table")
    if cls is BudgetSection and "folders" in table:
        table = dict(table)
        base = BudgetSection(folders=_folders(table.pop("folders")))
    known = {f.name: f for f in fields(cls)}
    values = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(f"unknown key {key!r} in [{name}]; known: {', '.join(known)}")
        values[key] = _value(f"[{name}] {key}", str(known[key].type), value)
    return dataclasses.replace(base, **values) if base is not None else cls(**values)


def _listen(value: str) -> None:
    """Refuse a swarm listener anywhere but the tailnet or loopback: binding a wildcard or a LAN
    address would open the node to every network the machine is on."""
    if value in LISTEN_WORDS:
        return
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        address = None
    if address is not None and (address.is_loopback or any(address in net for net in TAILNET)):
        return
    raise ConfigError(
        f"[node] listen = {json.dumps(value)} is refused: rosterd listens on loopback, its unix socket "
        'and the Tailscale interface only; write "tailscale", "off", or a loopback or Tailscale address'
    )


def _peer(text: str) -> None:
    """A static peer is ``host:port`` (an IPv6 address in brackets), the port 1-65535."""
    host, colon, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        named = _address(host)
    else:
        named = ":" not in host and (_address(host) or _HOSTNAME.fullmatch(host) is not None)
    if not (colon and named and port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ConfigError(
            f"[swarm] static_peers holds {json.dumps(text)}, which is not host:port "
            "(a port from 1 to 65535, an IPv6 address in brackets)"
        )


_HOSTNAME = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(\.(?!-)[A-Za-z0-9-]{1,63})*\.?")


def _address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _check(config: Config) -> Config:
    for where, port in (
        ("[node] loopback_port", config.node.loopback_port),
        ("[node] port", config.node.port),
    ):
        if not 1 <= port <= 65535:
            raise ConfigError(f"{where} must be a TCP port (1-65535), got {port}")
    if not 0 <= config.node.hook_port <= 65535:
        raise ConfigError(
            f"[node] hook_port must be a TCP port (1-65535) or 0 (none), got {config.node.hook_port}"
        )
    _listen(config.node.listen)
    from roost.remote.swarm import fields  # no cryptography: the daemon serves before it loads that

    if fields.name(config.node.name) is None:
        raise ConfigError(
            f"[node] name must be one line of printable text, 1 to {fields.MAX_NAME} characters, with no '/' "
            f"and no space at either end, got {config.node.name!r}"
        )
    for peer in config.swarm.static_peers:
        _peer(peer)
    if config.sources.files:
        raise ConfigError(
            "[sources] files = true is not supported: this version makes no claim of a harness's "
            "session files (it reads them only for what each turn used), so only false is taken"
        )
    if config.sources.scan_interval_ms < 100:
        raise ConfigError("[sources] scan_interval_ms must be at least 100")
    if config.api.max_streams < 1:
        raise ConfigError("[api] max_streams must be at least 1")
    budget = config.budget
    if not re.fullmatch(r"[A-Z]{3}", budget.currency):
        raise ConfigError(
            f"[budget] currency must be a three-letter code such as USD, got {budget.currency!r}"
        )
    if not 0 < budget.warn <= 1:
        raise ConfigError("[budget] warn must be a fraction of a limit, greater than 0 and at most 1")
    for key, limit in (("day", budget.day), ("session", budget.session)):
        if limit is not None and not 0 < limit <= 1e9:
            raise ConfigError(f"[budget] {key} must be a limit greater than 0")
    if config.runner.default_permission_policy not in ("auto", "attention"):
        raise ConfigError("[runner] default_permission_policy must be auto or attention")
    if config.runner.idle_timeout_s < 1:
        raise ConfigError("[runner] idle_timeout_s must be at least 1")
    if config.runner.max_resumes_per_hour < 0:
        raise ConfigError("[runner] max_resumes_per_hour must be 0 or more")
    for name, harness in config.harness.items():
        if harness.adapter is not None:
            try:
                argv = shlex.split(harness.adapter)
            except ValueError as error:
                raise ConfigError(f"[harness.{name}] adapter is not a command line: {error}") from None
            if not argv:
                raise ConfigError(f"[harness.{name}] adapter is empty")
    return config


def _integrated(harness: str) -> bool:
    """Whether roost has an integration (hooks, a plugin, an extension) it can install for it."""
    from roost.services.integrate import KINDS

    agent = manifest.load(harness)
    return agent is not None and agent.hook.kind in KINDS


def _build(path: Path, data: dict[str, Any]) -> Config:
    sections: dict[str, Any] = {"path": path}
    for name, cls in _SECTIONS.items():
        if name in data:
            sections[name] = _section(cls, name, data.pop(name))
    if "harness" in data:
        table = data.pop("harness")
        if not isinstance(table, dict):
            raise ConfigError("[harness] must be a table of [harness.NAME] tables")
        defaults = _default_harnesses()
        written = {
            name: _section(Harness, f"harness.{name}", value, defaults.get(name))
            for name, value in table.items()
        }
        for name, harness in written.items():
            if harness.extension and not _integrated(name):
                raise ConfigError(
                    f"[harness.{name}] extension = true is not supported: roost has no integration "
                    f"for {name} to supply its claims and permission gate"
                )
        sections["harness"] = {**defaults, **written}
    if data:
        known = ", ".join([*_SECTIONS, "harness.NAME"])
        raise ConfigError(f"unknown section [{next(iter(data))}]; known: {known}")
    return _check(Config(**sections))


def load(path: Path | None = None) -> Config:
    """The config at ``path`` (default: the XDG location); defaults for whatever it leaves out.
    Every refusal is one line that names the file, and the key when there is one."""
    path = path or default_path()
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        if path != default_path():
            raise ConfigError(f"no config file at {path}") from None
        return Config(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read {path}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from None
    try:
        return _build(path, data)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error.message}") from None


NOTES: dict[str, tuple[str, ...]] = {
    "node": (
        "port and listen are the swarm listener's; with no Tailscale address and none named, it stays off.",
        'listen: "tailscale", "off", or one loopback or Tailscale address; nothing else is bound.',
        "name is this node's name in its swarm; the node id in node.key never changes.",
    ),
    "swarm": ("static_peers: host:port of peers to greet besides the members and Tailscale's peers.",),
    "sources": (
        "only false is taken for files: no harness's session files are a source of claims "
        "(they are read for what each turn used, nothing else).",
    ),
    "budget": (
        "day and session are limits in currency (every node's spend in a UTC day; each session's);",
        'a folder\'s limit per UTC day goes in folders: { "/abs/path" = 10.0 }; warn is the fraction',
        "of a limit at which a person is told.",
    ),
}
"""What ``default_text`` says under a section's header, beside its keys."""


def default_text() -> str:
    """A ``rosterd.toml`` that shows every key this version knows at its default, each line
    commented out, so the file changes nothing until a person uncomments a line (and its
    section's header); what ``rosterd setup`` writes where no config is."""
    defaults = Config(default_path())
    lines = [
        "# rosterd's settings. Every key is optional, and each is shown below at its default,",
        "# commented out: uncomment a key and its [section] line to change it.",
        "# `rosterd doctor` checks this file; `rosterd setup` wrote it and never rewrites it.",
    ]
    sections: list[tuple[str, Any]] = [(name, getattr(defaults, name)) for name in _SECTIONS]
    sections += [(f"harness.{name}", harness) for name, harness in defaults.harness.items()]
    for name, values in sections:
        lines += ["", f"# [{name}]"]
        lines += [f"# note: {note}" for note in NOTES.get(name, ())]
        if name.startswith("harness.") and values.extension:
            harness = name.removeprefix("harness.")
            lines.append(
                f"# note: a headless session starts once `rosterd integrate install {harness}` is done."
            )
        for item in fields(values):
            value = getattr(values, item.name)
            if value is not None:
                shown = list(value) if isinstance(value, tuple) else value
                lines.append(f"# {item.name} = {json.dumps(shown, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
