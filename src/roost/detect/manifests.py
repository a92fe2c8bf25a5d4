"""The screen-detection rules of every agent manifest: loaded, checked and compiled once.

What differs per agent is data. Each manifest (``agents/manifests/<name>.toml``, and the
user's copies in ``${XDG_CONFIG_HOME}/roost/agents/``) may carry a ``[detect]`` section::

    [detect]
    # Optional: how this agent's screen says which agent it is, for a pane whose process
    # did not (a wrapper script). Without it the agent is only detected when named. One
    # table, or an array of them of which any may match.
    identify = [{ region = "title", pattern = '^✳ Claude Code' }]

    [[detect.rules]]
    id = "permission-dialog"        # unique in the agent; explain and claims name it
    state = "blocked"               # working | blocked | done | idle | error
    priority = 100                  # higher is tried first; ties keep file order
    region = "bottom:20"            # see roost.detect.regions
    pattern = '^\\s*Do you want to proceed\\?'
    unless = 'esc to interrupt'     # optional: the rule does not match when this does
    unless_after = '^[●❯]'          # optional: ... nor when this follows the pattern's last match
    reason = "{tool}: {detail}"     # optional: built from named groups
    reason_from = { region = "bottom:40", pattern = '^ (?P<tool>\\w+) command$' }
    event = "permission"            # optional: the claim's event (default: by state)

Patterns are Python regular expressions with ``^`` and ``$`` matching at every line. Without
a ``reason`` template, a pattern's ``(?P<reason>…)`` group is the reason; a ``(?P<tool>…)``
group names the tool a dialog asks about. ``reason_from`` is a second, optional search whose
named groups feed the reason too: what a dialog is about often sits above the lines that
prove the dialog is open. It never decides whether the rule matches. ``unless_after`` is
how a rule says "and this is the latest thing on screen": an error line followed by a newer
reply is history, not the state.

A user's file for an agent amends the packaged one: a rule with the same id replaces the
packaged rule, new ids are added, and ``replace = true`` in its ``[detect]`` drops every
packaged rule first. A user's file that is broken is reported and skipped, so the packaged
rules keep working; every problem names the file and the rule.
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from roost import paths
from roost.agents.manifest import PACKAGED
from roost.detect import regions
from roost.detect.badges import EVENTS
from roost.errors import SetupError
from roost.state import words

STATES = words.STATES
_DETECT_KEYS = frozenset({"identify", "rules", "replace"})
_RULE_KEYS = frozenset(
    {
        "id",
        "state",
        "priority",
        "region",
        "pattern",
        "unless",
        "unless_after",
        "reason",
        "reason_from",
        "event",
    }
)
_PROBE_KEYS = frozenset({"region", "pattern", "unless", "unless_after"})
_SEARCH_KEYS = frozenset({"region", "pattern"})
_EVENT_LIMIT = 64


class ManifestError(SetupError):
    """A ``[detect]`` section that cannot be used; the message names the file and the rule."""

    def __init__(self, message: str, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


@dataclass(frozen=True)
class Probe:
    """Where to look and what to look for: a region, a pattern it must match and, optionally,
    a pattern it must not match at all or after the pattern's last match."""

    region: str
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None
    unless_after: re.Pattern[str] | None = None


@dataclass(frozen=True)
class Rule:
    """One detection rule: when its probe matches, the agent is in ``state``."""

    id: str
    state: str
    priority: int
    probe: Probe
    reason: str | None
    reason_from: Probe | None
    event: str
    source: Path


@dataclass(frozen=True)
class AgentRules:
    """An agent's rules in the order they are tried, and how its screen identifies it."""

    agent: str
    rules: tuple[Rule, ...]
    identify: tuple[Probe, ...]
    files: tuple[Path, ...]

    @property
    def sees_dialogs(self) -> bool:
        """Whether a rule reads a dialog (state blocked): only then can the screen say one is gone."""
        return any(rule.state == words.BLOCKED for rule in self.rules)


