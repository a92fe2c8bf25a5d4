"""Tab completion for ``roost`` and ``rosterd``: the candidates, and the scripts in real bash,
zsh and fish asking the real programs (a throwaway tmux server's panes, a real daemon's keys)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from roost.faces.cli import completion
from tests.api.helpers import about, key_of, sleeper
from tests.conftest import BIN, Roost
from tests.daemon.fixture import Daemon, daemon

__all__ = ["daemon"]


def fake(**usages: str) -> completion.Program:
    return completion.Program(
        "prog",
        list(usages),
        usages.get,
        lambda: ["%1", "api", "main:api"],
        lambda: ["n1:10:5", "builder"],
        lambda: ["claude", "codex"],
    )


PROG = fake(
    send="send [--force] [--json] TARGET TEXT",
    start="start --harness H --cwd DIR",
    explain="explain [--json] KEY",
    split="split [-t P] [cmd]",
)


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ([""], ["explain", "send", "split", "start"]),
        (["s"], ["send", "split", "start"]),
        (["send", "--"], ["--force", "--json"]),
        (["send", ""], ["%1", "api", "main:api"]),
        (["send", "ma"], ["main:api"]),
        (["explain", ""], ["builder", "n1:10:5"]),
        (["start", "--harness", "co"], ["codex"]),
        (["split", "-t", "%"], ["%1"]),
        (["split", "-"], ["-t"]),
        (["start", "--cwd", ""], []),
        (["nosuch", ""], []),
    ],
)
def test_each_position_offers_what_the_usage_says_it_takes(words: list[str], expected: list[str]) -> None:
    assert completion.candidates(PROG, words) == expected


@pytest.mark.parametrize(
    ("line", "point", "words"),
    [
        ("roost ", 6, [""]),
        ("roost se", 8, ["se"]),
        ("roost send 'my pa", 17, ["send", "my pa"]),
        ('roost send "a b" ', 17, ["send", "a b", ""]),
        ("roost send api hello", 11, ["send", ""]),
    ],
)
def test_a_command_line_splits_as_the_shell_would_up_to_the_cursor(
    line: str, point: int, words: list[str]
) -> None:
    assert completion.from_line(line, point) == words


def test_bash_gets_the_part_after_its_last_word_break() -> None:
    assert completion.for_bash(["main:api", "main:web"], "main:a") == ["api", "web"]
    assert completion.for_bash(["--cwd=/x"], "--cwd=") == ["/x"]


@pytest.mark.parametrize("args", [[], ["tcsh", "--", "x"], ["bash", "--line", "roost", "x"], ["bash", "x"]])
def test_a_malformed_request_answers_nothing(args: list[str]) -> None:
    assert completion.answer(PROG, args) == []


@pytest.mark.parametrize("program", ["roost", "rosterd"])
def test_a_shell_that_is_not_offered_is_a_usage_error(roost: Roost, program: str) -> None:
    proc = subprocess.run(
        [str(BIN / program), "completion", "tcsh"], env=roost.env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert proc.stderr == f"usage: {program} completion bash|zsh|fish\n"


@pytest.fixture
def panes(roost: Roost) -> Roost:
    """A roost sandbox with two windows, ``api`` and ``web``, and the programs on PATH."""
    roost.start("sh", session="main")
    roost.tmux("rename-window", "-t", "main", "api")
    roost.tmux("new-window", "-d", "-t", "main", "-n", "web", "sh")
    roost.env["PATH"] = f"{BIN}{os.pathsep}{roost.env['PATH']}"
    return roost


def shell(roost: Roost, *argv: str) -> list[str]:
    done = subprocess.run(argv, env=roost.env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[:-1]


def test_bash_completes_verbs_flags_and_live_targets(panes: Roost) -> None:
    def tab(line: str) -> list[str]:
        script = f'source <(roost completion bash); COMP_LINE="{line}"; COMP_POINT={len(line)}; '
        script += "_roost_complete; printf '%s\\n' \"${COMPREPLY[@]}\""
        return shell(panes, "bash", "-c", script)

    assert tab("roost sc") == ["screen"]
    assert tab("roost send --j") == ["--json"]
    assert set(tab("roost send ")) >= {"%0", "api", "web", "main:api", "main:web"}
    assert tab("roost send main:w") == ["web"]  # bash's word starts after the colon
    assert tab("roost rest") == ["restore"]
    assert tab("roost restore --") == ["--dry-run", "--json"]
    assert not any(tab("roost _la"))  # what tmux runs is no verb of a person's


def test_zsh_loads_the_script_as_its_completion_for_each_program(panes: Roost) -> None:
    script = "autoload -U compinit; compinit -u -D; "
    script += "source <(roost completion zsh); source <(rosterd completion zsh); "
    script += "print -r -- ${_comps[roost]} ${_comps[rosterd]}"
    assert shell(panes, "zsh", "-fc", script) == ["_roost_complete _rosterd_complete"]
    assert shell(panes, "roost", "__complete", "zsh", "--", "send", "") >= ["%0", "%1"]


def test_fish_completes_through_the_script(panes: Roost) -> None:
    home = Path(panes.env["HOME"])
    (home / ".config" / "fish").mkdir(parents=True, exist_ok=True)
    found = shell(panes, "fish", "-c", "roost completion fish | source; complete -C 'roost scr'")
    assert [line.split("\t")[0] for line in found] == ["screen"]
    found = shell(panes, "fish", "-c", "roost completion fish | source; complete -C 'roost send w'")
    assert [line.split("\t")[0] for line in found] == ["web"]


def test_rosterd_offers_the_daemons_live_keys_and_names(roost: Roost, daemon: Daemon) -> None:
    daemon.start()
    env = {**roost.env, "XDG_RUNTIME_DIR": str(daemon.runtime)}
    with sleeper() as proc, daemon.unix() as client:
        answer = client.post("/claim", json=about(proc, activity="working", fields={"name": "builder"}))
        assert answer.status_code in (200, 201), answer.text
        key = key_of(daemon.get("/status")["node_id"], proc)
        asked = subprocess.run(
            [str(BIN / "rosterd"), "__complete", "fish", "--", "explain", ""],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert {key, "builder"} <= set(asked.stdout.split("\n"))


def test_no_daemon_offers_no_keys_and_says_nothing(roost: Roost, tmp_path: Path) -> None:
    env = {**roost.env, "ROSTERD_SOCKET": str(tmp_path / "none.sock")}
    asked = subprocess.run(
        [str(BIN / "rosterd"), "__complete", "bash", "--line", "rosterd explain ", "16"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (asked.returncode, asked.stdout, asked.stderr) == (0, "", "")


def test_set_up_writes_each_shells_script_where_it_looks_once(roost: Roost, tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    env = {**roost.env, "ROOST_BIN_DIR": str(tmp_path / "bin"), "SHELL": "/bin/bash"}
    first = subprocess.run([str(repo / "scripts" / "link-commands")], env=env, capture_output=True, text=True)
    home = Path(roost.env["HOME"])
    data, config = (
        Path(roost.env.get("XDG_DATA_HOME", home / ".local" / "share")),
        Path(roost.env["XDG_CONFIG_HOME"]),
    )
    written = [
        data / "bash-completion" / "completions" / "roost",
        data / "zsh" / "site-functions" / "_rosterd",
        config / "fish" / "completions" / "roost.fish",
    ]
    for path in written:
        assert path.is_file(), first.stdout
    first_text = written[0].read_text()
    assert (
        written[0].read_text()
        == subprocess.run(
            [str(BIN / "roost"), "completion", "bash"], capture_output=True, text=True, check=True
        ).stdout
    )
    again = subprocess.run([str(repo / "scripts" / "link-commands")], env=env, capture_output=True, text=True)
    assert "completion" not in again.stdout and written[0].read_text() == first_text
