"""``rosterd setup`` on a terminal: a real ``rosterd setup`` in a pane of a throwaway tmux server,
driven by the keys a person presses (tmux ``send-keys``), read off the pane's screen."""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path

from tests.cli.rosterd.sandbox import Machine, machine
from tests.conftest import Roost

__all__ = ["machine"]

TITLE = "rosterd setup: ↑/↓ move, space picks, enter runs the picked fixes, q quits"


def start(roost: Roost, machine: Machine, session: str) -> str:
    """``rosterd setup`` in a new pane, in ``machine``'s environment; the pane."""
    script = machine.root / f"{session}.sh"
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in machine.env.items())
    script.write_text(f'{exports}rosterd setup; echo "setup exited $?"; exec sleep 600\n')
    pane = roost.start(f"sh {shlex.quote(str(script))}", session=session)
    roost.wait_screen(pane, TITLE)
    # Room for every line setup prints after the list, unwrapped. tmux gives the pane its new
    # size a moment later; a key that changes nothing (space on a row that is done) draws the
    # list again, at whatever width the pane has by then.
    roost.tmux("resize-window", "-t", pane, "-x", "220", "-y", "60")

    def wide() -> bool:
        press(roost, pane, "Space")
        time.sleep(0.1)
        return len(roost.screen(pane).splitlines()[2]) > 80

    roost.wait_for(wide, what="the list drawn 220 wide")
    return pane


def listed(roost: Roost, pane: str) -> dict[str, tuple[bool, str]]:
    """The list on screen: {row: (under the cursor, box)}; box is ``[x]``, ``[ ]`` or blank."""
    found = {}
    for text in roost.screen(pane).splitlines():
        match = re.match(r"([> ]) (\[x\]|\[ \]|   ) (\S+(?: hooks| gate| adapter)?) ", text)
        if match:
            found[match[3]] = (match[1] == ">", match[2].strip())
    return found


def cursor(roost: Roost, pane: str) -> str:
    return next(name for name, (here, _) in listed(roost, pane).items() if here)


def press(roost: Roost, pane: str, *keys: str) -> None:
    roost.tmux("send-keys", "-t", pane, *keys)


def test_arrows_move_space_picks_and_enter_runs_the_picked_fixes(roost: Roost, machine: Machine) -> None:
    machine.program("claude")
    machine.program("codex")
    pane = start(roost, machine, "setup")
    rows = listed(roost, pane)
    assert cursor(roost, pane) == "commands"
    assert {name: box for name, (_, box) in rows.items()} == {
        "commands": "",  # done
        "config": "[x]",
        "service": "",  # no service manager here
        "claude": "",
        "claude hooks": "[x]",
        "claude gate": "[x]",  # optional, but picked at the first set-up of claude's hooks
        "claude adapter": "[ ]",
        "codex": "",
        "codex hooks": "[x]",
        "codex adapter": "[ ]",
        "gemini": "",
        "opencode": "",
        "copilot": "",
        "pi": "",
    }
    press(roost, pane, "Down", "Down", "Down", "Down")
    roost.wait_for(lambda: cursor(roost, pane) == "claude hooks", what="the cursor on claude hooks")
    press(roost, pane, "Space")
    roost.wait_for(lambda: listed(roost, pane)["claude hooks"] == (True, "[ ]"), what="claude hooks unpicked")
    press(roost, pane, "Up")
    roost.wait_for(lambda: cursor(roost, pane) == "claude", what="the cursor up on claude")
    press(roost, pane, "Space")  # nothing to pick there
    press(roost, pane, "Down", "Down")
    roost.wait_for(lambda: cursor(roost, pane) == "claude gate", what="the cursor on claude gate")
    press(roost, pane, "Space")
    roost.wait_for(lambda: listed(roost, pane)["claude gate"] == (True, "[ ]"), what="claude gate unpicked")
    press(roost, pane, "Down")
    roost.wait_for(lambda: cursor(roost, pane) == "claude adapter", what="the cursor on claude adapter")
    assert listed(roost, pane)["claude"] == (False, "") and listed(roost, pane)["claude hooks"][1] == "[ ]"
    press(roost, pane, "Enter")
    roost.wait_screen(pane, "setup exited")
    screen = roost.screen(pane)
    assert TITLE not in screen  # the list gave way to what was done
    assert re.search(r"^config +fixed +wrote ", screen, re.M)
    assert re.search(r"^claude hooks +not picked +claude: not installed", screen, re.M)
    assert re.search(r"^codex hooks +fixed +installed codex hooks", screen, re.M)
    assert "not done: claude hooks\nsetup exited 1" in screen
    assert (machine.home / ".codex" / "hooks.json").exists()
    assert not (machine.home / ".claude").exists()


def test_q_quits_and_changes_nothing(roost: Roost, machine: Machine) -> None:
    machine.program("claude")
    pane = start(roost, machine, "quitting")
    press(roost, pane, "Down", "Space", "q")
    roost.wait_screen(pane, "setup exited")
    # claude's hooks are still missing: the exit status says so
    assert "quit: nothing was changed\nsetup exited 1" in roost.screen(pane)
    assert machine.files() == {}
    assert not Path(machine.config).exists()