@dataclass(frozen=True)
class Catalog:
    """Every agent's rules, and the problems of the files that could not be used."""

    agents: Mapping[str, AgentRules]
    problems: tuple[tuple[str, str], ...]
    """(agent, message) for each file that could not be used; a file too broken to name its
    agent is listed under its file name."""

    def get(self, agent: str) -> AgentRules:
        """``agent``'s rules; raises ManifestError when it has none or its file is broken."""
        found = self.agents.get(agent)
        if found is not None:
            return found
        for owner, message in self.problems:
            if owner == agent:
                raise ManifestError(message)
        known = ", ".join(sorted(self.agents)) or "none"
        raise ManifestError(f"no detection rules for agent {agent!r} (agents with rules: {known})")

    def identifiers(self) -> tuple[AgentRules, ...]:
        """The agents whose screens identify them, by name, for a screen nobody named."""
        return tuple(self.agents[name] for name in sorted(self.agents) if self.agents[name].identify)


@dataclass(frozen=True)
class _Section:
    """One file's ``[detect]`` section, checked and compiled but not yet merged."""

    agent: str
    path: Path
    rules: tuple[Rule, ...]
    identify: tuple[Probe, ...] | None
    replace: bool


def _compile(value: object, where: str, what: str) -> re.Pattern[str]:
    if not isinstance(value, str):
        raise ManifestError(f"{where}: {what} must be a string (a regular expression)")
    try:
        return re.compile(value, re.MULTILINE)
    except re.error as error:
        raise ManifestError(f"{where}: {what} {value!r} is not a valid regular expression: {error}") from None


