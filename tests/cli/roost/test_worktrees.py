"""``roost spawn --worktree``: each agent in a git worktree and branch of its own, refusals that
make nothing, and ``status --json`` saying which worktree and branch a pane's agent has."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import Roost


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


@pytest.fixture
def repo(roost: Roost) -> Path:
    """A repository with one commit, the sandbox's git identity its own."""
    found = roost.root / "app"
    found.mkdir()
    roost.env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
    )
    subprocess.run(["git", "init", "-q", "-b", "main", str(found)], check=True, env=roost.env)
    (found / "shared.txt").write_text("one\n")
    subprocess.run(["git", "-C", str(found), "add", "."], check=True, env=roost.env)
    subprocess.run(["git", "-C", str(found), "commit", "-qm", "start"], check=True, env=roost.env)
    return found


def spawn(roost: Roost, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return roost.run("spawn", *args, cwd=repo)


def pane_of(roost: Roost, pane: str) -> dict:
    [found] = [p for p in roost.json("status", "--json")["panes"] if p["id"] == pane]
    return found


def test_two_agents_edit_one_file_each_on_its_own_branch(roost: Roost, repo: Path) -> None:
    first = spawn(roost, repo, "--worktree", "api", "sh")
    second = spawn(roost, repo, "--worktree", "--branch", "feature/web", "web", "sh")
    assert first.returncode == 0 and second.returncode == 0, (first.stderr, second.stderr)
    api, web = first.stdout.strip(), second.stdout.strip()
    where = {"api": repo.parent / "app.worktrees" / "api", "web": repo.parent / "app.worktrees" / "web"}
    assert (pane_of(roost, api)["worktree"], pane_of(roost, api)["branch"]) == (str(where["api"]), "api")
    assert (pane_of(roost, web)["worktree"], pane_of(roost, web)["branch"]) == (
        str(where["web"]),
        "feature/web",
    )
    for pane, text in ((api, "from api"), (web, "from web")):
        roost.tmux(
            "send-keys", "-t", pane, f"echo '{text}' >> shared.txt && git commit -qam '{text}'", "Enter"
        )
    roost.wait_for(lambda: git(where["web"], "log", "-1", "--format=%s") == "from web", 10, "web's commit")
    roost.wait_for(lambda: git(where["api"], "log", "-1", "--format=%s") == "from api", 10, "api's commit")
    assert (where["api"] / "shared.txt").read_text() == "one\nfrom api\n"
    assert (where["web"] / "shared.txt").read_text() == "one\nfrom web\n"
    assert (repo / "shared.txt").read_text() == "one\n"
    assert git(repo, "branch", "--list", "--format=%(refname:short)").split() == [
        "api",
        "feature/web",
        "main",
    ]


def test_roost_worktrees_names_the_folder(roost: Roost, repo: Path, tmp_path: Path) -> None:
    done = roost.run(
        "spawn", "--worktree", "api", "sh", env={"ROOST_WORKTREES": str(tmp_path / "wt")}, cwd=repo
    )
    assert done.returncode == 0, done.stderr
    assert pane_of(roost, done.stdout.strip())["worktree"] == str(tmp_path / "wt" / "app" / "api")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--branch", "x", "api"),
            "usage: roost spawn [--worktree [--branch B]] NAME [cmd…] (--branch goes with --worktree)\n",
        ),
        (
            ("--worktree", "--branch", "bad..name", "api"),
            "roost spawn: 'bad..name' is not a branch name git accepts: give one with --branch\n",
        ),
        (("--worktree", "--branch", "main", "api"), "branch main already exists"),
        (("--bogus", "api"), "usage: roost spawn [--worktree [--branch B]] NAME [cmd…] (unknown --bogus)\n"),
        (("--worktree",), "usage: roost spawn [--worktree [--branch B]] NAME [cmd…]\n"),
    ],
)
def test_a_refusal_makes_nothing(roost: Roost, repo: Path, args: tuple[str, ...], message: str) -> None:
    done = spawn(roost, repo, *args)
    assert done.returncode == 1
    assert done.stderr.endswith(message) or message in done.stderr, done.stderr
    assert not (repo.parent / "app.worktrees").exists()
    assert git(repo, "branch", "--list", "--format=%(refname:short)").split() == ["main"]
    assert roost.json("status", "--json")["panes"] == []


def test_outside_a_repository_and_over_a_taken_folder(roost: Roost, repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = roost.run("spawn", "--worktree", "api", "sh", cwd=plain)
    assert (outside.returncode, outside.stderr) == (
        1,
        f"roost spawn: --worktree needs a git repository, and {plain} is in none\n",
    )
    taken = repo.parent / "app.worktrees" / "api"
    taken.mkdir(parents=True)
    over = spawn(roost, repo, "--worktree", "api", "sh")
    assert (over.returncode, over.stderr) == (
        1,
        f"roost spawn: {taken} already exists: spawn under another NAME, or move it aside\n",
    )
    assert git(repo, "branch", "--list", "--format=%(refname:short)").split() == ["main"]


def test_a_pane_without_a_worktree_says_null(roost: Roost, repo: Path) -> None:
    done = spawn(roost, repo, "plain", "sh")
    assert done.returncode == 0, done.stderr
    found = pane_of(roost, done.stdout.strip())
    assert (found["worktree"], found["branch"]) == (None, None)


def test_close_keeps_a_worktree_unless_asked_and_always_one_with_work(roost: Roost, repo: Path) -> None:
    made = {
        name: spawn(roost, repo, "--worktree", name, "sh").stdout.strip()
        for name in ("kept", "dirty", "clean")
    }
    spawn(roost, repo, "other", "sh")  # the session keeps a pane: close never ends a session
    where = repo.parent / "app.worktrees"
    kept = roost.run("close", "--force", made["kept"])
    assert (kept.returncode, kept.stderr) == (
        0,
        f"roost close: kept the worktree {where / 'kept'} (branch kept): --remove-worktree was not given\n",
    )
    (where / "dirty" / "notes.txt").write_text("half done\n")
    dirty = roost.json("close", "--force", "--json", "--remove-worktree", made["dirty"])
    assert (dirty["worktree"], dirty["branch"], dirty["worktree_removed"]) == (
        str(where / "dirty"),
        "dirty",
        False,
    )
    assert dirty["worktree_kept"] == "it has changes that are not committed"
    clean = roost.json("close", "--force", "--json", "--remove-worktree", made["clean"])
    assert (clean["worktree_removed"], clean["worktree_kept"]) == (True, None)
    assert (where / "kept").is_dir() and (where / "dirty" / "notes.txt").exists()
    assert not (where / "clean").exists()
    assert git(repo, "branch", "--list", "--format=%(refname:short)").split() == ["dirty", "kept", "main"]


def test_close_keeps_a_worktree_whose_branch_has_commits_the_repository_lacks(
    roost: Roost, repo: Path
) -> None:
    pane = spawn(roost, repo, "--worktree", "ahead", "sh").stdout.strip()
    spawn(roost, repo, "other", "sh")  # the session keeps a pane: close never ends a session
    where = repo.parent / "app.worktrees" / "ahead"
    (where / "new.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(where), "add", "."], check=True, env=roost.env)
    subprocess.run(["git", "-C", str(where), "commit", "-qm", "work"], check=True, env=roost.env)
    done = roost.json("close", "--force", "--json", "--remove-worktree", pane)
    assert done["worktree_removed"] is False
    assert done["worktree_kept"] == f"branch ahead has commits that {repo}'s HEAD does not"
    assert where.is_dir()
