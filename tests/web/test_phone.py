"""The phone: the card deck, a terminal full screen with its key row, and installing the app.

Plain HTTP for ``GET /terminals/{pane}/tail``, the manifest and the service worker; Chromium
at a phone's viewport (390x844) for the rest, against a real daemon and tmux. The key row is
proven by the bytes the fake agent logged, not by what the page thinks it sent.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.web.conftest import Web
from tests.web.test_browser import wait_screen

PHONE = {"width": 390, "height": 844}
SHELL = ("/static/app.js", "/static/style.css", "/static/vendor/xterm/xterm.mjs", "/manifest.webmanifest")


def card(pane: str) -> str:
    return f'.card[data-pane="{pane}"]'


def printer(*lines: str) -> str:
    """A shell command that prints ``lines`` (a blank line between) and then waits."""
    text = "\n\n".join(lines)
    return f"sh -c {shlex.quote(f'printf {shlex.quote(text + chr(10))}; exec cat')}"


def tail(web: Web, pane: str, query: str = "") -> Any:
    with web.client() as client:
        return client.get(f"/terminals/{quote(pane, safe='')}/tail{query}", headers=web.cookie_header())


def test_the_tail_is_the_last_non_blank_lines(web: Web) -> None:
    roost = web.roost
    pane = roost.start(printer("one", "two   ", "three", "four"))
    roost.wait_screen(pane, "four")
    response = tail(web, pane)
    assert response.status_code == 200, response.text
    assert response.json() == {"pane": pane, "lines": ["two", "three", "four"]}
    assert tail(web, pane, "?lines=1").json()["lines"] == ["four"]
    assert tail(web, pane, "?lines=20").json()["lines"] == ["one", "two", "three", "four"]


def test_a_bad_tail_request_is_refused(web: Web) -> None:
    roost = web.roost
    pane = roost.start()
    for query in ("?lines=0", "?lines=21", "?lines=abc", "?lines=-1", "?lines="):
        response = tail(web, pane, query)
        assert response.status_code == 400, (query, response.text)
        assert "lines" in response.json()["error"]
    assert tail(web, "main").status_code == 400
    gone = tail(web, "%9999")
    assert gone.status_code == 404
    assert gone.json()["error"] == "no terminal %9999"
    with web.client() as client:
        assert client.get(f"/terminals/{quote(pane, safe='')}/tail").status_code == 401


def test_the_manifest_and_the_service_worker_are_served_to_anyone(web: Web) -> None:
    with web.client() as client:
        manifest = client.get("/manifest.webmanifest")
        worker = client.get("/sw.js")
        doc = manifest.json()
        icons = {icon["src"]: client.get(icon["src"]) for icon in doc["icons"]}
    assert manifest.status_code == 200
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    assert doc["name"] == "Roost"
    assert doc["display"] == "standalone"
    assert doc["start_url"] == "/"
    assert any(icon["sizes"] == "192x192" and icon["type"] == "image/png" for icon in doc["icons"])
    for src, response in icons.items():
        assert response.status_code == 200, src
        assert response.headers["content-type"].startswith("image/"), src
    assert icons["/static/icon-192.png"].content.startswith(b"\x89PNG")
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["service-worker-allowed"] == "/"
    assert "no-cache" in worker.headers["cache-control"]
    assert "caches.open" in worker.text


def test_the_page_links_the_manifest(web: Web) -> None:
    with web.client() as client:
        page = client.get("/", headers=web.cookie_header())
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page.text


def phone(page: Any, web: Web) -> None:
    page.set_viewport_size(PHONE)
    page.goto(web.new_link())
    page.wait_for_selector(".card")


@pytest.mark.browser
def test_cards_show_badges_and_last_lines(page: Any, web: Web) -> None:
    roost = web.roost
    pane = roost.start(printer("compiling", "tests passed", "ready for you"))
    shell = roost.window("plain", "sh")
    roost.wait_screen(pane, "ready for you")
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    assert roost.run("state", "working", env=inside).returncode == 0
    phone(page, web)
    page.wait_for_selector(f'{card(pane)} .badge[data-state="working"]')
    assert page.locator("#sidebar").is_hidden()
    assert page.locator("#deck").is_visible()
    assert page.locator(f"{card(pane)} .badge").inner_text() == "working"
    assert page.locator(f"{card(shell)} .badge").is_hidden()  # a plain shell is unmarked
    page.wait_for_selector(f"{card(pane)} .tail:has-text('ready for you')")
    assert page.locator(f"{card(pane)} .tail").inner_text().splitlines() == [
        "compiling",
        "tests passed",
        "ready for you",
    ]
    rollup = page.locator(f'{card(pane)} >> xpath=ancestor::section[1]//span[@class="rollup"]')
    assert rollup.inner_text() == "1 working"
    assert roost.run("state", "blocked", env=inside).returncode == 0
    page.wait_for_selector(f'{card(pane)} .badge[data-state="blocked"]', timeout=5000)
    assert page.locator(f"{card(pane)} .badge").inner_text() == "needs input"
    roost.tmux("send-keys", "-t", shell, "echo fresh-line-$((2+3))", "Enter")
    page.wait_for_selector(f"{card(shell)} .tail:has-text('fresh-line-5')", timeout=15000)


@pytest.fixture
def phone_page(chromium: Any, web: Web) -> Any:
    """Like ``page``, but closed before ``web`` stops its tmux server: a deck in view reads its
    cards' last lines, and a read after the server is gone is a 404 the page reports."""
    context = chromium.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    tolerated = ("401 (Unauthorized)",)
    unexpected = [error for error in errors if not any(mark in error for mark in tolerated)]
    context.close()
    assert not unexpected, f"the page reported errors: {unexpected}"


