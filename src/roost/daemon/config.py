"""``rosterd.toml``: the daemon's settings, every key optional, every section something reads.

It lives at ``${XDG_CONFIG_HOME}/roost/rosterd.toml`` unless ``--config PATH`` names another
file; a missing file means every default. A key this version does not know is an error rather
than silently ignored: a misspelt ``loopback_port`` must not quietly bind the default port.
"""

from __future__ import annotations

import shlex
import socket
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from roost import paths
from roost.agents import manifest
from roost.errors import SetupError
from roost.runner.settings import Runner

FILE = "rosterd.toml"


class ConfigError(SetupError):
    """The config file cannot be read or says something impossible."""


@dataclass(frozen=True)
class Node:
    name: str = field(default_factory=socket.gethostname)
    port: int = 8791
    listen: str = "tailscale"
    loopback_port: int = 8790


@dataclass(frozen=True)
class Sources:
    files: bool = False
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


@dataclass(frozen=True)
class Harness:
    """Per agent, the ACP adapter the headless runner starts (a command line) and how long a
    gate waits; the defaults come from the manifests' ``[acp]`` sections."""

    adapter: str | None = None
    extension: bool = False
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
    runner: Runner = field(default_factory=Runner)
    sources: Sources = field(default_factory=Sources)
    api: Api = field(default_factory=Api)
    mcp: Mcp = field(default_factory=Mcp)
    harness: dict[str, Harness] = field(default_factory=_default_harnesses)

    @property
    def directory(self) -> Path:
        return self.path.parent


def default_path() -> Path:
    return paths.config_home() / FILE


_KINDS: dict[str, type | tuple[type, ...]] = {"int": int, "bool": bool, "str": str}


def _value(where: str, kind: str, value: Any) -> Any:
    """One value checked against its field's annotation (written as text: ``from __future__``)."""
    if kind == "tuple[str, ...]":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{where} must be a list of strings")
        return tuple(value)
    if kind == "str | None":
        kind = "str"
    expected = _KINDS[kind]
    if not isinstance(value, expected) or (kind == "int" and isinstance(value, bool)):
        raise ConfigError(f"{where} must be {'an' if kind == 'int' else 'a'} {kind}, got {value!r}")
    return value


def _section(cls: type, name: str, table: Any) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"[{name}] must be a table")
    known = {f.name: f for f in fields(cls)}
    values = {}
    for key, value in table.items():
        if key not in known:
            raise ConfigError(f"unknown key {key!r} in [{name}]; known: {', '.join(known)}")
        values[key] = _value(f"[{name}] {key}", str(known[key].type), value)
    return cls(**values)


def _check(config: Config) -> Config:
    for where, port in (
        ("[node] loopback_port", config.node.loopback_port),
        ("[node] port", config.node.port),
    ):
        if not 1 <= port <= 65535:
            raise ConfigError(f"{where} must be a TCP port (1-65535), got {port}")
    if config.sources.scan_interval_ms < 100:
        raise ConfigError("[sources] scan_interval_ms must be at least 100")
    if config.api.max_streams < 1:
        raise ConfigError("[api] max_streams must be at least 1")
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


def load(path: Path | None = None) -> Config:
    """The config at ``path`` (default: the XDG location); defaults for whatever it leaves out."""
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
    sections: dict[str, Any] = {"path": path}
    for name, cls in (
        ("node", Node),
        ("runner", Runner),
        ("sources", Sources),
        ("api", Api),
        ("mcp", Mcp),
    ):
        if name in data:
            sections[name] = _section(cls, name, data.pop(name))
    if "harness" in data:
        table = data.pop("harness")
        if not isinstance(table, dict):
            raise ConfigError("[harness] must be a table of [harness.NAME] tables")
        sections["harness"] = {
            **_default_harnesses(),
            **{name: _section(Harness, f"harness.{name}", value) for name, value in table.items()},
        }
    if data:
        raise ConfigError(f"unknown section [{next(iter(data))}] in {path}")
    return _check(Config(**sections))


def default_text() -> str:
    """A ``rosterd.toml`` that shows every key this version knows at its default, each line
    commented out, so the file changes nothing until a person uncomments a line (and its
    section's header); what ``rosterd setup`` writes where no config is."""
    import json

    defaults = Config(default_path())
    lines = [
        "# rosterd's settings. Every key is optional, and each is shown below at its default,",
        "# commented out: uncomment a key and its [section] line to change it.",
        "# `rosterd doctor` checks this file; `rosterd setup` wrote it and never rewrites it.",
    ]
    sections: list[tuple[str, Any]] = [
        ("node", defaults.node),
        ("runner", defaults.runner),
        ("sources", defaults.sources),
        ("api", defaults.api),
        ("mcp", defaults.mcp),
    ]
    sections += [(f"harness.{name}", harness) for name, harness in defaults.harness.items()]
    for name, values in sections:
        lines += ["", f"# [{name}]"]
        for item in fields(values):
            value = getattr(values, item.name)
            if value is not None:
                shown = list(value) if isinstance(value, tuple) else value
                lines.append(f"# {item.name} = {json.dumps(shown, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"
