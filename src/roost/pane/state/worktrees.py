"""Git worktrees roost makes for spawned agents: a folder and a branch of its own per agent, so
agents working in one repository never edit each other's files.

A worktree goes, unless ``ROOST_WORKTREES`` names another folder, beside the repository in
``<repo>.worktrees/<NAME>``, where a person finds it, on a new branch named after the agent
(or the one asked for), made from the repository's current ``HEAD``. Everything that refuses
does so before git is asked to make anything, so a refusal leaves nothing behind. What it
does on disk is git's (``git worktree add``), never ours.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from roost.base.errors import Conflict, SetupError, UsageError

ROOT = "ROOST_WORKTREES"
"""The environment variable naming the folder worktrees go in (``<it>/<repo>/<NAME>``)."""
GIT_WAIT = 30.0


@dataclass(frozen=True)
class Planned:
    """Where a worktree will go: the repository's top folder, the new folder, the new branch."""

    repo: str
    path: str
    branch: str


def _git(cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", cwd, *args], capture_output=True, text=True, timeout=GIT_WAIT, check=False
        )
    except OSError as error:
        raise SetupError(f"can't run git: {error.strerror}") from error


def plan(cwd: str, name: str, branch: str | None = None) -> Planned:
    """Where ``name``'s worktree would go from ``cwd``; UsageError when ``cwd`` is in no git
    repository or the branch is no name git takes, Conflict when the branch or folder exists."""
    top = _git(cwd, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise UsageError(f"--worktree needs a git repository, and {cwd} is in none")
    repo = top.stdout.strip()
    branch = branch or name
    if _git(repo, "check-ref-format", "--branch", branch).returncode != 0:
        raise UsageError(f"'{branch}' is not a branch name git accepts: give one with --branch")
    if _git(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}").returncode == 0:
        raise Conflict(f"branch {branch} already exists in {repo}: name another with --branch")
    root = os.environ.get(ROOT)
    folder = name.replace("/", "-")
    if root:
        path = os.path.join(os.path.abspath(root), os.path.basename(repo), folder)
    else:
        path = os.path.join(os.path.dirname(repo), f"{os.path.basename(repo)}.worktrees", folder)
    if os.path.lexists(path):
        raise Conflict(f"{path} already exists: spawn under another NAME, or move it aside")
    return Planned(repo, path, branch)


def create(planned: Planned) -> None:
    """Make the worktree as planned, on a new branch from the repository's ``HEAD``."""
    made = _git(planned.repo, "worktree", "add", "-b", planned.branch, planned.path, "HEAD")
    if made.returncode != 0:
        said = made.stderr.strip().splitlines()
        raise SetupError(f"git could not make the worktree: {said[-1] if said else 'no reason given'}")


def unfinished(path: str, branch: str) -> str | None:
    """Why the worktree at ``path`` still holds work (changes not committed, or commits of
    ``branch`` its repository's checked-out branch does not have), or None when removing it
    loses nothing."""
    status = _git(path, "status", "--porcelain")
    if status.returncode != 0:
        return f"git cannot read it ({status.stderr.strip() or 'no reason given'})"
    if status.stdout.strip():
        return "it has changes that are not committed"
    common = _git(path, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    repo = os.path.dirname(common) if common else path
    if _git(repo, "merge-base", "--is-ancestor", branch, "HEAD").returncode != 0:
        return f"branch {branch} has commits that {repo}'s HEAD does not"
    return None


def remove(path: str, branch: str) -> None:
    """Remove the worktree at ``path`` and its branch (both already known to hold no work)."""
    common = _git(path, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    repo = os.path.dirname(common) if common else path
    gone = _git(repo, "worktree", "remove", path)
    if gone.returncode != 0:
        said = gone.stderr.strip().splitlines()
        raise SetupError(f"git could not remove the worktree: {said[-1] if said else 'no reason given'}")
    _git(repo, "branch", "-d", branch)