@pytest.mark.browser
def test_a_card_opens_its_terminal_and_the_key_row_sends_bytes(
    phone_page: Any, web: Web, tmp_path: Path
) -> None:
    page = phone_page
    roost = web.roost
    log = tmp_path / "keys.log"
    pane = roost.start(roost.fake_agent("--no-hooks", "--log", str(log)))
    phone(page, web)
    page.click(card(pane))
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"] .xterm-rows')
    wait_screen(page, pane, lambda lines: any(line.strip() for line in lines), "the first paint")
    assert page.locator("#deck").is_hidden()
    assert page.locator("#keys").is_visible()
    box = page.locator(f'.view[data-pane="{pane}"]').bounding_box()
    assert box["width"] > PHONE["width"] - 20  # full screen, not beside a sidebar
    page.click('#keys [data-key="Esc"]')
    page.click('#keys [data-key="Tab"]')
    page.click('#keys [data-key="Ctrl"]')
    assert page.locator('#keys [data-key="Ctrl"]').get_attribute("aria-pressed") == "true"
    page.keyboard.type("a")  # sticky Ctrl: the next typed key is ctrl-a
    assert page.locator('#keys [data-key="Ctrl"]').get_attribute("aria-pressed") == "false"
    page.click('#keys [data-key="Up"]')
    page.click('#keys [data-key="Ctrl-C"]')
    expected = b"\x1b\t\x01\x1b[A\x03"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (not log.exists() or log.read_bytes() != expected):
        time.sleep(0.05)
    assert log.read_bytes() == expected
    # ^C ended the fake agent, so its pane closed: the terminal list's stream drops it before
    # the deck comes back, and the deck asks no tail of a pane that is gone.
    page.wait_for_function("pane => !window.roost.roster.terminals.has(pane)", arg=pane)
    page.click("#back")
    page.wait_for_selector("#deck", state="visible")
    assert page.locator("#keys").is_hidden()
    assert page.locator(card(pane)).count() == 0


@pytest.mark.browser
def test_the_service_worker_registers_and_keeps_the_shell(page: Any, web: Web) -> None:
    web.roost.start()
    phone(page, web)
    script = page.evaluate("navigator.serviceWorker.ready.then((r) => r.active.scriptURL)")
    assert script == f"{web.origin}/sw.js"
    scope = page.evaluate("navigator.serviceWorker.getRegistration().then((r) => r.scope)")
    assert scope == f"{web.origin}/"
    kept = page.evaluate(
        "caches.open('roost-shell-v1').then((c) => c.keys())"
        ".then((keys) => keys.map((k) => new URL(k.url).pathname))"
    )
    for path in SHELL:
        assert path in kept


