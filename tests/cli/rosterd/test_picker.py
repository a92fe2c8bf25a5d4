"""The setup list's keys, without a terminal: what each does to the list and how it is drawn.
(``test_setup_terminal`` presses the same keys in a real pane.)"""

from __future__ import annotations

from roost.faces.cli.rosterd.picker import Item, Picker, split


def picker() -> Picker:
    return Picker("pick", [Item("a", True, True), Item("b", False), Item("c", True)])


def test_arrows_move_within_the_list_and_space_toggles_only_what_can_be_picked() -> None:
    chooser = picker()
    assert [chooser.press(key) for key in ("\x1b[A", "\x1b[B", " ")] == [None, None, None]
    assert chooser.cursor == 1 and [item.picked for item in chooser.items] == [True, False, False]
    for key in ("j", "\x1bOB", "\x1b[B", " "):
        chooser.press(key)
    assert chooser.cursor == 2 and chooser.items[2].picked
    chooser.press(" ")
    assert not chooser.items[2].picked
    chooser.press("k")
    assert chooser.cursor == 1
    assert (
        chooser.press("\r") == "accept" and chooser.press("\n") == "accept" and chooser.press("q") == "quit"
    )


def test_the_list_draws_a_cursor_boxes_and_cuts_lines_to_the_width() -> None:
    chooser = picker()
    assert chooser.lines(80) == ["pick", "", "> [x] a", "      b", "  [ ] c"]
    assert chooser.lines(4) == ["pic", "", "> [", "   ", "  ["]


def test_bytes_read_at_once_split_into_keys() -> None:
    assert split("\x1b[B\x1b[A j\x1bOBq") == ["\x1b[B", "\x1b[A", " ", "j", "\x1bOB", "q"]
    assert split("\x1b[1;5Cx\x1b") == ["\x1b[1;5C", "x", "\x1b"]
