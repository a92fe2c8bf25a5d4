"""Loading ``[detect]`` sections: the packaged manifests, user overrides, and every refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from roost.agents.manifest import PACKAGED
from roost.truth.detect.manifests import STATES, ManifestError, load_catalog

GOOD_RULE = """
[[detect.rules]]
id = "{id}"
state = "{state}"
priority = {priority}
region = "bottom:5"
pattern = '{pattern}'
"""


@pytest.fixture
def agents_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's override directory, in a private XDG_CONFIG_HOME."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    directory = tmp_path / "config" / "roost" / "agents"
    directory.mkdir(parents=True)
    return directory


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(text)
    return path


def rule(id: str, state: str = "working", priority: int = 10, pattern: str = "busy") -> str:
    return GOOD_RULE.format(id=id, state=state, priority=priority, pattern=pattern)


def test_every_packaged_manifest_has_usable_detection_rules(agents_dir: Path) -> None:
    catalog = load_catalog()
    assert catalog.problems == ()
    packaged = sorted(path.stem for path in PACKAGED.glob("*.toml"))
    assert sorted(catalog.agents) == packaged
    for rules in catalog.agents.values():
        assert rules.rules, f"{rules.agent} has no rules"
        priorities = [r.priority for r in rules.rules]
        assert priorities == sorted(priorities, reverse=True)


def test_a_user_file_replaces_a_rule_by_id_and_adds_new_ones(agents_dir: Path) -> None:
    packaged = load_catalog().get("claude")
    write(
        agents_dir,
        "claude",
        'name = "claude"\n[detect]\n'
        + rule("esc-to-interrupt", priority=95, pattern="still busy")
        + rule("mine", state="blocked", priority=200, pattern="help me"),
    )
    merged = load_catalog().get("claude")
    ids = [r.id for r in merged.rules]
    assert ids[0] == "mine"
    assert len(ids) == len(packaged.rules) + 1
    replaced = next(r for r in merged.rules if r.id == "esc-to-interrupt")
    assert replaced.probe.pattern.pattern == "still busy"
    assert replaced.source == agents_dir / "claude.toml"
    assert merged.identify == packaged.identify
    assert merged.files == (PACKAGED / "claude.toml", agents_dir / "claude.toml")


def test_replace_true_drops_every_packaged_rule_and_identify(agents_dir: Path) -> None:
    write(agents_dir, "claude", "[detect]\nreplace = true\n" + rule("only"))
    merged = load_catalog().get("claude")
    assert [r.id for r in merged.rules] == ["only"]
    assert merged.identify == ()


def test_a_user_file_without_detect_keeps_the_packaged_rules(agents_dir: Path) -> None:
    packaged = load_catalog().get("claude")
    write(agents_dir, "claude", 'name = "claude"\nexit_command = "/bye"\n')
    assert load_catalog().get("claude") == packaged


def test_a_new_agent_is_one_file(agents_dir: Path) -> None:
    write(
        agents_dir,
        "myagent",
        'name = "myagent"\nbinaries = ["myagent"]\n[detect]\n'
        "identify = { region = \"bottom:2\", pattern = 'myagent>' }\n" + rule("spin"),
    )
    catalog = load_catalog()
    assert catalog.get("myagent").rules[0].id == "spin"
    assert "myagent" in [a.agent for a in catalog.identifiers()]


def test_a_broken_user_file_is_reported_and_the_packaged_rules_stay(agents_dir: Path) -> None:
    path = write(agents_dir, "codex", '[detect]\n[[detect.rules]]\nid = "x"\nstate = "sleeping"\n')
    catalog = load_catalog()
    assert catalog.get("codex").files == (PACKAGED / "codex.toml",)
    assert catalog.problems == (
        (
            "codex",
            f"{path} (codex): rule 'x': state must be one of {', '.join(STATES)}, got 'sleeping'",
        ),
    )


def test_an_agent_whose_only_file_is_broken_raises_its_problem(agents_dir: Path) -> None:
    path = write(agents_dir, "newbie", "[detect\n")
    catalog = load_catalog()
    with pytest.raises(ManifestError, match=f"^{path}: cannot read it: "):
        catalog.get("newbie")


def test_an_agent_without_rules_is_refused_with_the_agents_that_have_some(agents_dir: Path) -> None:
    with pytest.raises(
        ManifestError, match=r"no detection rules for agent 'nobody' \(agents with rules: amp, claude"
    ):
        load_catalog().get("nobody")


R = '[detect]\n[[detect.rules]]\nid = "r"\nstate = "idle"\nregion = "screen"\npattern = "x"\n'
"""A well-formed rule ``r``; each case below adds one mistake."""

BAD_RULES = [
    ('[detect]\nrules = "x"\n', "[detect]: rules must be an array of tables"),
    ("[detect]\nfoo = 1\n", "[detect]: unknown key 'foo'"),
    ("[detect]\nreplace = 1\n", "[detect]: replace must be true or false"),
    ('detect = "x"\n', "[detect]: must be a table"),
    ("[detect]\n[[detect.rules]]\nstate = 'idle'\n", "[[detect.rules]] #1: id is required"),
    (
        '[detect]\n[[detect.rules]]\nid = "r"\nstate = "idle"\nregion = "screen"\n',
        "rule 'r': pattern is required",
    ),
    ('[detect]\n[[detect.rules]]\nid = "r"\nstate = "idle"\npattern = "x"\n', "rule 'r': region is required"),
    (
        '[detect]\n[[detect.rules]]\nid = "r"\nstate = "idle"\nregion = "bottom"\npattern = "x"\n',
        "rule 'r': unknown region 'bottom'",
    ),
    (
        '[detect]\n[[detect.rules]]\nid = "r"\nstate = "idle"\nregion = "screen"\npattern = "(x"\n',
        "rule 'r': pattern '(x' is not a valid regular expression: missing ),",
    ),
    (
        R + "unless = 3\n",
        "rule 'r': unless must be a string",
    ),
    (
        R + 'priority = "hi"\n',
        "rule 'r': priority must be an integer",
    ),
    (
        R + "colour = 1\n",
        "rule 'r': unknown key 'colour'",
    ),
    (
        R + 'reason = "{who}"\n',
        "rule 'r': reason uses {who}, which is not a named group of pattern or reason_from",
    ),
    (
        R + 'reason = "{"\n',
        "rule 'r': reason '{' is not a valid template",
    ),
    (
        R + 'event = ""\n',
        "rule 'r': event must be text of 1 to 64 characters",
    ),
    (
        R + 'reason_from = { region = "screen", pattern = "y", unless = "z" }\n',
        "rule 'r': reason_from: unknown key 'unless'",
    ),
    (
        R + '[[detect.rules]]\nid = "r"\nstate = "done"\nregion = "screen"\npattern = "y"\n',
        "rule 'r': id is used twice",
    ),
    (
        R + 'overrules = "done"\n',
        "rule 'r': overrules must be a list of strings, got 'done'",
    ),
    (
        R + "overrules = [1]\n",
        "rule 'r': overrules must be a list of strings, got [1]",
    ),
    (
        R + 'overrules = ["finished"]\n',
        "rule 'r': overrules must list states of working, blocked, done, idle, error, got 'finished'",
    ),
    (
        R + 'overrules = ["idle"]\n',
        "rule 'r': overrules lists 'idle', the rule's own state",
    ),
    (
        R + 'overrules = ["done", "done"]\n',
        "rule 'r': overrules lists a state twice: ['done', 'done']",
    ),
    ('[detect]\nidentify = "x"\n', "[detect] identify: must be a table with region and pattern"),
    (
        '[detect]\nidentify = [{ region = "title", pattern = "a" }, { region = "nowhere", pattern = "b" }]\n',
        "[detect] identify #2: unknown region 'nowhere'",
    ),
]


@pytest.mark.parametrize(("text", "problem"), BAD_RULES)
def test_each_mistake_is_refused_naming_the_file_the_rule_and_the_problem(
    agents_dir: Path, text: str, problem: str
) -> None:
    path = write(agents_dir, "broken", 'name = "broken"\n' + text)
    [(agent, message)] = load_catalog().problems
    assert agent == "broken"
    assert message.startswith(f"{path} (broken): ")
    assert problem in message


def test_a_file_is_compiled_once_per_version(agents_dir: Path) -> None:
    path = write(agents_dir, "cached", "[detect]\n" + rule("one"))
    first = load_catalog().get("cached").rules[0]
    assert load_catalog().get("cached").rules[0] is first
    path.write_text("[detect]\n" + rule("two", pattern="different length"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert load_catalog().get("cached").rules[0].id == "two"


def test_an_unreadable_file_is_a_problem_not_a_crash(agents_dir: Path) -> None:
    (agents_dir / "dir.toml").mkdir()
    [(agent, message)] = load_catalog().problems
    assert agent == "dir"
    assert "cannot read it" in message


def test_blocked_rules_default_to_the_permission_event(agents_dir: Path) -> None:
    write(agents_dir, "ev", "[detect]\n" + rule("b", state="blocked") + rule("w"))
    events = {r.id: r.event for r in load_catalog().get("ev").rules}
    assert events == {"b": "permission", "w": "working"}


def test_a_rule_overrules_the_states_it_lists_and_none_by_default(agents_dir: Path) -> None:
    over = rule("e", state="error").rstrip("\n") + '\noverrules = ["done", "idle"]\n'
    write(agents_dir, "ov", "[detect]\n" + over + rule("w"))
    rules = load_catalog().get("ov")
    assert {r.id: r.overrules for r in rules.rules} == {"e": frozenset({"done", "idle"}), "w": frozenset()}
    assert rules.overruled == {"done", "idle"}


def test_gemini_s_api_error_rule_overrules_its_hook_s_done(agents_dir: Path) -> None:
    """Gemini CLI's hook ends a failed turn done, as a good one: its error rule says so."""
    rules = load_catalog().get("gemini")
    assert {r.id: r.overrules for r in rules.rules if r.overrules} == {"api-error": frozenset({"done"})}
