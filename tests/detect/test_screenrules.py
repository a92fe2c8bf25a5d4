"""The screen engine: every recorded screen reads as the state its name says, rules are tried
by priority, and what a detection claims is what the roster accepts from the screen source."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from roost.truth.detect import screenrules as engine
from roost.truth.detect.manifests import STATES, load_catalog
from roost.truth.detect.regions import Screen
from roost.truth.roster import Claim, ProcessId, Roster, check
from roost.truth.roster.precedence import SCREEN

SCREENS = Path(__file__).parents[1] / "fixtures" / "screens"
FIXTURES = sorted(SCREENS.glob("*/*.txt"))
RECORDED_NAMES = {"permission": "blocked", "declined": "idle"}
"""Recorded screens named for the moment they were taken rather than for a state: an open
permission dialog is blocked; a declined one leaves the agent waiting, having said nothing."""


@pytest.fixture(autouse=True)
def no_user_manifests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The packaged manifests only: a developer's own overrides must not change these tests."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    directory = tmp_path / "config" / "roost" / "agents"
    directory.mkdir(parents=True)
    return directory


def expected(path: Path) -> str:
    """The state a fixture's name promises: ``[synthetic-]<state>[-<variant>].txt``."""
    word = path.stem.removeprefix("synthetic-").split("-")[0]
    return RECORDED_NAMES.get(word, word)


def read(path: Path) -> Screen:
    return Screen.parse(path.read_bytes().decode("utf-8", errors="replace"))


TOURS = [path for path in sorted(SCREENS.glob("*/recipe.toml")) if "step" in tomllib.loads(path.read_text())]
"""The recipes with a tour, which ``scripts/record-screens`` walks; a recipe without one only
starts its agent for the agent tier's matrix."""


@pytest.mark.parametrize("recipe", TOURS, ids=lambda p: p.parent.name)
def test_every_screen_a_recipe_records_is_there_at_every_size(recipe: Path) -> None:
    """``scripts/record-screens`` writes each shot of the tour at each size; a recipe whose
    agent has screens by hand as well would be half-recorded."""
    tour = tomllib.loads(recipe.read_text())
    sizes = tour.get("sizes", ["120x40"])
    shots = [step["shot"] for step in tour["step"] if "shot" in step]
    wanted = {
        f"{shot}{'' if index == 0 else '-' + size}" for shot in shots for index, size in enumerate(sizes)
    }
    have = {path.stem for path in recipe.parent.glob("*.txt")}
    assert have == wanted, f"missing {sorted(wanted - have)}, not recorded {sorted(have - wanted)}"


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_screen_reads_as_the_state_its_name_says(path: Path) -> None:
    agent, state = path.parent.name, expected(path)
    assert state in STATES, f"{path.name} does not name a state (or a RECORDED_NAMES entry)"
    catalog = load_catalog()
    screen = read(path)
    found = engine.detect(screen, agent, catalog)
    assert found is not None, f"no {agent} rule matched {path.name}"
    assert (found.state, found.identified) == (state, False), f"{path.name}: rule {found.rule}"
    if catalog.get(agent).identify:
        found = engine.detect(screen, None, catalog)
        assert found is not None, f"{path.name} does not identify as {agent}"
        assert (found.agent, found.state, found.identified) == (agent, state, True)


@pytest.mark.parametrize(
    ("fixture", "reason"),
    [
        ("claude/blocked-shell.txt", "Bash: touch x"),
        ("claude/blocked-shell-80x24.txt", "Bash: touch x"),
        ("codex/blocked-shell.txt", "Bash: touch x"),
        ("claude/error-api.txt", "400 the fake model API refuses prompts containing FAIL"),
        ("copilot/blocked-shell.txt", "Shell: touch x"),
        ("copilot/blocked-shell-80x24.txt", "Shell: touch x"),
        ("copilot/error-api.txt", "400 the fake model API refuses prompts containing FAIL"),
        (
            "copilot/error-retries-exhausted-80x24.txt",
            "Failed to get response from the AI model; retried 5 times (total retry wait",
        ),
        ("pi/blocked-extension-select.txt", "⚠️ Dangerous command:"),
        ("pi/error-retries-exhausted.txt", "Retry failed after 3 attempts: 529"),
        ("pi/error-retries-exhausted-80x24.txt", "Retry failed after 3 attempts: 529"),
        ("opencode/blocked-shell.txt", "Shell command: touch x"),
        ("opencode/blocked-shell-80x24.txt", "Shell command: touch x"),
        ("gemini/blocked-shell.txt", "Shell: touch x"),
        ("gemini/blocked-shell-80x24.txt", "Shell: touch x"),
        ("omp/synthetic-blocked.txt", "bash: npm test -- cart"),
    ],
)
def test_dialogs_and_errors_say_what_they_are_about(fixture: str, reason: str) -> None:
    path = SCREENS / fixture
    found = engine.detect(read(path), path.parent.name)
    assert found is not None
    assert found.reason == reason


