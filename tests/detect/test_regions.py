"""Cutting a screen into regions: what each region holds, and when a region is absent."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roost.truth.detect import regions
from roost.truth.detect.regions import RegionError, Screen

RULE = "─" * 40
CLAUDE_LIKE = "\n".join(
    [
        " banner line",
        "",
        "❯ an old prompt",
        "● the reply",
        "",
        "✻ Cooked for 4s",
        "      ◐ medium · /effort",
        RULE,
        "❯ half typed",
        RULE,
        "  ? for shortcuts",
        "",
        "",
    ]
)


def test_escapes_are_stripped_and_trailing_blank_rows_dropped() -> None:
    screen = Screen.parse("\x1b[38;5;174mred\x1b[39m text   \n\x1b[1mbold\x1b[0m\n\n\n")
    assert screen.lines == ("red text", "bold")


def test_a_title_and_progress_inside_the_capture_become_the_title_and_progress_regions() -> None:
    raw = "\x1b]0;first\x07\x1b]2;✳ Claude Code\x1b\\\x1b]9;4;3;0\x07hello\n"
    screen = Screen.parse(raw)
    assert screen.lines == ("hello",)
    assert screen.region("title") == "✳ Claude Code"
    assert screen.region("progress") == "indeterminate"


def test_a_title_or_progress_given_wins_over_the_one_in_the_capture() -> None:
    screen = Screen.parse("\x1b]0;inside\x07x", title="given", progress="error 50")
    assert (screen.title, screen.progress) == ("given", "error 50")


def test_no_title_and_no_progress_are_absent_regions_not_empty_ones() -> None:
    screen = Screen.parse("plain")
    assert screen.region("title") is None
    assert screen.region("progress") is None
    assert Screen.parse("x", title="").region("title") == ""


def test_osc_title_ignores_the_icon_name_and_reads_the_last_title() -> None:
    assert regions.osc_title("\x1b]1;icon\x07") is None
    assert regions.osc_title("\x1b]2;a\x07 \x1b]0;b\x07") == "b"


@pytest.mark.parametrize(
    ("raw", "word"),
    [
        ("\x1b]9;4;0;0\x07", "none"),
        ("\x1b]9;4;1;42\x07", "normal 42"),
        ("\x1b]9;4;2;100\x1b\\", "error 100"),
        ("\x1b]9;4;3\x07", "indeterminate"),
        ("\x1b]9;4;4;7\x07", "paused 7"),
        ("\x1b]9;4;1;40\x07 later \x1b]9;4;0\x07", "none"),
        ("no progress here", None),
    ],
)
def test_osc_progress_reads_the_last_osc_9_4(raw: str, word: str | None) -> None:
    assert regions.osc_progress(raw) == word


@pytest.mark.parametrize(
    ("given", "word"),
    [
        ("3", "indeterminate"),
        ("1;40", "normal 40"),
        ("normal 40", "normal 40"),
        ("none", "none"),
        ("2", "error"),
    ],
)
def test_parse_progress_takes_words_or_osc_numbers(given: str, word: str) -> None:
    assert regions.parse_progress(given) == word


@pytest.mark.parametrize("bad", ["", "7", "busy", "1;x", "1 2 3"])
def test_parse_progress_refuses_anything_else(bad: str) -> None:
    with pytest.raises(ValueError, match="progress must be one of"):
        regions.parse_progress(bad)


def test_bottom_and_top_count_non_blank_lines() -> None:
    screen = Screen.parse("a\n\nb\nc\n\n\nd\n")
    assert screen.region("bottom:2") == "c\nd"
    assert screen.region("top:2") == "a\nb"
    assert screen.region("bottom:99") == "a\nb\nc\nd"
    assert screen.region("screen") == "a\n\nb\nc\n\n\nd"


def test_prompt_box_is_between_the_last_two_rules_and_after_rule_below_the_last() -> None:
    screen = Screen.parse(CLAUDE_LIKE)
    assert screen.region("prompt_box") == "❯ half typed"
    assert screen.region("after_rule") == "  ? for shortcuts"
    assert screen.region("above_box:2") == "✻ Cooked for 4s\n      ◐ medium · /effort"


def test_box_top_is_the_prompt_box_s_top_rule_with_its_label() -> None:
    screen = Screen.parse("reply\n── ⠏ Working " + "─" * 20 + "\ndraft\n" + "─" * 30 + "\nfooter")
    assert screen.region("box_top") == "── ⠏ Working " + "─" * 20
    assert screen.region("prompt_box") == "draft"
    assert Screen.parse("no rules here").region("box_top") is None


def test_a_boxed_prompt_loses_its_side_borders() -> None:
    screen = Screen.parse(
        "╭" + "─" * 20 + "╮\n│ > hi there         │\n│                    │\n╰" + "─" * 20 + "╯"
    )
    assert screen.region("prompt_box") == "> hi there\n"


def test_a_rule_may_carry_a_label_in_its_middle() -> None:
    screen = Screen.parse("╭" + "─" * 30 + "╮\n│ ❯ │\n╰" + "─" * 12 + " model · mode ─╯\nhints")
    assert screen.region("prompt_box") == "❯"
    assert screen.region("after_rule") == "hints"


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("─" * 8, True),
        ("  " + "━" * 20 + "  ", True),
        ("╌" * 30, True),
        ("╰" + "─" * 10 + " label ─╯", True),
        ("─" * 7, False),
        ("╭──╮", False),
        ("━" * 10 + " 50%", False),
        ("text ──────────", False),
        ("", False),
    ],
)
def test_what_counts_as_a_horizontal_rule(line: str, rule: bool) -> None:
    assert regions.is_rule(line) is rule


def test_regions_that_need_rules_are_absent_without_them() -> None:
    screen = Screen.parse("no rules\nat all")
    assert screen.region("prompt_box") is None
    assert screen.region("after_rule") is None
    assert screen.region("above_box:3") is None
    one = Screen.parse(f"x\n{RULE}\ny")
    assert one.region("prompt_box") is None
    assert one.region("after_rule") == "y"


@pytest.mark.parametrize("spec", ["bottom", "bottom:0", "bottom:-1", "botom:3", "box", "top:x", "title:2"])
def test_unknown_regions_are_refused_with_the_list_of_known_ones(spec: str) -> None:
    with pytest.raises(RegionError, match=r"unknown region .*regions are screen, prompt_box"):
        regions.check(spec)
    with pytest.raises(RegionError):
        Screen.parse("x").region(spec)


@given(st.text())
def test_parsing_any_text_leaves_no_escape_and_every_region_cuts(text: str) -> None:
    screen = Screen.parse(text)
    assert all("\x1b" not in line for line in screen.lines)
    for spec in ("screen", "bottom:3", "top:3", "prompt_box", "above_box:2", "after_rule"):
        cut = screen.region(spec)
        assert cut is None or "\x1b" not in cut
