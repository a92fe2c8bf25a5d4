"""A fake TUI that shows recorded screens and fires Claude Code's hooks when told to.

It reads one command a line from its terminal, with echo off, so nothing typed shows:
``show NAME`` clears the screen and prints Claude Code's recorded screen NAME (``fixture``);
``say TEXT`` clears it and prints TEXT;
``hook EVENT [TOOL COMMAND…]`` runs ``rosterd-hook`` with a Claude-shaped ``EVENT`` payload
(``PermissionRequest`` with a Bash command, ``Notification`` of a type, ``UserPromptSubmit``,
``Stop``), as Claude runs
its hooks: as a child of the agent process, so the hook's claim and the screen's are about
the same session. This is what the daemon's dialog rule needs to be tried on: real recorded
dialogs, opened and closed at chosen moments, under a hook that says blocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import termios
from pathlib import Path

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens" / "claude"
SHORT = {
    "idle": "idle-fresh",
    "working": "working-streaming",
    "done": "done-after-reply",
    "permission": "blocked-shell",
    "declined": "idle-declined",
    "error": "error-api",
    "working-approved-command": "working-command",
}
"""The short names tests give the Claude screens they show most, by the recorded file's name."""
CLEAR = "\033[H\033[2J\033[3J"


def fixture(name: str) -> Path:
    """Claude Code's recorded screen ``name`` (a recorded file's name, or a short one), at
    80x24 where it was recorded at that size too: the size of the panes tests start, where a
    wider screen would wrap into one no rule was written for."""
    stem = SHORT.get(name, name)
    small = SCREENS / f"{stem}-80x24.txt"
    return small if small.exists() else SCREENS / f"{stem}.txt"


def draw(text: str) -> None:
    sys.stdout.write(CLEAR + text.replace("\n", "\r\n"))
    sys.stdout.flush()


def hook(event: str, words: list[str]) -> None:
    payload: dict[str, object] = {
        "hook_event_name": event,
        "session_id": "screen-tui-1",
        "cwd": os.getcwd(),
        "transcript_path": os.path.join(os.getcwd(), "transcript.jsonl"),
    }
    if event == "PermissionRequest":
        payload["tool_name"] = words[0] if words else "Bash"
        payload["tool_input"] = {"command": " ".join(words[1:]) or "touch x"}
    elif event == "Stop":
        payload["last_assistant_message"] = "fake reply"
    elif event == "Notification":
        payload["notification_type"] = words[0] if words else "permission_prompt"
        payload["message"] = "Claude needs your permission to use Bash"
    subprocess.run(["rosterd-hook"], input=json.dumps(payload).encode(), check=False)


def main() -> None:
    fd = sys.stdin.fileno()
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    draw(fixture(sys.argv[1] if len(sys.argv) > 1 else "idle").read_text())
    for line in sys.stdin:
        verb, *words = line.split()
        if verb == "show" and words:
            draw(fixture(words[0]).read_text())
        elif verb == "say":
            draw(" ".join(words) + "\n")
        elif verb == "hook" and words:
            hook(words[0], words[1:])


if __name__ == "__main__":
    main()