def manifest(directory: Path, body: str, name: str = "t") -> None:
    (directory / f"{name}.toml").write_text(f'name = "{name}"\n[detect]\n{body}')


def rule(id: str, state: str, pattern: str, priority: int = 0, region: str = "screen", **extra: str) -> str:
    lines = [f'id = "{id}"', f'state = "{state}"', f"priority = {priority}", f'region = "{region}"']
    lines += [f"pattern = '{pattern}'", *(f"{key} = '{value}'" for key, value in extra.items())]
    return "[[detect.rules]]\n" + "\n".join(lines) + "\n"


def rule_for(screen: Screen) -> str | None:
    """Which rule of the test agent ``t`` answers for ``screen``."""
    found = engine.detect(screen, "t")
    return found.rule if found else None


def test_the_highest_priority_match_wins_and_ties_keep_file_order(no_user_manifests: Path) -> None:
    manifest(
        no_user_manifests,
        rule("low", "idle", "x", 1) + rule("first", "working", "x", 5) + rule("second", "done", "x", 5),
    )
    found = engine.detect(Screen.parse("x"), "t")
    assert found is not None
    assert (found.rule, found.state, found.priority, found.region) == ("first", "working", 5, "screen")


def test_unless_vetoes_a_match_and_a_lower_rule_answers(no_user_manifests: Path) -> None:
    manifest(
        no_user_manifests, rule("busy", "working", "spinner", 9, unless="done") + rule("any", "idle", "")
    )
    assert rule_for(Screen.parse("spinner")) == "busy"
    assert rule_for(Screen.parse("spinner\ndone")) == "any"


def test_unless_after_keeps_only_a_match_that_is_the_latest_thing_said(no_user_manifests: Path) -> None:
    manifest(no_user_manifests, rule("err", "error", "^! (?P<reason>.+)$", unless_after="^[>*]"))
    assert engine.detect(Screen.parse("! old\n> retry\n* reply"), "t") is None
    found = engine.detect(Screen.parse("! old\n> retry\n! new\n  more"), "t")
    assert found is not None
    assert found.reason == "new"


def test_a_reason_template_needs_every_group_it_names(no_user_manifests: Path) -> None:
    manifest(
        no_user_manifests,
        rule("ask", "blocked", "^ask (?P<tool>\\w+)(?: (?P<what>.+))?$", reason="{tool}: {what}"),
    )
    found = engine.detect(Screen.parse("ask Bash   rm   -rf  x"), "t")
    assert found is not None
    assert (found.reason, found.tool) == ("Bash: rm -rf x", "Bash")
    found = engine.detect(Screen.parse("ask Bash"), "t")
    assert found is not None
    assert (found.state, found.reason, found.tool) == ("blocked", None, "Bash")


def test_reason_from_searches_elsewhere_and_never_decides_the_match(no_user_manifests: Path) -> None:
    manifest(
        no_user_manifests,
        rule("dialog", "blocked", "Proceed\\?", region="bottom:1", reason="{tool}: {cmd}")
        + "reason_from = { region = \"screen\", pattern = '^(?P<tool>\\w+) wants (?P<cmd>.+)$' }\n",
    )
    found = engine.detect(Screen.parse("Bash wants touch x\n\nProceed?"), "t")
    assert found is not None
    assert (found.reason, found.tool) == ("Bash: touch x", "Bash")
    found = engine.detect(Screen.parse("Proceed?"), "t")
    assert found is not None
    assert found.reason is None