@pytest.mark.browser
def test_an_agents_card_previews_its_last_reply_not_its_footer(phone_page: Any, web: Web) -> None:
    page = phone_page
    roost = web.roost
    roost.env["XDG_RUNTIME_DIR"] = str(web.daemon.runtime)  # the pane's hooks find the daemon
    reply = "Looked at the tests.\nAll 12 pass.\nNothing is left to do."
    agent = roost.fake_agent(
        "--start-hook", "--footer", "⏵⏵ auto mode on (shift+tab to cycle)", "--reply", reply
    )
    pane = roost.start(f"ROOST_AGENT=claude exec {agent}")
    shell = roost.window("plain", printer("built in 3s"))
    roost.wait_screen(pane, "auto mode on")
    roost.tmux("send-keys", "-t", pane, "are the tests green?", "Enter")
    web.daemon.wait_for(
        lambda: web.daemon.record_where(
            lambda r: (r.get("tmux") or {}).get("pane") == pane and r.get("recap") == reply
        ),
        what="the kept reply",
    )
    assert "auto mode on" in roost.screen(pane).strip().splitlines()[-1]  # the screen ends in the footer
    phone(page, web)
    page.wait_for_selector(f"{card(pane)} .tail:has-text('Nothing is left to do.')")
    assert page.locator(f"{card(pane)} .tail").inner_text().splitlines() == reply.splitlines()
    page.wait_for_selector(f"{card(shell)} .tail:has-text('built in 3s')")  # a shell shows its screen


HEADER = ("╭────────────────────────╮", "│ ✻ Welcome to the agent │", "╰────────────────────────╯")


@pytest.mark.browser
@pytest.mark.parametrize("width", [1200, 390, 360, 320])
def test_a_request_never_covers_the_terminals_first_lines_and_every_key_shows_whole(
    phone_page: Any, web: Web, width: int
) -> None:
    page = phone_page
    roost = web.roost
    pane = roost.start(printer(*HEADER))
    roost.wait_screen(pane, "Welcome")
    inside = {"TMUX": f"{roost.socket},1,0", "TMUX_PANE": pane}
    assert roost.run("state", "blocked", "Bash: rm -rf build && npm run build", env=inside).returncode == 0
    page.set_viewport_size({"width": width, "height": 760})
    page.goto(web.new_link())
    opener = f"{card(pane)} .name" if width < 700 else f'li.session[data-pane="{pane}"] .name'
    page.click(opener)
    view = f'.view[data-pane="{pane}"]'
    page.wait_for_selector(f"{view}[data-state='open'] .xterm-rows")
    page.wait_for_selector(f"{view} .request-bar .request")
    wait_screen(page, pane, lambda lines: lines[0].startswith("╭"), "the header on the first row")
    bar = page.locator(f"{view} .request-bar .request").bounding_box()
    rows = page.locator(f"{view} .xterm-rows").bounding_box()
    assert bar is not None and rows is not None
    assert bar["y"] + bar["height"] <= rows["y"] + 1, (bar, rows)  # above the terminal, not over it
    if width < 700:
        keys = page.locator("#keys .key")
        assert keys.count() == 9
        for index in range(keys.count()):
            key = keys.nth(index).bounding_box()
            assert key is not None and key["x"] >= 0 and key["x"] + key["width"] <= width, (index, key)
        clipped = page.evaluate(
            "[...document.querySelectorAll('#keys .key')].filter((k) => k.scrollWidth > k.clientWidth)"
            ".map((k) => k.textContent)"
        )
        assert clipped == []
    else:
        assert page.locator("#keys").is_hidden()
    # where the header begins, the terminal itself is on top: nothing covers it
    first = page.evaluate(
        """view => {
            const row = document.querySelector(`${view} .xterm-rows > div`).getBoundingClientRect();
            const hit = document.elementFromPoint(row.left + 4, row.top + row.height / 2);
            return Boolean(hit && hit.closest(".xterm"));
        }""",
        view,
    )
    assert first is True
