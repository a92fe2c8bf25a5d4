"""Why a screen reads as the state it does: every rule tried, in order, matched or not and why.

Fixing an agent's manifest means seeing what the engine saw. An explanation runs the same
probes as :func:`roost.truth.detect.screenrules.detect`, but does not stop at the first match: it lists
which agents recognised the screen, every rule of the chosen agent with its outcome, which
one won, and the manifest files that could not be used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from roost.truth.detect import screenrules as engine
from roost.truth.detect.manifests import Catalog, load_catalog
from roost.truth.detect.regions import Screen


@dataclass(frozen=True)
class Asked:
    """One agent asked whether a screen is its own."""

    agent: str
    outcome: engine.Outcome


@dataclass(frozen=True)
class Explanation:
    """Everything the engine considered for one screen."""

    agent: str | None
    named: bool
    asked: tuple[Asked, ...]
    trials: tuple[engine.Trial, ...]
    detection: engine.Detection | None
    title: str | None
    progress: str | None
    problems: tuple[str, ...]


def explain(screen: Screen, agent: str | None = None, catalog: Catalog | None = None) -> Explanation:
    """Explain ``screen`` for ``agent``, or for the agent it identifies as. Raises ManifestError
    when a named agent has no usable rules, saying why."""
    catalog = catalog if catalog is not None else load_catalog()
    asked: tuple[Asked, ...] = ()
    if agent is not None:
        rules = catalog.get(agent)
    else:
        asked = tuple(Asked(found.agent, outcome) for found, outcome in engine.identify(screen, catalog))
        chosen = next((a.agent for a in asked if a.outcome.match is not None), None)
        rules = catalog.agents[chosen] if chosen is not None else None
    trials = tuple(engine.trials(rules, screen)) if rules is not None else ()
    winner = next((t for t in trials if t.matched), None)
    detection = None
    if rules is not None and winner is not None:
        detection = engine.conclude(rules, winner, identified=agent is None)
    problems = tuple(message for _, message in catalog.problems)
    return Explanation(
        rules.agent if rules else None,
        agent is not None,
        asked,
        trials,
        detection,
        screen.title,
        screen.progress,
        problems,
    )


def _verdict(trial: engine.Trial, winner: engine.Trial | None) -> str:
    if trial is winner:
        return "wins"
    if trial.matched:
        return "match"
    return "no"


def lines(explanation: Explanation) -> list[str]:
    """The explanation as text for a person, one fact per line."""
    out: list[str] = []
    found = next((a for a in explanation.asked if a.outcome.match is not None), None)
    if explanation.named:
        out.append(f"agent     {explanation.agent} (named by the caller)")
    elif found is not None:
        out.append(f"agent     {found.agent} (identified: {found.outcome.why})")
    else:
        out.append("agent     none: no agent recognised this screen")
    out.append(f"title     {explanation.title!r}" if explanation.title is not None else "title     (none)")
    out.append(f"progress  {explanation.progress or '(none)'}")
    detection = explanation.detection
    if detection is None:
        out.append("state     none: no rule matched")
    else:
        out.append(
            f"state     {detection.state}, by rule {detection.rule} "
            f"(priority {detection.priority}, region {detection.region})"
        )
        out.append(f"event     {detection.event}")
        if detection.reason:
            out.append(f"reason    {detection.reason}")
    if explanation.asked:
        out += ["", "agents asked, by name:"]
        width = max(len(a.agent) for a in explanation.asked)
        for asked in explanation.asked:
            verdict = "yes" if asked.outcome.match is not None else "no "
            out.append(f"  {verdict}  {asked.agent:<{width}}  {asked.outcome.why}")
    if explanation.trials:
        winner = next((t for t in explanation.trials if t.matched), None)
        out += ["", f"rules of {explanation.agent}, in the order tried:"]
        width = max(len(t.rule.id) for t in explanation.trials)
        for trial in explanation.trials:
            rule = trial.rule
            note = (
                f" (outranked by {winner.rule.id})"
                if trial.matched and trial is not winner and winner
                else ""
            )
            out.append(
                f"  {_verdict(trial, winner):<5} {rule.priority:>4}  {rule.id:<{width}}  "
                f"{rule.state:<7}  {trial.outcome.why}{note}"
            )
    if explanation.problems:
        out += ["", "manifest problems (these files are not used):"]
        out += [f"  {problem}" for problem in explanation.problems]
    return out


def to_json(explanation: Explanation) -> dict[str, Any]:
    """The explanation's fields for a ``--json`` document."""
    detection = explanation.detection
    winner = next((t for t in explanation.trials if t.matched), None)
    return {
        "agent": explanation.agent,
        "identified": bool(explanation.agent) and not explanation.named,
        "title": explanation.title,
        "progress": explanation.progress,
        "state": detection.state if detection else None,
        "rule": detection.rule if detection else None,
        "priority": detection.priority if detection else None,
        "region": detection.region if detection else None,
        "event": detection.event if detection else None,
        "reason": detection.reason if detection else None,
        "tool": detection.tool if detection else None,
        "asked": [
            {"agent": a.agent, "matched": a.outcome.match is not None, "why": a.outcome.why}
            for a in explanation.asked
        ],
        "rules": [
            {
                "id": t.rule.id,
                "state": t.rule.state,
                "priority": t.rule.priority,
                "region": t.rule.probe.region,
                "verdict": _verdict(t, winner),
                "why": t.outcome.why,
                "reason": t.reason,
            }
            for t in explanation.trials
        ],
        "problems": list(explanation.problems),
    }
