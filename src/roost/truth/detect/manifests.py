"""The screen-detection rules of every agent manifest, compiled once per version of it.

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
    region = "bottom:20"            # see roost.truth.detect.regions
    pattern = '^\\s*Do you want to proceed\\?'
    unless = 'esc to interrupt'     # optional: the rule does not match when this does
    unless_after = '^[●❯]'          # optional: ... nor when this follows the pattern's last match
    reason = "{tool}: {detail}"     # optional: built from named groups
    reason_from = { region = "bottom:40", pattern = '^ (?P<tool>\\w+) command$' }
    event = "permission"            # optional: the claim's event (default: by state)
    overrules = ["done"]            # optional: a higher source's states this reading ends

Patterns are Python regular expressions with ``^`` and ``$`` matching at every line. Without
a ``reason`` template, a pattern's ``(?P<reason>…)`` group is the reason; a ``(?P<tool>…)``
group names the tool a dialog asks about. ``reason_from`` is a second, optional search whose
named groups feed the reason too: what a dialog is about often sits above the lines that
prove the dialog is open. It never decides whether the rule matches. ``unless_after`` is
how a rule says "and this is the latest thing on screen": an error line followed by a newer
reply is history, not the state.

``overrules`` lists the states (in a hook's words: ``done``, ``idle``…) that a higher source
may have said and that this rule's reading ends when the screen shows it: an agent whose hook
ends a failed turn as it ends a good one (Gemini CLI's AfterAgent) says ``done`` over a screen
that shows the error. The daemon's screen reader then puts the rule's reading in that word's
place, in the roster and on the pane's badge (:mod:`roost.truth.roster.overrules`). A rule
never overrules its own state, nor a source at or below the screen's.

Every manifest comes through the one loader (:mod:`roost.agents.manifest`), already merged
(the user's file over the packaged one: a rule with the same id replaces the packaged rule,
new ids are added, ``replace = true`` in its ``[detect]`` drops every packaged rule first) and
checked for its shape. What this module adds is detection's own judgement: a region that
exists, patterns that compile, a reason template whose fields the patterns name, a state word
roost knows. When a user's rule fails it, detection uses the packaged manifest alone, as the
loader does for any other mistake in a user's file, so the packaged rules keep working; every
problem names the file and the rule.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from roost.agents import manifest
from roost.agents.model import Manifest, ScreenProbe, ScreenRule
from roost.agents.schema import ManifestError
from roost.pane.state import words
from roost.truth.detect import regions
from roost.truth.detect.badges import EVENTS

STATES = words.STATES
_EVENT_LIMIT = 64

__all__ = ["STATES", "AgentRules", "Catalog", "ManifestError", "Probe", "Rule", "load_catalog"]


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
    overrules: frozenset[str] = frozenset()
    """A higher source's states this rule's reading ends (the manifest's ``overrules``)."""


@dataclass(frozen=True)
class AgentRules:
    """An agent's rules in the order they are tried, and how its screen identifies it."""

    agent: str
    rules: tuple[Rule, ...]
    identify: tuple[Probe, ...]
    files: tuple[Path, ...]
    hook_reports_dialogs: bool = True
    """False when the agent's integration cannot report a dialog, so the screen must badge it."""
    hook_reports_failures: bool = True
    """False when the agent's integration cannot report a failed turn, so the screen must."""
    hook_reminders: frozenset[str] = frozenset()
    """The hook events (``Event`` or ``Event:notification``) the agent sends only once its
    dialog has been drawn: such a word is about a dialog already on screen (or gone)."""

    @property
    def sees_dialogs(self) -> bool:
        """Whether a rule reads a dialog (state blocked): only then can the screen say one is gone."""
        return any(rule.state == words.BLOCKED for rule in self.rules)

    @property
    def overruled(self) -> frozenset[str]:
        """Every state some rule of the agent's ends: a word the screen may be asked about."""
        return frozenset().union(*(rule.overrules for rule in self.rules))


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


def _compile(value: str, where: str, what: str) -> re.Pattern[str]:
    try:
        return re.compile(value, re.MULTILINE)
    except re.error as error:
        raise ManifestError(f"{where}: {what} {value!r} is not a valid regular expression: {error}") from None


def _probe(found: ScreenProbe, where: str) -> Probe:
    if found.region is None:
        raise ManifestError(f"{where}: region is required (one of {', '.join(regions.NAMES)})")
    try:
        regions.check(found.region)
    except regions.RegionError as error:
        raise ManifestError(f"{where}: {error}") from None
    if found.pattern is None:
        raise ManifestError(f"{where}: pattern is required")
    return Probe(
        found.region,
        _compile(found.pattern, where, "pattern"),
        None if found.unless is None else _compile(found.unless, where, "unless"),
        None if found.unless_after is None else _compile(found.unless_after, where, "unless_after"),
    )


def _reason(template: str | None, groups: set[str], where: str) -> str | None:
    if template is None:
        return None
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


def _rule(found: ScreenRule, agent: str) -> Rule:
    where = f"{found.source} ({agent}): rule {found.id!r}"
    if found.state not in STATES:
        raise ManifestError(f"{where}: state must be one of {', '.join(STATES)}, got {found.state!r}")
    probe = _probe(found.probe, where)
    event = found.event if found.event is not None else EVENTS.get(found.state, found.state)
    if not 0 < len(event) <= _EVENT_LIMIT:
        raise ManifestError(f"{where}: event must be text of 1 to {_EVENT_LIMIT} characters")
    reason_from = None if found.reason_from is None else _probe(found.reason_from, f"{where}: reason_from")
    groups = set(probe.pattern.groupindex) | set(reason_from.pattern.groupindex if reason_from else ())
    reason = _reason(found.reason, groups, where)
    overrules = _overrules(found.overrules, found.state, where)
    source = Path(found.source)
    return Rule(found.id, found.state, found.priority, probe, reason, reason_from, event, source, overrules)


def _overrules(found: tuple[str, ...], state: str, where: str) -> frozenset[str]:
    """The states a rule overrules: state words, each once, never the rule's own."""
    for word in found:
        if word not in STATES:
            raise ManifestError(f"{where}: overrules must list states of {', '.join(STATES)}, got {word!r}")
        if word == state:
            raise ManifestError(f"{where}: overrules lists {word!r}, the rule's own state")
    if len(set(found)) != len(found):
        raise ManifestError(f"{where}: overrules lists a state twice: {list(found)!r}")
    return frozenset(found)


def _compiled(agent: Manifest) -> AgentRules:
    """``agent``'s rules compiled, highest priority first (ties keep file order)."""
    rules = sorted((_rule(rule, agent.name) for rule in agent.detect.rules), key=lambda rule: -rule.priority)
    probes = agent.detect.identify
    where = f"{agent.detect.identify_source} ({agent.name}): [detect] identify"
    numbered = len(probes) > 1
    identify = tuple(
        _probe(probe, f"{where} #{index + 1}" if numbered else where) for index, probe in enumerate(probes)
    )
    files = tuple(Path(path) for path in agent.detect.files)
    hook = agent.hook
    return AgentRules(
        agent.name,
        tuple(rules),
        identify,
        files,
        hook.reports_dialogs,
        hook.reports_failures,
        frozenset(hook.reminders),
    )


_cache: dict[str, tuple[Manifest, AgentRules | ManifestError]] = {}


def _rules(agent: Manifest) -> AgentRules:
    """``agent``'s rules, compiled (or refused) once per version of its manifest."""
    hit = _cache.get(agent.name)
    if hit is None or hit[0] != agent:
        try:
            found: AgentRules | ManifestError = _compiled(agent)
        except ManifestError as error:
            found = error
        hit = _cache[agent.name] = (agent, found)
    if isinstance(hit[1], ManifestError):
        raise ManifestError(hit[1].message, agent.name)
    return hit[1]


def load_catalog() -> Catalog:
    """Every agent's detection rules, from the one loader; a user's file that a rule of it
    makes unusable is left out (the packaged rules stay) and listed in ``problems`` with every
    file the loader left out. Reading again costs a ``stat`` per file unless a file changed."""
    agents: dict[str, AgentRules] = {}
    problems: list[tuple[str, str]] = []
    for name in manifest.names():
        resolved = manifest.resolve(name)
        problems += resolved.problems
        for agent in (resolved.manifest, manifest.resolve(name, user=False).manifest):
            if agent is None or not agent.detect.files:
                break
            try:
                agents[name] = _rules(agent)
                break
            except ManifestError as error:
                problems.append((name, error.message))
                if len(agent.detect.files) < 2:  # no user's rules to leave out: nothing to fall back to
                    break
    return Catalog(agents, tuple(problems))
