"""``roost view``: show a person something, in a pane if there is room and a window if not.

stdout is the new ``%N`` alone; the directions go to stderr with the live prefix; focus never
moves; a second view under the same name replaces the first and touches nothing else.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.roost.test_windows import AWKWARD, argv_recorder, fmt, inside, only_id, panes, recorded_argv
from tests.conftest import Roost

WIDE = {"ROOST_VIEW_MIN_COLS": "40"}
NARROW = {"ROOST_VIEW_MIN_COLS": "99999"}


def caller_pane(roost: Roost) -> str:
    return roost.start("sh", window="agent")


def alive(roost: Roost, pane: str) -> bool:
    return pane in panes(roost)


def test_view_splits_beside_a_wide_caller(roost: Roost) -> None:
    caller = caller_pane(roost)
    proc = roost.run("view", "sleep", "600", env={**inside(roost, caller), **WIDE})
    pane = only_id(proc)
    assert fmt(roost, pane, "#{window_id}") == fmt(roost, caller, "#{window_id}")
    assert int(fmt(roost, pane, "#{pane_left}")) > int(fmt(roost, caller, "#{pane_left}"))
    assert fmt(roost, caller, "#{pane_active}") == "1"
    assert roost.option(pane, "@roost-name") == "view"
    assert roost.option(pane, "@roost-view") == "1"
    assert roost.option(caller, "@roost-name") == ""
    assert proc.stderr == (
        f"roost view: open in the pane to the right ({pane}).\n"
        "roost view: press ctrl-s then l to go there; ctrl-s then h comes back.\n"
    )


def test_view_opens_a_window_for_a_narrow_caller(roost: Roost) -> None:
    caller = caller_pane(roost)
    proc = roost.run("view", "-n", "plan", "sleep", "600", env={**inside(roost, caller), **NARROW})
    pane = only_id(proc)
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "main plan"
    assert fmt(roost, pane, "#{window_id}") != fmt(roost, caller, "#{window_id}")
    assert fmt(roost, caller, "#{window_active}") == "1"
    assert roost.option(pane, "@roost-name") == "plan"
    assert roost.option(pane, "@roost-view") == "1"
    index = fmt(roost, pane, "#{window_index}")
    assert proc.stderr == (
        f"roost view: open in window {index} ({pane}).\n"
        f"roost view: press ctrl-s then {index} to go there; ctrl-s then 1 comes back.\n"
    )


def test_view_runs_the_arguments_it_was_handed(roost: Roost, tmp_path: Path) -> None:
    """Whatever it is handed is what runs: a file name with a space stays one argument."""
    caller = caller_pane(roost)
    subject = tmp_path / "my file"
    subject.write_text("the plan: ship it\n")
    pane = only_id(roost.run("view", "-n", "v", "less", str(subject), env={**inside(roost, caller), **WIDE}))
    roost.wait_screen(pane, "the plan: ship it")
    for width in (WIDE, NARROW):
        out = tmp_path / f"argv-{width['ROOST_VIEW_MIN_COLS']}"
        only_id(roost.run("view", *argv_recorder(out), *AWKWARD, env={**inside(roost, caller), **width}))
        assert recorded_argv(roost, out) == AWKWARD


def test_a_view_whose_command_ends_at_once_is_not_claimed(roost: Roost, tmp_path: Path) -> None:
    """A view that closed before anyone saw it prints no %N and no directions to it."""
    caller = caller_pane(roost)
    for width in (WIDE, NARROW):
        proc = roost.run("view", "less", str(tmp_path / "not there"), env={**inside(roost, caller), **width})
        assert (proc.returncode, proc.stdout) == (2, "")
        assert proc.stderr.startswith("roost view: the command ended at once, so its view (%")
        assert proc.stderr.count("\n") == 1, proc.stderr
    assert panes(roost) == [caller]


def test_the_default_threshold_is_180_columns(roost: Roost) -> None:
    caller = caller_pane(roost)
    roost.tmux("resize-window", "-t", caller, "-x", "179", "-y", "40")
    narrow = only_id(roost.run("view", "-n", "a", "sleep", "600", env=inside(roost, caller)))
    assert fmt(roost, narrow, "#{window_id}") != fmt(roost, caller, "#{window_id}")
    roost.tmux("resize-window", "-t", caller, "-x", "180", "-y", "40")
    wide = only_id(roost.run("view", "-n", "b", "sleep", "600", env=inside(roost, caller)))
    assert fmt(roost, wide, "#{window_id}") == fmt(roost, caller, "#{window_id}")


def test_a_second_view_replaces_the_first_measuring_width_after_the_kill(roost: Roost) -> None:
    caller = caller_pane(roost)
    # 200 wide: the first view halves the caller to ~100, below the 180 default. Only a width
    # read after the old view is gone still splits on the second call.
    roost.tmux("resize-window", "-t", caller, "-x", "200", "-y", "40")
    first = only_id(roost.run("view", "sleep", "600", env=inside(roost, caller)))
    second = only_id(roost.run("view", "sleep", "600", env=inside(roost, caller)))
    assert not alive(roost, first)
    assert fmt(roost, second, "#{window_id}") == fmt(roost, caller, "#{window_id}")
    assert fmt(roost, caller, "#{window_panes}") == "2"
    named = roost.tmux("list-panes", "-a", "-F", "#{@roost-name}").split()
    assert named.count("view") == 1


def test_a_view_replaces_its_window_and_windows_do_not_pile_up(roost: Roost) -> None:
    caller = caller_pane(roost)
    first = only_id(roost.run("view", "sleep", "600", env={**inside(roost, caller), **NARROW}))
    windows = roost.tmux("list-windows", "-a").count("\n")
    second = only_id(roost.run("view", "sleep", "600", env={**inside(roost, caller), **NARROW}))
    assert not alive(roost, first)
    assert alive(roost, second)
    assert roost.tmux("list-windows", "-a").count("\n") == windows


def test_replacing_leaves_other_names_and_human_panes_alone(roost: Roost) -> None:
    caller = caller_pane(roost)
    env = {**inside(roost, caller), **NARROW}
    human = roost.window("mine", "sleep 600")
    # A pane split -n gave the same name is a helper, not a view: it is never replaced.
    helper = only_id(roost.run("split", "-t", human, "-n", "view", "sleep", "600"))
    other = only_id(roost.run("view", "-n", "diff", "sleep", "600", env=env))
    first = only_id(roost.run("view", "sleep", "600", env=env))
    second = only_id(roost.run("view", "sleep", "600", env=env))
    assert not alive(roost, first)
    for pane in (caller, human, helper, other, second):
        assert alive(roost, pane), pane
    again = only_id(roost.run("view", "-n", "diff", "sleep", "600", env=env))
    assert not alive(roost, other)
    assert alive(roost, again)
    assert alive(roost, second)


def test_a_view_is_replaced_anywhere_on_the_server(roost: Roost) -> None:
    caller = caller_pane(roost)
    elsewhere = roost.start("sh", session="other")
    old = only_id(roost.run("view", "-n", "log", "sleep", "600", env={**inside(roost, elsewhere), **WIDE}))
    new = only_id(roost.run("view", "-n", "log", "sleep", "600", env={**inside(roost, caller), **WIDE}))
    assert not alive(roost, old)
    assert fmt(roost, new, "#{session_name}") == "main"


def test_directions_use_the_live_prefix(roost: Roost) -> None:
    caller = caller_pane(roost)
    env = {**inside(roost, caller), **WIDE}
    roost.tmux("set-option", "-g", "prefix", "C-a")
    proc = roost.run("view", "sleep", "600", env=env)
    assert "press ctrl-a then l to go there; ctrl-a then h comes back." in proc.stderr
    roost.tmux("set-option", "-g", "prefix", "M-x")
    proc = roost.run("view", "sleep", "600", env=env)
    assert "press M-x then l to go there; M-x then h comes back." in proc.stderr


def test_directions_follow_rebound_pane_keys(roost: Roost) -> None:
    caller = caller_pane(roost)
    roost.tmux("unbind-key", "-T", "prefix", "l", ";", "unbind-key", "-T", "prefix", "h")
    proc = roost.run("view", "sleep", "600", env={**inside(roost, caller), **WIDE})
    assert "press ctrl-s then Right to go there; ctrl-s then Left comes back." in proc.stderr


def test_directions_fall_back_to_the_switcher(roost: Roost) -> None:
    """With no key for the view's window, the switcher's key is named; roost binds it with a
    format of its own, and it is found all the same."""
    caller = caller_pane(roost)
    roost.tmux("unbind-key", "-T", "prefix", "2")
    proc = roost.run("view", "sleep", "600", env={**inside(roost, caller), **NARROW})
    index = fmt(roost, only_id(proc), "#{window_index}")
    assert index == "2"
    assert "press ctrl-s then w and pick window 2 to go there." in proc.stderr


def test_view_outside_roost_opens_a_window_in_main(roost: Roost) -> None:
    home = roost.start("sh", window="home")
    proc = roost.run("view", "-n", "logs", "sleep", "600")
    pane = only_id(proc)
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "main logs"
    assert fmt(roost, home, "#{window_active}") == "1"
    index = fmt(roost, pane, "#{window_index}")
    assert f"open in window {index} of session main ({pane})." in proc.stderr
    assert f"ctrl-s then {index} to go there" in proc.stderr


def test_view_with_no_server_starts_main(roost: Roost) -> None:
    pane = only_id(roost.run("view", "sleep", "600"))
    assert fmt(roost, pane, "#{session_name} #{window_name}") == "main view"
    assert roost.option(pane, "@roost-view") == "1"


def test_view_usage_errors(roost: Roost) -> None:
    caller = caller_pane(roost)
    env = inside(roost, caller)
    for args, extra in (
        ((), {}),
        (("-n", "x"), {}),
        (("-n",), {}),
        (("-n", "", "sleep", "600"), {}),
        (("-n", "a\nb", "sleep", "600"), {}),
        (("-x", "sleep", "600"), {}),
        (("sleep", "600"), {"ROOST_VIEW_MIN_COLS": "wide"}),
    ):
        proc = roost.run("view", *args, env={**env, **extra})
        assert proc.returncode == 1, args
        assert proc.stderr.startswith("usage: roost view"), proc.stderr
        assert proc.stdout == ""
    assert panes(roost) == [caller]
