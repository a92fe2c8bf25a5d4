"""``roost.base.files``: a reader finds the old content or the new, never half; a failed write leaves
nothing behind; the mode asked for is the mode the file has, whatever the umask."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from roost.base import files


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_replace_writes_bytes_or_text_private_by_default(tmp_path: Path) -> None:
    target = tmp_path / "reply"
    files.replace(target, b"first\x00")
    assert (target.read_bytes(), mode(target)) == (b"first\x00", 0o600)
    files.replace(str(target), "caf\u00e9\n", durable=True)
    assert (target.read_bytes(), mode(target)) == ("caf\u00e9\n".encode(), 0o600)
    assert os.listdir(tmp_path) == ["reply"]


def test_the_mode_asked_for_is_the_mode_whatever_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    old = os.umask(0o077)
    try:
        files.replace(target, "{}\n", mode=0o644)
    finally:
        os.umask(old)
    assert mode(target) == 0o644
    old = os.umask(0)
    try:
        files.replace(target, "{}\n")
    finally:
        os.umask(old)
    assert mode(target) == 0o600  # an existing file's looser mode does not survive either


def test_a_reader_sees_the_old_or_the_new_content_never_part(tmp_path: Path) -> None:
    target = tmp_path / "log.jsonl"
    contents = [b"a" * 1_000_000, b"b" * 1_000_000]
    files.replace(target, contents[0])
    seen: set[bytes] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(target.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for round in range(60):
            files.replace(target, contents[round % 2])
    finally:
        done.set()
        reader.join()
    assert seen <= set(contents), sorted(len(data) for data in seen - set(contents))
    assert os.listdir(tmp_path) == ["log.jsonl"]


def test_a_reader_holding_the_old_file_keeps_reading_it_whole(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    files.replace(target, "old")
    with open(target) as held:
        files.replace(target, "new")
        assert held.read() == "old"
    assert target.read_text() == "new"


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "node.key"
    files.replace(target, "kept")
    with pytest.raises(UnicodeEncodeError):
        files.replace(target, "\ud800 cannot be UTF-8")
    assert target.read_text() == "kept"
    assert os.listdir(tmp_path) == ["node.key"]


def test_a_disk_that_refuses_the_bytes_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """A real failed write (EFBIG past a file size limit, as a full disk fails one), in a child
    process so that the limit binds nothing else."""
    target = tmp_path / "log.jsonl"
    files.replace(target, "kept")
    script = (
        "import resource, signal, sys\n"
        "from roost.base import files\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))\n"
        "try:\n"
        "    files.replace(sys.argv[1], b'x' * 100_000, durable=True)\n"
        "except OSError as error:\n"
        "    print(error.errno)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(__import__("errno").EFBIG)
    assert target.read_text() == "kept"
    assert os.listdir(tmp_path) == ["log.jsonl"]


def test_create_makes_the_file_once_and_the_first_content_wins(tmp_path: Path) -> None:
    target = tmp_path / "loopback.token"
    assert files.create(target, "first\n") is True
    assert files.create(target, "second\n") is False
    assert (target.read_text(), mode(target)) == ("first\n", 0o600)
    assert os.listdir(tmp_path) == ["loopback.token"]


def test_racing_creators_all_read_one_winner(tmp_path: Path) -> None:
    target = tmp_path / "vapid.pem"
    made: list[bool] = []
    racers = [
        threading.Thread(target=lambda n=n: made.append(files.create(target, f"key {n}\n" * 1000)))
        for n in range(8)
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(made) == [False] * 7 + [True]
    lines = set(target.read_text().splitlines())
    assert len(lines) == 1 and lines.pop().startswith("key ")
    assert os.listdir(tmp_path) == ["vapid.pem"]
