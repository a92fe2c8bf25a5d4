"""The symbols agents draw, as the web terminal shows them in Debian's Chromium.

Claude Code's ``⏵⏵ auto mode on`` and its ``⎿`` under a tool call are in no font a plain Debian
has, so Chromium drew each as an empty box. The page serves the glyphs itself
(``static/vendor/symbols``): the test prints them in a real pane, opens its terminal at a
desktop's and at a phone's size, and judges each glyph drawn in the terminal's own fonts
against a code point no font has (U+0378): the same pixels mean an empty box.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.conftest import Web
from tests.web.test_browser import wait_screen
from tests.web.test_phone import card, phone, printer

pytestmark = pytest.mark.browser

GLYPHS = ("⏵", "⎿", "⏺", "⏸")
MISSING = "\u0378"
"""Unassigned: no font has it, so it is drawn as the fonts' empty box."""

DRAWN = """async ([family, glyphs, missing]) => {
    await document.fonts.ready;
    const canvas = document.createElement("canvas");
    canvas.width = canvas.height = 40;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    const pixels = (text) => {
        context.clearRect(0, 0, 40, 40);
        context.font = `28px ${family}`;
        context.fillStyle = "#fff";
        context.fillText(text, 4, 32);
        return Array.from(context.getImageData(0, 0, 40, 40).data).join(",");
    };
    const box = pixels(missing);
    const blank = pixels(" ");
    return Object.fromEntries(glyphs.map((glyph) => {
        const drawn = pixels(glyph);
        return [glyph, drawn !== box && drawn !== blank];
    }));
}"""


def terminal_font(page: Any, pane: str) -> str:
    return str(page.evaluate("pane => window.roost.open.get(pane).view.term.options.fontFamily", pane))


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_claudes_symbols_are_drawn_not_boxes(page: Any, web: Web, size: str) -> None:
    roost = web.roost
    pane = roost.start(printer("⏺ Bash(npm test)", "  ⎿  Done", "⏵⏵ auto mode on", "⏸ manual mode on"))
    roost.wait_screen(pane, "auto mode on")
    if size == "phone":
        phone(page, web)
        page.click(card(pane))
    else:
        page.goto(web.new_link())
        page.click(f'li.session[data-pane="{pane}"]')
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"] .xterm-rows')
    lines = wait_screen(
        page, pane, lambda lines: any("⏵⏵ auto mode on" in line for line in lines), "the footer"
    )
    assert any("⎿  Done" in line for line in lines), lines
    family = terminal_font(page, pane)
    drawn = page.evaluate(DRAWN, [family, list(GLYPHS), MISSING])
    assert drawn == dict.fromkeys(GLYPHS, True), (family, drawn)
    # the terminal's own text asked for the served glyphs (fetched only when one is shown)
    loaded = page.evaluate(
        "[...document.fonts].filter((f) => f.family.includes('Roost Symbols'))"
        ".filter((f) => f.status === 'loaded').length"
    )
    assert loaded >= 2, loaded
