"""The screen and title engine: which state an agent's screen shows, by its manifest's rules.

This is detection's third tier, for terminals whose agent reports nothing (no hook adapter,
or a session that predates the install). The engine never names an agent: it tries the
rules an agent's manifest lists, highest priority first, each against one region of the
screen (see :mod:`roost.truth.detect.regions`), and the first rule that matches says the state.
When no caller knows which agent runs, the agents whose manifests say how their screen
identifies them are asked in name order, and the first that recognises the screen is used.

What comes out is a claim with source ``screen``, the lowest source but a process scan: the
roster lets it fill a null or take over when a leased integration falls silent, and never
lets it overwrite what a hook said.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from roost.pane.state import words
from roost.truth.detect.manifests import AgentRules, Catalog, Probe, Rule, load_catalog
from roost.truth.detect.regions import Screen
from roost.truth.roster.claims import Claim, ProcessId
from roost.truth.roster.precedence import SCREEN

REASON_LIMIT = 200
"""Longest reason kept: it is a badge's subtitle, not a transcript."""
_EXCERPT = 60


@dataclass(frozen=True)
class Outcome:
    """What one probe found: the match (None when it did not match) and why, in words."""

    match: re.Match[str] | None
    why: str


@dataclass(frozen=True)
class Trial:
    """One rule tried against one screen."""

    rule: Rule
    outcome: Outcome
    reason: str | None = None
    tool: str | None = None

    @property
    def matched(self) -> bool:
        return self.outcome.match is not None


@dataclass(frozen=True)
class Detection:
    """The state a screen shows, which rule said so, and what it is about."""

    agent: str
    state: str
    rule: str
    priority: int
    region: str
    event: str
    reason: str | None
    tool: str | None
    identified: bool
    """True when the screen named the agent, False when the caller did."""
    overrules: frozenset[str] = frozenset()
    """A higher source's states this reading ends (its rule's ``overrules``)."""


def excerpt(text: str) -> str:
    """Matched text as one short quoted line, for explanations."""
    flat = text.strip().replace("\n", " ⏎ ")
    return repr(flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 1] + "…")


def look(probe: Probe, screen: Screen) -> Outcome:
    """Whether ``probe`` matches ``screen``, and why or why not."""
    text = screen.region(probe.region)
    if text is None:
        return Outcome(None, f"region {probe.region} is not on this screen")
    if probe.unless_after is None:
        found = probe.pattern.search(text)
    else:
        matches = list(probe.pattern.finditer(text))
        found = matches[-1] if matches else None  # the last match: what follows it decides
    if found is None:
        return Outcome(None, f"pattern not found in {probe.region}")
    if probe.unless is not None:
        vetoed = probe.unless.search(text)
        if vetoed is not None:
            return Outcome(None, f"pattern found, but 'unless' matched {excerpt(vetoed.group(0))}")
    if probe.unless_after is not None:
        newer = probe.unless_after.search(text, found.end())
        if newer is not None:
            return Outcome(
                None, f"pattern found, but 'unless_after' matched {excerpt(newer.group(0))} after it"
            )
    return Outcome(found, f"matched {excerpt(found.group(0))} in {probe.region}")


def _clean(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= REASON_LIMIT else flat[: REASON_LIMIT - 1] + "…"


def _groups(rule: Rule, found: re.Match[str], screen: Screen) -> dict[str, str]:
    """The named groups a match captured, with those of the rule's ``reason_from`` search."""
    groups = {name: value for name, value in found.groupdict().items() if value is not None}
    if rule.reason_from is not None:
        text = screen.region(rule.reason_from.region)
        more = rule.reason_from.pattern.search(text) if text is not None else None
        if more is not None:
            groups.update({name: value for name, value in more.groupdict().items() if value is not None})
    return groups


def _reason(rule: Rule, groups: dict[str, str]) -> str | None:
    if rule.reason is None:
        reason = groups.get("reason")
        return _clean(reason) if reason else None
    try:
        return _clean(rule.reason.format_map(groups))
    except KeyError:
        return None  # a group the template needs took no part in this match


def trial(rule: Rule, screen: Screen) -> Trial:
    """Try one rule; a match carries the reason and tool its named groups captured."""
    outcome = look(rule.probe, screen)
    if outcome.match is None:
        return Trial(rule, outcome)
    groups = _groups(rule, outcome.match, screen)
    tool = groups.get("tool")
    return Trial(rule, outcome, _reason(rule, groups), _clean(tool) if tool else None)


def trials(rules: AgentRules, screen: Screen) -> Iterator[Trial]:
    """Every rule of an agent tried in order; the first that matches is the answer."""
    for rule in rules.rules:
        yield trial(rule, screen)


def recognise(rules: AgentRules, screen: Screen) -> Outcome:
    """Whether ``screen`` is this agent's: the first of its identify probes that matches, or
    why none did."""
    misses = []
    for probe in rules.identify:
        outcome = look(probe, screen)
        if outcome.match is not None:
            return outcome
        misses.append(outcome.why)
    return Outcome(None, "; ".join(misses) or "it has no identify probes")


def identify(screen: Screen, catalog: Catalog) -> Iterator[tuple[AgentRules, Outcome]]:
    """Each agent that can identify itself, by name, with whether this screen is its screen."""
    for rules in catalog.identifiers():
        yield rules, recognise(rules, screen)


def conclude(rules: AgentRules, found: Trial, identified: bool) -> Detection:
    """The detection a matched trial of ``rules`` makes."""
    rule = found.rule
    return Detection(
        rules.agent,
        rule.state,
        rule.id,
        rule.priority,
        rule.probe.region,
        rule.event,
        found.reason,
        found.tool,
        identified,
        rule.overrules,
    )


def detect(screen: Screen, agent: str | None = None, catalog: Catalog | None = None) -> Detection | None:
    """The state ``screen`` shows for ``agent`` (or for whichever agent it identifies as when
    ``agent`` is None); None when no rule matches or the agent has no usable rules."""
    catalog = catalog if catalog is not None else load_catalog()
    if agent is not None:
        rules = catalog.agents.get(agent)
        candidates = [] if rules is None else [rules]
    else:
        recognised = (rules for rules, outcome in identify(screen, catalog) if outcome.match is not None)
        first = next(recognised, None)
        candidates = [] if first is None else [first]
    for rules in candidates:
        for tried in trials(rules, screen):
            if tried.matched:
                return conclude(rules, tried, identified=agent is None)
    return None


def claim(
    detection: Detection,
    received_at: float,
    *,
    session_key: str | None = None,
    process: ProcessId | None = None,
    ancestors: tuple[ProcessId, ...] = (),
    seq: int | None = None,
    occupant_id: int | None = None,
) -> Claim:
    """The claim a detection makes: its state as the activity, its rule's event, the agent as
    the harness, and a dialog's reason as the pending request (an error's as its reason)."""
    fields: dict[str, Any] = {"harness": detection.agent}
    if detection.state == words.BLOCKED and detection.reason:
        pending = {"summary": detection.reason}
        if detection.tool:
            pending["tool"] = detection.tool
        fields["pending"] = pending
    elif detection.state == words.ERROR:
        fields["error_reason"] = detection.reason or detection.rule
    return Claim(
        source=SCREEN,
        received_at=received_at,
        session_key=session_key,
        process=process,
        ancestors=ancestors,
        activity=detection.state,
        event=detection.event,
        seq=seq,
        occupant_id=occupant_id,
        fields=fields,
    )