def test_a_long_reason_is_cut_short(no_user_manifests: Path) -> None:
    manifest(no_user_manifests, rule("e", "error", "^E (?P<reason>.+)$"))
    found = engine.detect(Screen.parse("E " + "x" * 500), "t")
    assert found is not None
    assert found.reason is not None
    assert len(found.reason) == engine.REASON_LIMIT
    assert found.reason.endswith("…")


def test_title_and_progress_are_regions_like_any_other(no_user_manifests: Path) -> None:
    manifest(
        no_user_manifests,
        rule("t", "working", "^⠙", 2, region="title") + rule("p", "blocked", "^error", 1, region="progress"),
    )
    assert rule_for(Screen.parse("", title="⠙ busy")) == "t"
    assert rule_for(Screen.parse("\x1b]9;4;2;100\x07")) == "p"
    assert engine.detect(Screen.parse("nothing"), "t") is None


def test_nothing_is_detected_for_an_agent_without_rules_or_a_screen_nobody_recognises() -> None:
    assert engine.detect(Screen.parse("$ ls"), "nobody") is None
    assert engine.detect(Screen.parse("$ ls\nfile.txt")) is None


def test_the_first_agent_by_name_that_recognises_a_screen_is_used(no_user_manifests: Path) -> None:
    ident = "identify = { region = \"bottom:1\", pattern = 'MINE' }\n"
    manifest(no_user_manifests, ident + rule("a", "idle", ""), name="aaa-agent")
    manifest(no_user_manifests, ident + rule("z", "working", ""), name="zzz-agent")
    found = engine.detect(Screen.parse("MINE"))
    assert found is not None
    assert (found.agent, found.rule, found.identified) == ("aaa-agent", "a", True)


def detection(state: str, reason: str | None = None, tool: str | None = None) -> engine.Detection:
    event = "permission" if state == "blocked" else state
    return engine.Detection(
        "claude", state, "some-rule", 50, "bottom:5", event, reason, tool, identified=True
    )


def test_a_blocked_detection_claims_a_pending_request() -> None:
    claim = engine.claim(
        detection("blocked", "Bash: touch x", "Bash"), 100.0, process=ProcessId(42, 7), seq=3
    )
    assert check(claim) is None
    assert (claim.source, claim.activity, claim.event, claim.seq) == (SCREEN, "blocked", "permission", 3)
    assert claim.fields == {"harness": "claude", "pending": {"summary": "Bash: touch x", "tool": "Bash"}}


def test_an_error_detection_claims_its_reason_and_others_claim_only_the_harness() -> None:
    claim = engine.claim(detection("error", "400 refused"), 1.0, session_key="k")
    assert check(claim) is None
    assert claim.fields == {"harness": "claude", "error_reason": "400 refused"}
    assert engine.claim(detection("error"), 1.0, session_key="k").fields["error_reason"] == "some-rule"
    for word in ("working", "done", "idle"):
        claim = engine.claim(detection(word), 1.0, session_key="k")
        assert check(claim) is None
        assert claim.fields == {"harness": "claude"}


def test_the_roster_takes_the_screen_only_where_no_hook_spoke() -> None:
    roster = Roster("node", "n1", clock=lambda: 1000.0, status_epoch=1)
    process = ProcessId(4242, 99)
    screen_claim = engine.claim(detection("blocked", "Bash: touch x", "Bash"), 1000.0, process=process)
    first = roster.apply(screen_claim)
    assert first.accepted
    record = roster.record(first.session_key or "")
    assert record is not None
    assert record.activity == "needs_attention"
    assert record.pending is not None
    assert (record.pending["summary"], record.pending["tool"]) == ("Bash: touch x", "Bash")
    roster.apply(Claim("hook", 1001.0, process=process, activity="working"))
    later = roster.apply(engine.claim(detection("done"), 1002.0, process=process))
    record = roster.record(first.session_key or "")
    assert record is not None
    assert record.activity == "active"
    assert "activity: hook set it, which outranks screen" in later.reasons
