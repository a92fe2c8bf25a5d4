"""``roost fork``: a new agent from a pane's conversation, run as its source was started, in a
git worktree of its own when asked; and every refusal, each before anything is made.

A fake harness (``forkable``, a user manifest with a ``[fork]`` command) writes how it was
started to a log and says who it is with ``roost identify``; its conversation is a file named
after its session id, which a test writes when the conversation is to exist. ``unforkable`` is
the same program under a manifest without ``[fork]``.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from tests.cli.roost.test_worktrees import git, repo
from tests.conftest import Roost
from tests.contracts.tables import names, table

__all__ = ["repo"]

FIELDS = {row["command"]: names(row["fields"]) for row in table("`roost --json` documents")}
FAKE = """#!/bin/sh
# A fake agent: says how it was started and who it is, then waits at its prompt.
session="$FAKE_SESSION"
previous=""
for word; do
    [ "$previous" = "--session-id" ] && session="$word"
    previous="$word"
done
printf 'argv=%s endpoint=%s cwd=%s\\n' "$*" "${FAKE_ENDPOINT:-}" "$(pwd)" >> "$FAKE_LOG"
roost identify --session "$session" --cwd "$(pwd)" --harness "$(basename "$0")" \\
    --transcript "$FAKE_TALKS/$session"
roost state idle
while :; do sleep 1; done
"""
FORKABLE = """binaries = ["forkable"]
resume_env = ["FAKE_ENDPOINT"]
value_flags = ["--model", "--session-id"]
[fork]
command = "forkable --fork {session_id} --session-id {fork_id}"
drop = ["--resume", "--session-id"]
[hook]
kind = "none"
"""


class Fakes:
    """The fake harnesses' log and conversations."""

    def __init__(self, roost: Roost) -> None:
        self.roost = roost
        self.log = roost.root / "agents.log"
        self.talks = roost.root / "talks"
        self.talks.mkdir()

    def start(
        self, harness: str, cwd: Path, *flags: str, window: str = "src", session: str = "conv-1"
    ) -> str:
        """The harness in a new window of session main, identified and at its prompt; returns its
        ``%N``."""
        command = shlex.join(["env", f"FAKE_SESSION={session}", "FAKE_ENDPOINT=http://fake", harness, *flags])
        if self.roost.tmux("list-sessions", check=False):
            done = self.roost.run("spawn", window, command, cwd=cwd)
        else:
            done = self.roost.run("new", "-d", "-s", "main", "-n", window, command, cwd=cwd)
        assert done.returncode == 0, done.stderr
        pane = done.stdout.strip()
        self.roost.wait_for(
            lambda: self.roost.option(pane, "@roost-session-id") == session, what="identified"
        )
        self.roost.wait_for(lambda: self.roost.option(pane, "@roost-state") == "idle", what="at its prompt")
        return pane

    def talk(self, session: str = "conv-1") -> None:
        """The conversation ``session`` exists: it has had a turn."""
        (self.talks / session).write_text('{"turn": 1}\n')

    def lines(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def fakes(roost: Roost) -> Fakes:
    bin_dir = roost.root / "bin"
    bin_dir.mkdir()
    for name in ("forkable", "unforkable"):
        program = bin_dir / name
        program.write_text(FAKE)
        program.chmod(0o755)
    manifests = roost.root / "config" / "roost" / "agents"
    manifests.mkdir(parents=True)
    (manifests / "forkable.toml").write_text(FORKABLE)
    (manifests / "unforkable.toml").write_text('binaries = ["unforkable"]\n[hook]\nkind = "none"\n')
    found = Fakes(roost)
    roost.env.update(
        PATH=f"{bin_dir}{os.pathsep}{roost.env['PATH']}", FAKE_LOG=str(found.log), FAKE_TALKS=str(found.talks)
    )
    return found


def panes(roost: Roost) -> list[str]:
    return roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def status_of(roost: Roost, pane: str) -> dict:
    [found] = [p for p in roost.json("status", "--json")["panes"] if p["id"] == pane]
    return found


def test_a_fork_runs_as_its_source_was_started_under_a_new_session_id(roost: Roost, fakes: Fakes) -> None:
    work = roost.root / "work"
    work.mkdir()
    source = fakes.start("forkable", work, "--resume", "old-conversation", "--model", "m1")
    fakes.talk()
    before = status_of(roost, source)

    doc = roost.json("fork", "--json", source, "idea-b")

    assert list(doc)[2:] == FIELDS["fork"]
    fork_id = doc["session_id"]
    assert fork_id and fork_id != "conv-1"
    assert (doc["target"], doc["source"], doc["forked_from"], doc["harness"], doc["name"]) == (
        source,
        source,
        "conv-1",
        "forkable",
        "idea-b",
    )
    assert (doc["cwd"], doc["worktree"], doc["branch"]) == (str(work), None, None)
    pane = doc["pane"]
    roost.wait_for(lambda: len(fakes.lines()) == 2, what="the fork's start")
    # The same program, its flag and endpoint; not the conversation the source resumed.
    assert fakes.lines()[1] == (
        f"argv=--fork conv-1 --session-id {fork_id} --model m1 endpoint=http://fake cwd={work}"
    )
    forked = status_of(roost, pane)
    assert (forked["harness"], forked["session_id"], forked["name"], forked["cwd"]) == (
        "forkable",
        fork_id,
        "idea-b",
        str(work),
    )
    where = roost.tmux("display-message", "-p", "-t", pane, "#{session_name} #{window_name}").split()
    assert where == ["main", "idea-b"]
    assert status_of(roost, source) == before


def test_with_worktree_the_fork_runs_in_a_new_branch_where_its_source_runs_in_the_repository(
    roost: Roost, fakes: Fakes, repo: Path
) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / "kept.txt").write_text("in git\n")
    git(repo, "add", "sub")
    git(repo, "commit", "-qm", "sub")
    (repo / "untracked").mkdir()
    source = fakes.start("forkable", repo / "sub")
    elsewhere = fakes.start("forkable", repo / "untracked", window="other", session="conv-2")
    fakes.talk()
    fakes.talk("conv-2")

    doc = roost.json("fork", "--worktree", source, "idea-b", "--json")

    place = repo.parent / "app.worktrees" / "idea-b"
    assert (doc["worktree"], doc["branch"], doc["cwd"]) == (str(place), "idea-b", str(place / "sub"))
    roost.wait_for(lambda: len(fakes.lines()) == 3, what="the fork's start")
    assert fakes.lines()[2].endswith(f"cwd={place / 'sub'}")
    forked = status_of(roost, doc["pane"])
    assert (forked["worktree"], forked["branch"]) == (str(place), "idea-b")
    assert git(place, "rev-parse", "--abbrev-ref", "HEAD") == "idea-b"
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"

    branched = roost.run("fork", "--worktree", "--branch", "try/c", source, "idea-c")
    assert branched.returncode == 0, branched.stderr
    assert branched.stdout.strip() in panes(roost)
    assert git(repo.parent / "app.worktrees" / "idea-c", "rev-parse", "--abbrev-ref", "HEAD") == "try/c"

    # A folder git does not keep is not in the worktree: the fork starts at its top.
    top = roost.json("fork", "--worktree", elsewhere, "idea-d", "--json")
    assert top["cwd"] == top["worktree"] == str(repo.parent / "app.worktrees" / "idea-d")


