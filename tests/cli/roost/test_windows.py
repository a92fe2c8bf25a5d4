"""``roost spawn``, ``split`` and the tmux-shaped verbs ``new``, ``kill``, ``ls`` and bare ``roost``.

spawn and split open things on an agent's behalf: stdout is the new ``%N`` and nothing else,
and the person's focus (active window, active pane) never moves.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.conftest import BIN, Roost

PANE_ID = re.compile(r"%\d+\n")
AWKWARD = ["two words", "it's", "$HOME", "a;b", "*"]
"""Arguments a shell would split, expand or end a command at, were they not quoted."""
_RECORD_ARGV = (
    "import json, sys, time; open(sys.argv[1], 'w').write(json.dumps(sys.argv[2:])); time.sleep(600)"
)


def argv_recorder(out: Path) -> list[str]:
    """A command that writes the arguments it was given after ``out`` as JSON into ``out``,
    then stays, so its pane stays open."""
    return [sys.executable, "-c", _RECORD_ARGV, str(out)]


def recorded_argv(roost: Roost, out: Path) -> list[str]:
    roost.wait_for(lambda: out.exists() and out.read_text(), what="the command's arguments")
    return json.loads(out.read_text())


@contextlib.contextmanager
def terminal(roost: Roost, session: str = "main") -> Iterator[tuple[Callable[[], str], Callable[..., None]]]:
    """A person's terminal on ``session``: a client attached from inside a second, private
    tmux server, whose pane shows what that client draws. Yields a reader of that screen and
    a typist of keys at it (through the client, so its key bindings apply)."""
    sockdir = tempfile.mkdtemp(prefix="rt", dir="/tmp")
    outer = ["tmux", "-S", f"{sockdir}/outer.sock", "-f", "/dev/null"]
    attach = f"env -u TMUX TERM=xterm-256color tmux -S {roost.socket} attach-session -t {session}"
    subprocess.run([*outer, "new-session", "-d", "-x", "160", "-y", "30", attach], check=True, env=roost.env)

    def screen() -> str:
        return subprocess.run([*outer, "capture-pane", "-p"], capture_output=True, text=True).stdout

    def keys(*typed: str) -> None:
        subprocess.run([*outer, "send-keys", *typed], check=True)

    try:
        yield screen, keys
    finally:
        subprocess.run([*outer, "kill-server"], capture_output=True, timeout=10)


def inside(roost: Roost, pane: str) -> dict[str, str]:
    """The environment tmux gives a process running in ``pane``."""
    return {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}


def fmt(roost: Roost, target: str, format: str) -> str:
    return roost.tmux("display-message", "-p", "-t", target, format).rstrip("\n")


def panes(roost: Roost) -> list[str]:
    return roost.tmux("list-panes", "-a", "-F", "#{pane_id}").split()


def only_id(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr
    assert PANE_ID.fullmatch(proc.stdout), proc.stdout
    return proc.stdout.strip()


# --- spawn ------------------------------------------------------------------------------------


def test_spawn_with_no_server_starts_main_with_the_named_window(roost: Roost) -> None:
    pane = only_id(roost.run("spawn", "api", "sleep", "600"))
    assert fmt(roost, pane, "#{session_name} #{window_name} #{pane_current_command}") == "main api sh"
    assert roost.option(pane, "@roost-name") == "api"
    assert roost.tmux("list-windows", "-t", "main", "-F", "#{window_name}").split() == ["api"]


def test_spawn_opens_a_window_in_main_without_taking_focus(roost: Roost) -> None:
    first = roost.start("sh", window="home")
    pane = only_id(roost.run("spawn", "api", "sleep", "600"))
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "main api"
    assert fmt(roost, pane, "#{window_id}") != fmt(roost, first, "#{window_id}")
    assert fmt(roost, first, "#{window_active}") == "1"
    assert fmt(roost, pane, "#{window_active}") == "0"
    assert roost.option(pane, "@roost-name") == "api"


def test_spawn_inside_a_pane_opens_in_that_pane_s_session(roost: Roost) -> None:
    roost.start("sh")
    caller = roost.start("sh", session="work")
    pane = only_id(roost.run("spawn", "helper", "sleep", "600", env=inside(roost, caller)))
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "work helper"
    assert fmt(roost, caller, "#{window_active}") == "1"
    assert roost.tmux("list-windows", "-t", "main", "-F", "#{window_name}").count("\n") == 1


def test_spawn_runs_one_word_as_a_shell_command(roost: Roost) -> None:
    roost.start("sh")
    out = roost.root / "ran"
    pane = only_id(roost.run("spawn", "job", f"printf ok > {out}; sleep 600"))
    roost.wait_for(lambda: out.exists() and out.read_text() == "ok", what="the spawned command's output")
    assert roost.option(pane, "@roost-name") == "job"


def test_spawn_split_and_new_run_the_arguments_they_were_handed(roost: Roost) -> None:
    """Several words are a program and its arguments: each stays one argument, as it was."""
    caller = roost.start("sh")
    for verb, args in (
        ("spawn", ["job"]),
        ("split", ["-n", "helper"]),
        ("new", ["-d", "-s", "other"]),
    ):
        out = roost.root / f"{verb}.argv"
        only_id(roost.run(verb, *args, *argv_recorder(out), *AWKWARD, env=inside(roost, caller)))
        assert recorded_argv(roost, out) == AWKWARD, verb


def test_a_name_that_is_not_utf8_is_refused(roost: Roost) -> None:
    """A target names a pane by its name exactly, so a name that could only be kept changed is refused."""
    caller = roost.start("sh")
    for verb, args in (
        ("spawn", ["bad\udcffname", "sleep", "600"]),
        ("split", ["-n", "bad\udcffname", "sleep", "600"]),
        ("view", ["-n", "bad\udcffname", "sleep", "600"]),
        ("new", ["-d", "-s", "bad\udcffname", "sleep 600"]),
        ("new", ["-d", "-n", "bad\udcffname", "sleep 600"]),
    ):
        proc = roost.run(verb, *args, env=inside(roost, caller))
        assert (proc.returncode, proc.stdout) == (1, ""), (verb, args)
        assert proc.stderr.startswith(f"usage: roost {verb}") and "UTF-8" in proc.stderr, proc.stderr
        assert proc.stderr.count("\n") == 1, proc.stderr
    assert panes(roost) == [caller]


def test_spawn_without_a_command_opens_a_shell(roost: Roost) -> None:
    roost.start("sleep 600")
    pane = only_id(roost.run("spawn", "shell"))
    roost.wait_for(lambda: fmt(roost, pane, "#{pane_current_command}") == "sh", what="a shell")


def test_spawn_usage_errors(roost: Roost) -> None:
    for args in ((), ("",), ("-x", "sleep")):
        proc = roost.run("spawn", *args)
        assert proc.returncode == 1, args
        assert proc.stderr.startswith("usage: roost spawn"), proc.stderr
        assert proc.stdout == ""


# --- split ------------------------------------------------------------------------------------


def test_split_opens_beside_the_caller_without_taking_focus(roost: Roost) -> None:
    caller = roost.start("sh")
    roost.tmux("resize-window", "-t", caller, "-x", "120", "-y", "40")
    pane = only_id(roost.run("split", "sleep", "600", env=inside(roost, caller)))
    assert fmt(roost, pane, "#{window_id}") == fmt(roost, caller, "#{window_id}")
    assert int(fmt(roost, pane, "#{pane_left}")) > int(fmt(roost, caller, "#{pane_left}"))
    assert fmt(roost, pane, "#{pane_top}") == fmt(roost, caller, "#{pane_top}")
    assert fmt(roost, caller, "#{pane_active}") == "1"
    assert roost.option(pane, "@roost-name") == ""


def test_split_v_stacks_and_n_names_the_pane(roost: Roost) -> None:
    caller = roost.start("sh")
    pane = only_id(roost.run("split", "-v", "-n", "tests", "sleep", "600", env=inside(roost, caller)))
    assert int(fmt(roost, pane, "#{pane_top}")) > int(fmt(roost, caller, "#{pane_top}"))
    assert fmt(roost, pane, "#{pane_left}") == fmt(roost, caller, "#{pane_left}")
    assert roost.option(pane, "@roost-name") == "tests"
    assert roost.option(caller, "@roost-name") == ""
    assert fmt(roost, caller, "#{pane_active}") == "1"


def test_split_n_labels_the_window_tab_and_the_switcher(roost: Roost) -> None:
    """The label shows wherever the pane's process name would: its border and the status line,
    its window's tab while it is the window's active pane, and each row of the switcher."""
    caller = roost.start("sh")
    pane = only_id(roost.run("split", "-n", "helper", "sleep", "600", env=inside(roost, caller)))
    with terminal(roost) as (screen, keys):
        roost.wait_for(lambda: "[roost main] 1:sh " in screen(), what="the caller's tab")
        roost.tmux("select-pane", "-t", pane)
        roost.wait_for(lambda: "[roost main] 1:helper " in screen(), what="the label in the tab")
        assert "── helper " in screen()  # the border, as before
        keys("C-s", "w")  # the switcher
        roost.wait_for(lambda: "1: helper*" in screen(), what="the switcher's window row")
        keys("Right")  # its window's panes
        roost.wait_for(lambda: "2: helper*" in screen(), what="the switcher's pane row")
        rows = screen()
        assert "1: sh" in rows and "sleep" not in rows
        keys("q")
        roost.tmux("select-pane", "-t", caller)
        roost.wait_for(lambda: "[roost main] 1:sh " in screen(), what="the caller's tab again")
    # A window named on purpose keeps its name in the tab, whichever pane is active.
    named = roost.window("api", "sh")
    labelled = only_id(roost.run("split", "-t", named, "-n", "tests", "sleep", "600"))
    roost.tmux("select-window", "-t", named, ";", "select-pane", "-t", labelled)
    with terminal(roost) as (screen, _):
        roost.wait_for(lambda: "2:api " in screen(), what="the named window's tab")
        assert "2:tests" not in screen()


def test_split_h_puts_the_pane_to_the_right(roost: Roost) -> None:
    caller = roost.start("sh")
    pane = only_id(roost.run("split", "-h", "sleep", "600", env=inside(roost, caller)))
    assert int(fmt(roost, pane, "#{pane_left}")) > int(fmt(roost, caller, "#{pane_left}"))


def test_split_t_splits_the_named_pane_from_outside_roost(roost: Roost) -> None:
    roost.start("sh")
    api = roost.window("api", "sleep 600")
    pane = only_id(roost.run("split", "-t", api, "-n", "log", "sleep", "600"))
    assert fmt(roost, pane, "#{window_id}") == fmt(roost, api, "#{window_id}")
    assert roost.option(pane, "@roost-name") == "log"
    assert fmt(roost, api, "#{pane_active}") == "1"


def test_split_t_window_splits_its_active_pane(roost: Roost) -> None:
    roost.start("sh")
    api = roost.window("api", "sleep 600")
    pane = only_id(roost.run("split", "-t", "api", "sleep", "600"))
    assert fmt(roost, pane, "#{window_id}") == fmt(roost, api, "#{window_id}")
    assert int(fmt(roost, pane, "#{pane_left}")) > int(fmt(roost, api, "#{pane_left}"))


def test_split_outside_roost_without_t_is_a_usage_error(roost: Roost) -> None:
    roost.start("sh")
    before = panes(roost)
    proc = roost.run("split", "sleep", "600")
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost split"), proc.stderr
    assert "-t PANE" in proc.stderr
    assert proc.stdout == ""
    assert panes(roost) == before


def test_split_of_a_missing_pane_is_gone(roost: Roost) -> None:
    roost.start("sh")
    proc = roost.run("split", "-t", "%999", "sleep", "600")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "%999" in proc.stderr


def test_split_usage_errors(roost: Roost) -> None:
    caller = roost.start("sh")
    for args in (("-x",), ("-t",), ("-n",), ("-n", "")):
        proc = roost.run("split", *args, env=inside(roost, caller))
        assert proc.returncode == 1, args
        assert proc.stderr.startswith("usage: roost split"), proc.stderr
    assert panes(roost) == [caller]


# --- new, kill, ls ----------------------------------------------------------------------------


def test_new_prints_the_pane_and_refuses_a_taken_name(roost: Roost) -> None:
    proc = roost.run("new", "-d", "-s", "work", "-n", "api", "sleep 600")
    pane = only_id(proc)
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "work api"
    taken = roost.run("new", "-d", "-s", "work")
    assert taken.returncode == 1
    assert "already exists" in taken.stderr
    assert taken.stdout == ""


def test_new_without_a_name_takes_main_then_a_free_number(roost: Roost) -> None:
    first = only_id(roost.run("new", "-d", "sleep 600"))
    second = only_id(roost.run("new", "-d", "sleep 600"))
    assert fmt(roost, first, "#{session_name}") == "main"
    assert fmt(roost, second, "#{session_name}") == "1"


def test_kill_exit_codes(roost: Roost) -> None:
    no_server = roost.run("kill")
    assert no_server.returncode == 2
    assert "no roost server" in no_server.stderr
    roost.start("sh")
    roost.start("sh", session="work")
    missing = roost.run("kill", "nope")
    assert missing.returncode == 2
    assert "nope" in missing.stderr
    assert roost.run("kill", "work").returncode == 0
    assert roost.tmux("list-sessions", "-F", "#{session_name}").split() == ["main"]
    assert roost.run("kill", "a", "b").returncode == 1
    assert roost.run("kill").returncode == 0
    assert roost.tmux("list-sessions", check=False) == ""


def test_ls_exit_codes(roost: Roost) -> None:
    no_server = roost.run("ls")
    assert no_server.returncode == 2
    assert "no roost server" in no_server.stderr
    roost.start("sh")
    alone = roost.run("ls")
    assert (alone.returncode, alone.stdout) == (0, "main: 1 window\n")
    roost.window("api", "sleep 600")
    listed = roost.run("ls")
    assert listed.returncode == 0
    assert listed.stdout == "main: 2 windows\n"
    assert roost.run("ls", "extra").returncode == 1


# --- bare roost ---------------------------------------------------------------------------------


def test_bare_roost_without_a_terminal_is_a_usage_error_and_starts_nothing(roost: Roost) -> None:
    proc = roost.run()
    assert proc.returncode == 1
    assert proc.stderr.startswith("usage: roost attaches a terminal"), proc.stderr
    assert roost.tmux("list-sessions", check=False) == ""  # no server was started for it
    assert roost.run("attach", "extra").returncode == 1


def test_bare_roost_attaches_to_main_creating_it(roost: Roost) -> None:
    master, slave = os.openpty()
    env = {**roost.env, "TERM": "xterm-256color"}
    client = subprocess.Popen(
        [str(BIN / "roost")], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    os.set_blocking(master, False)

    def drain() -> None:
        """Keep the client's screen output flowing so it never blocks on a full terminal."""
        with contextlib.suppress(OSError):
            os.read(master, 65536)

    def attached() -> bool:
        drain()
        return roost.tmux("list-clients", "-F", "#{client_session}", check=False).split() == ["main"]

    def exited() -> bool:
        drain()
        return client.poll() is not None

    try:
        roost.wait_for(attached, timeout=20, what="a client attached to main")
        roost.tmux("detach-client", "-s", "main")
        roost.wait_for(exited, timeout=20, what="the client to exit after detaching")
        assert client.returncode == 0
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
        os.close(master)