def _unknown(table: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ManifestError(f"{where}: unknown key {extra[0]!r} (known: {', '.join(sorted(allowed))})")


def _probe(table: Mapping[str, Any], where: str) -> Probe:
    region = table.get("region")
    if not isinstance(region, str):
        raise ManifestError(f"{where}: region is required (one of {', '.join(regions.NAMES)})")
    try:
        regions.check(region)
    except regions.RegionError as error:
        raise ManifestError(f"{where}: {error}") from None
    if "pattern" not in table:
        raise ManifestError(f"{where}: pattern is required")
    pattern = _compile(table["pattern"], where, "pattern")
    unless = _compile(table["unless"], where, "unless") if "unless" in table else None
    after = _compile(table["unless_after"], where, "unless_after") if "unless_after" in table else None
    return Probe(region, pattern, unless, after)


def _identify(value: object, where: str) -> tuple[Probe, ...]:
    tables = value if isinstance(value, list) else [value]
    probes = []
    for index, table in enumerate(tables):
        here = f"{where} #{index + 1}" if isinstance(value, list) else where
        if not isinstance(table, Mapping):
            raise ManifestError(f"{here}: must be a table with region and pattern")
        _unknown(table, _PROBE_KEYS, here)
        probes.append(_probe(table, here))
    return tuple(probes)


def _reason_from(table: object, where: str) -> Probe | None:
    if table is None:
        return None
    if not isinstance(table, Mapping):
        raise ManifestError(f"{where}: reason_from must be a table with region and pattern")
    _unknown(table, _SEARCH_KEYS, f"{where}: reason_from")
    return _probe(table, f"{where}: reason_from")


def _reason(template: object, groups: set[str], where: str) -> str | None:
    if template is None:
        return None
    if not isinstance(template, str):
        raise ManifestError(f"{where}: reason must be a string such as '{{tool}}: {{detail}}'")
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        raise ManifestError(f"{where}: reason {template!r} is not a valid template: {error}") from None
    for name in fields:
        if name not in groups:
            raise ManifestError(
                f"{where}: reason uses {{{name}}}, which is not a named group of pattern or reason_from"
            )
    return template


def _rule(table: object, index: int, path: Path, agent: str) -> Rule:
    where = f"{path} ({agent}): [[detect.rules]] #{index + 1}"
    if not isinstance(table, Mapping):
        raise ManifestError(f"{where}: each rule is a table")
    rule_id = table.get("id")
    if not isinstance(rule_id, str) or not rule_id.strip():
        raise ManifestError(f"{where}: id is required (a short name such as 'permission-dialog')")
    where = f"{path} ({agent}): rule {rule_id!r}"
    _unknown(table, _RULE_KEYS, where)
    state = table.get("state")
    if state not in STATES:
        raise ManifestError(f"{where}: state must be one of {', '.join(STATES)}, got {state!r}")
    priority = table.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ManifestError(f"{where}: priority must be an integer, got {priority!r}")
    probe = _probe(table, where)
    event = table.get("event", EVENTS.get(state, state))
    if not isinstance(event, str) or not 0 < len(event) <= _EVENT_LIMIT:
        raise ManifestError(f"{where}: event must be text of 1 to {_EVENT_LIMIT} characters")
    reason_from = _reason_from(table.get("reason_from"), where)
    groups = set(probe.pattern.groupindex) | set(reason_from.pattern.groupindex if reason_from else ())
    reason = _reason(table.get("reason"), groups, where)
    return Rule(rule_id, state, priority, probe, reason, reason_from, event, path)


def _section(path: Path) -> _Section | None:
    """The checked ``[detect]`` section of one manifest file, or None when it has none."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ManifestError(f"{path}: cannot read it: {error}") from None
    agent = data.get("name", path.stem)
    if not isinstance(agent, str) or not agent:
        raise ManifestError(f"{path}: name must be non-empty text")
    detect = data.get("detect")
    if detect is None:
        return None
    try:
        return _checked(detect, path, agent)
    except ManifestError as error:
        raise ManifestError(error.message, agent) from None


def _checked(detect: object, path: Path, agent: str) -> _Section:
    where = f"{path} ({agent}): [detect]"
    if not isinstance(detect, Mapping):
        raise ManifestError(f"{where}: must be a table")
    _unknown(detect, _DETECT_KEYS, where)
    replace = detect.get("replace", False)
    if not isinstance(replace, bool):
        raise ManifestError(f"{where}: replace must be true or false")
    tables = detect.get("rules", [])
    if not isinstance(tables, list):
        raise ManifestError(f"{where}: rules must be an array of tables ([[detect.rules]])")
    rules = tuple(_rule(table, index, path, agent) for index, table in enumerate(tables))
    seen: set[str] = set()
    for rule in rules:
        if rule.id in seen:
            raise ManifestError(f"{path} ({agent}): rule {rule.id!r}: id is used twice")
        seen.add(rule.id)
    identify = _identify(detect["identify"], f"{where} identify") if "identify" in detect else None
    return _Section(agent, path, rules, identify, replace)


_cache: dict[Path, tuple[tuple[int, int], _Section | ManifestError | None]] = {}


def _cached(path: Path) -> _Section | None:
    """A file's section, compiled (or refused) once per version of the file: its mtime and size."""
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    hit = _cache.get(path)
    if hit is None or hit[0] != key:
        try:
            found: _Section | ManifestError | None = _section(path)
        except ManifestError as error:
            found = error
        hit = _cache[path] = (key, found)
    if isinstance(hit[1], ManifestError):
        raise ManifestError(hit[1].message, hit[1].agent)
    return hit[1]


def _merge(base: AgentRules | None, section: _Section) -> AgentRules:
    """``section`` laid over ``base``: same ids replace, new ids are added, priorities re-sorted."""
    merged: dict[str, Rule] = {} if base is None or section.replace else {r.id: r for r in base.rules}
    for rule in section.rules:
        merged[rule.id] = rule
    ordered = sorted(merged.values(), key=lambda rule: -rule.priority)
    identify = section.identify
    if identify is None:
        identify = base.identify if base is not None and not section.replace else ()
    files = (*(base.files if base is not None else ()), section.path)
    return AgentRules(section.agent, tuple(ordered), identify, files)


def directories() -> tuple[Path, ...]:
    """Where manifests are read from, packaged first, so the user's files are laid on top."""
    return (PACKAGED, paths.config_home() / "agents")


def load_catalog() -> Catalog:
    """Every agent's detection rules, packaged and user's merged; broken files are skipped and
    listed in ``problems``. Reading again costs one ``stat`` per file unless a file changed."""
    agents: dict[str, AgentRules] = {}
    problems: list[tuple[str, str]] = []
    for directory in directories():
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                section = _cached(path)
            except ManifestError as error:
                problems.append((error.agent or path.stem, error.message))
                continue
            except OSError as error:
                problems.append((path.stem, f"{path}: cannot read it: {error}"))
                continue
            if section is not None:
                agents[section.agent] = _merge(agents.get(section.agent), section)
    return Catalog(agents, tuple(problems))