REFUSALS = [
    # (what, arguments after the source's %N (SRC) or in its place, exit, words on stderr)
    ("a shell", ["SHELL", "idea"], 1, "has no conversation to fork"),
    ("no turn yet", ["QUIET", "idea"], 1, "has no conversation yet: fork it once it has had a turn"),
    ("an agent that cannot fork", ["UNFORKABLE", "idea"], 1, "cannot fork a conversation"),
    ("a name a window has", ["SRC", "src"], 1, "'src' names a pane or window already"),
    ("worktree outside git", ["--worktree", "SRC", "idea"], 1, "--worktree needs a git repository"),
    ("a branch without a worktree", ["--branch", "b", "SRC", "idea"], 1, "--branch goes with --worktree"),
    ("a pane that is gone", ["%999", "idea"], 2, "can't find pane '%999'"),
    ("one word", ["SRC"], 1, "usage: roost fork"),
    ("a name of two lines", ["SRC", "a\nb"], 1, "NAME must be non-empty, one line"),
]


@pytest.mark.parametrize(("what", "args", "code", "said"), REFUSALS, ids=[r[0] for r in REFUSALS])
def test_each_refusal_says_why_and_makes_nothing(
    roost: Roost, fakes: Fakes, what: str, args: list[str], code: int, said: str
) -> None:
    work = roost.root / "work"
    work.mkdir()
    places = {
        "SRC": fakes.start("forkable", work),
        "QUIET": fakes.start("forkable", work, window="quiet", session="conv-2"),
        "UNFORKABLE": fakes.start("unforkable", work, window="other", session="conv-3"),
        "SHELL": roost.run("spawn", "shell", "sh", cwd=work).stdout.strip(),
    }
    fakes.talk("conv-1")
    fakes.talk("conv-3")
    before, started = panes(roost), len(fakes.lines())

    done = roost.run("fork", *[places.get(arg, arg) for arg in args], cwd=work)

    assert (done.returncode, done.stdout) == (code, ""), done.stderr
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert panes(roost) == before and len(fakes.lines()) == started
    assert sorted(p.name for p in roost.root.iterdir() if p.name.endswith(".worktrees")) == []


def test_a_window_of_two_panes_is_refused_as_no_one_pane(roost: Roost, fakes: Fakes) -> None:
    source = fakes.start("forkable", roost.root)
    fakes.talk()
    roost.tmux("split-window", "-d", "-t", source)
    done = roost.run("fork", "src", "idea")
    assert done.returncode == 1 and "fork takes one pane" in done.stderr, done.stderr


def test_json_says_the_fork_of_an_agent_whose_cli_names_no_id_has_none_yet(
    roost: Roost, fakes: Fakes
) -> None:
    """Without ``{fork_id}`` in its command the fork's id is the agent's to choose: null until
    its first hook says it."""
    manifest = roost.root / "config" / "roost" / "agents" / "forkable.toml"
    manifest.write_text(FORKABLE.replace(" --session-id {fork_id}", ""))
    source = fakes.start("forkable", roost.root)
    fakes.talk()
    doc = roost.json("fork", "--json", source, "idea")
    assert doc["session_id"] is None
    roost.wait_for(lambda: len(fakes.lines()) == 2, what="the fork's start")
    assert json.dumps(fakes.lines()[1]).startswith('"argv=--fork conv-1 endpoint=')
