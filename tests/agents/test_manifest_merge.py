"""A user's manifest amends the packaged one; a user's file with a mistake is left out whole.

The rule: tables merge key by key, a ``[[detect.rules]]`` entry with the same id replaces the
packaged one and a new id is added, and any other value (an array too) replaces the packaged
value. What reads the manifest (the launcher's order, the daemon's adapters, bare
``rosterd-hook``) reads it from these files, not from names in code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.agents import cache, manifest
from roost.daemon import config
from roost.faces.api import launcher
from roost.truth.detect.identify import Names

ONE_RULE = '[[detect.rules]]\nid = "mine"\nstate = "working"\nregion = "screen"\npattern = "busy"\n'


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's manifest directory, in a private config dir, with a private cache."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    directory = tmp_path / "config" / "roost" / "agents"
    directory.mkdir(parents=True)
    return directory


def test_one_screen_rule_keeps_everything_else_of_the_packaged_manifest(agents: Path) -> None:
    packaged = manifest.load("claude")
    (agents / "claude.toml").write_text(ONE_RULE)
    merged = manifest.load("claude")
    assert merged is not None and packaged is not None
    assert (merged.binaries, merged.aliases) == (("claude",), ("claude-code",))
    assert (merged.exit_command, merged.resume_command) == ("/exit", "claude --resume {session_id}")
    assert merged.hook == packaged.hook
    assert merged.action("Stop") == "done"
    assert [rule.id for rule in merged.detect.rules] == [*(r.id for r in packaged.detect.rules), "mine"]
    assert merged.files == (*packaged.files, str(agents / "claude.toml"))
    assert manifest.problems() == ()
    assert Names(manifest.load_all().values()).agent("claude") == "claude"  # what the scan knows
    assert manifest.for_command("claude-code") == merged  # what `roost close` asks


def test_tables_merge_key_by_key_and_arrays_are_replaced(agents: Path) -> None:
    (agents / "claude.toml").write_text(
        'binaries = ["claude", "myclaude"]\n[hook]\ninstall = ["Stop"]\n'
        '[hook.events]\nStop = "error"\nMyEvent = "working"\n[hook.notifications]\nidle_prompt = "done"\n'
    )
    merged = manifest.load("claude")
    assert merged is not None
    assert merged.binaries == ("claude", "myclaude")
    assert merged.hook.install == ("Stop",)
    assert merged.hook.kind == "claude-settings"  # kept: the user's [hook] did not say
    assert merged.hook.events["Stop"] == "error"
    assert merged.hook.events["MyEvent"] == "working"
    assert merged.hook.events["UserPromptSubmit"] == "prompt"
    assert merged.hook.notifications == {
        "permission_prompt": "blocked",
        "elicitation_dialog": "blocked",
        "idle_prompt": "done",
    }


def test_a_rule_with_a_packaged_id_replaces_it_where_it_stood(agents: Path) -> None:
    packaged = manifest.load("codex")
    assert packaged is not None
    (agents / "codex.toml").write_text(ONE_RULE.replace('"mine"', '"composer"'))
    merged = manifest.load("codex")
    assert merged is not None
    assert [r.id for r in merged.detect.rules] == [r.id for r in packaged.detect.rules]
    composer = next(r for r in merged.detect.rules if r.id == "composer")
    assert (composer.probe.pattern, composer.source) == ("busy", str(agents / "codex.toml"))
    assert merged.detect.identify == packaged.detect.identify


BAD_FILES = [
    ("[hook\n", "cannot read it: "),
    ("colour = 1\n", "unknown key 'colour'"),
    ('binaries = "claude"\n', "binaries must be a list of strings, got 'claude'"),
    ("[hook]\nevnts = 1\n", "[hook]: unknown key 'evnts'"),
    ('[hook.events]\nStop = "finished"\n', "[hook.events]: Stop must be one of prompt, working"),
    ('[hook]\ntimeout = "3"\n', "[hook]: timeout must be an integer, got '3'"),
    ('[hook]\nkind = "asset"\n', "[hook]: kind 'asset' needs asset"),
    ("[acp]\ncommand = []\n", "[acp]: command is required"),
    ('[acp]\ncommand = "x"\n', "[acp]: command must be a list of strings"),
    ('[fork]\ncommand = ""\n', "[fork]: command is required"),
    ('[fork]\ndrop = "--resume"\n', "[fork]: drop must be a list of strings"),
    ("[fork]\nfrom = 1\n", "[fork]: unknown key 'from'"),
    ('[usage]\noutput_adds = ["thinking"]\n', "[usage]: output_adds names 'thinking', which is none of"),
    ('[usage]\nfiles = ["{session}.jsonl"]\n', "holds {session}, which is neither {session_id} nor"),
    ('[usage]\nfiles = ["{session_id:0}.jsonl"]\n', "holds {session_id:0}, which is neither"),
    ('[usage]\nfiles = ["{session_id.jsonl"]\n', "holds {, which is neither"),
    ("[usage]\nquery = 'DELETE FROM message WHERE id = :session_id'\n", "[usage]: query must be one SQL"),
    ("[usage]\nquery = 'SELECT data FROM message'\n", "its id bound as :session_id"),
    ("[usage]\nquery = 1\n", "[usage]: query must be one SQL SELECT"),
    ('name = "other"\n', "name must be the file's own name, 'claude', got 'other'"),
    ("[[detect.rules]]\nstate = 'idle'\n", "[[detect.rules]] #1: id is required"),
]


@pytest.mark.parametrize(("text", "problem"), BAD_FILES)
def test_a_bad_user_file_is_named_with_its_field_and_the_packaged_manifest_kept(
    agents: Path, text: str, problem: str
) -> None:
    packaged = manifest.load("claude")
    path = agents / "claude.toml"
    path.write_text(text)
    assert manifest.load("claude") == packaged
    [(agent, message)] = manifest.problems()
    assert agent == "claude"
    assert message.startswith(str(path))
    assert problem in message


def test_a_users_fork_section_amends_the_packaged_one_and_only_forkers_have_one(agents: Path) -> None:
    """What forks in a pane is data: the packaged manifests with a ``[fork]`` are the agents whose
    CLIs were measured forking (tests/agents/test_fork.py); any other is refused ``cannot_fork``."""
    forkers = {name for name, found in manifest.load_all().items() if found.fork is not None}
    assert forkers == {"claude", "codex", "opencode", "pi"}
    (agents / "claude.toml").write_text('[fork]\ndrop = ["--resume"]\n')
    fork = manifest.load("claude").fork
    assert fork is not None and fork.drop == ("--resume",)
    assert fork.command == "claude --resume {session_id} --fork-session --session-id {fork_id}"
    (agents / "gemini.toml").write_text('[fork]\ncommand = "gemini --resume {session_id} --fork"\n')
    assert manifest.load("gemini").fork.command == "gemini --resume {session_id} --fork"


def test_a_bad_user_file_is_checked_once_per_version(agents: Path) -> None:
    """The hook reads the verdict from the cache: a bad file costs no parse per event."""
    path = agents / "claude.toml"
    path.write_text("[hook\n")
    manifest.load("claude")
    manifest._memo.clear()  # as a new process starts
    cached = cache.read(
        str(path), [cache.identity(str(manifest.PACKAGED / "claude.toml")), cache.identity(str(path))]
    )
    assert cached is not None and "cannot read it" in cached["problems"][0][1]


def test_the_launcher_lists_agents_by_their_manifests_rank(agents: Path) -> None:
    assert [a["name"] for a in launcher.agents("")][:3] == ["claude", "codex", "gemini"]
    (agents / "omp.toml").write_text("rank = 0\n")
    (agents / "zed.toml").write_text('binaries = ["zed"]\n')
    names = [a["name"] for a in launcher.agents("")]
    assert names[:2] == ["omp", "claude"]
    assert names[-1] == "zed"  # no rank: after every ranked agent


def test_the_daemons_default_adapters_are_the_manifests_acp_sections(agents: Path) -> None:
    defaults = config.load(config.default_path()).harness
    assert defaults["claude"] == config.Harness(adapter="claude-agent-acp")
    assert defaults["codex"] == config.Harness(adapter="codex-acp")
    assert defaults["pi"] == config.Harness(adapter="pi-acp", extension=True)
    assert defaults["gemini"] == config.Harness(adapter="gemini --acp")
    assert "amp" not in defaults
    (agents / "amp.toml").write_text('[acp]\ncommand = ["amp-acp", "--stdio"]\n')
    assert config.load(config.default_path()).harness["amp"] == config.Harness(adapter="amp-acp --stdio")


def test_the_hooks_default_harness_is_the_manifest_that_says_so(agents: Path) -> None:
    assert manifest.default_harness() == "claude"
    (agents / "claude.toml").write_text("[hook]\ndefault = false\n")
    (agents / "codex.toml").write_text("[hook]\ndefault = true\n")
    assert manifest.default_harness() == "codex"
    (agents / "claude.toml").unlink()
    assert manifest.default_harness() == "claude"  # both say so: the first by name
    [(agent, message)] = manifest.problems()
    assert agent == "codex"
    assert "[hook] default = true in claude, codex" in message


def test_the_gate_holds_its_own_event_for_a_tool_it_does_not_skip(agents: Path) -> None:
    """One predicate, on the gate: ``rosterd-hook --gate`` and the daemon's hook port ask it."""
    gate = manifest.load("claude").hook.gate  # type: ignore[union-attr]
    assert gate is not None and gate.skip_tools
    assert gate.holds(gate.event, "Bash")
    assert not gate.holds(gate.event, gate.skip_tools[0])
    assert not gate.holds("Stop", "Bash")
