"""Kept replies: each numbered turn's reply, and who sent the prompt that started it.

Files live under ``<record dir>/<server boot key>/<pane number>/replies/``. The boot key
keeps a restarted server's reused ``%N`` from reading another pane's answers. Turn 0 holds
a reply given before any turn was numbered (``roost reply`` from a program that badges
itself without ever saying working); it has no sender, since no ``send`` started it.
"""

from __future__ import annotations

import os

from roost.base import files, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

MAX_REPLY = 12 * 1024


def pane_dir(server_key: str, pane_id: str) -> str | None:
    """The pane's directory, as a string: ``roost read`` gets its reply without pathlib,
    whose import would cost it more than a tmux call."""
    root = paths.record_path()
    if root is None:
        return None
    return os.path.join(root, server_key, pane_id.lstrip("%"))


def truncate(data: bytes) -> bytes:
    """Keep the beginning of an over-long reply and say how much was dropped.

    The cut falls between characters: a character the cap would split is dropped whole (at
    most three bytes back), so a reply the agent wrote as clean UTF-8 is kept as clean UTF-8
    and never reads back as ``lossy``.
    """
    if len(data) <= MAX_REPLY:
        return data
    cut = MAX_REPLY
    # A continuation byte (0b10xxxxxx) right after the cut belongs to the character before it.
    while cut > MAX_REPLY - 3 and data[cut] & 0xC0 == 0x80:
        cut -= 1
    dropped = len(data) - cut
    return data[:cut] + f"\n[roost: reply truncated, {dropped} more bytes dropped]".encode()


def _write(path: str, data: bytes) -> None:
    paths.private_mkdir(os.path.dirname(path))
    files.replace(path, data)


def _turn_path(base: str, turn: int) -> str:
    return os.path.join(base, "replies", f"{turn:06d}")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def keep_reply(server_key: str, pane_id: str, turn: int, data: bytes) -> bool:
    base = pane_dir(server_key, pane_id)
    if base is None:
        return False
    _write(_turn_path(base, turn), truncate(data))
    return True


def keep_sender(server_key: str, pane_id: str, turn: int, label: str) -> bool:
    base = pane_dir(server_key, pane_id)
    if base is None:
        return False
    _write(_turn_path(base, turn) + ".sent_by", label.encode())
    return True


def mark_current(server_key: str, pane_id: str, turn: int | None) -> None:
    """Record which kept turn is the pane's current reply (empty once a turn said nothing)."""
    base = pane_dir(server_key, pane_id)
    if base is not None:
        _write(os.path.join(base, "current"), b"" if turn is None else str(turn).encode())


def current(server_key: str, pane_id: str) -> int | None:
    """The pane's current kept turn as last marked, readable after the pane is gone."""
    base = pane_dir(server_key, pane_id)
    data = _read(os.path.join(base, "current")) if base is not None else None
    text = data.decode(errors="replace").strip() if data else ""
    return int(text) if text.isdigit() else None


def reply(server_key: str, pane_id: str, turn: int) -> bytes | None:
    base = pane_dir(server_key, pane_id)
    return _read(_turn_path(base, turn)) if base is not None else None


def sender(server_key: str, pane_id: str, turn: int) -> str | None:
    base = pane_dir(server_key, pane_id)
    data = _read(_turn_path(base, turn) + ".sent_by") if base is not None else None
    if data is None:
        return None
    return data.decode(errors="replace") or None


def _remove(path: Path | str) -> None:
    import shutil  # only forgetting needs it, not the hook keeping a reply at every turn's end

    shutil.rmtree(path)


def forget_pane(server_key: str, pane_id: str) -> bool:
    base = pane_dir(server_key, pane_id)
    if base is None or not os.path.exists(base):
        return False
    _remove(base)
    return True


def _server_alive(key: str) -> bool:
    """Whether the tmux server with boot key ``<start_time>-<pid>`` is still running."""
    started, _, pid = key.partition("-")
    if not (started.isdigit() and pid.isdigit()):
        return False
    try:
        import psutil

        process = psutil.Process(int(pid))
        same = abs(process.create_time() - int(started)) < 2
        return same and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def forget_gone(server_key: str | None, live: set[str]) -> list[Path]:
    """Remove kept replies of panes that no longer exist (and of servers that stopped)."""
    root = paths.record_dir()
    if root is None or not root.exists():
        return []
    removed = []
    for server_dir in root.iterdir():
        if not server_dir.is_dir() or server_dir.name == "events":
            continue
        other = server_dir.name != server_key
        if other and _server_alive(server_dir.name):
            continue  # another socket's server is still running: its panes are not ours to judge
        for pane in server_dir.iterdir():
            if other or f"%{pane.name}" not in live:
                _remove(pane)
                removed.append(pane)
        if not any(server_dir.iterdir()):
            server_dir.rmdir()
    return removed


def forget_all() -> None:
    root = paths.record_dir()
    if root is None or not root.exists():
        return
    for child in root.iterdir():
        if child.is_dir() and child.name != "events":
            _remove(child)
