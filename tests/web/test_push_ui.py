"""Settings → Notifications and the service worker's push handler, in Debian's Chromium against
a real daemon and tmux.

Chromium is granted the "notifications" permission per origin. Pushes reach the service worker
through the DevTools protocol (``ServiceWorker.deliverPushMessage``), the way a push service
would hand them over; what the worker showed is read back with ``registration.getNotifications()``.

That read is taken once, after DevTools reported the notification displayed, never in a polling
loop. Chromium's ``getNotifications()`` keeps a stored notification only if the platform already
lists it as displayed or it was stored after the read began, and deletes every other one from its
database (``DoReadAllNotificationDataForServiceWorkerRegistration`` in
content/browser/notifications/platform_notification_context_impl.cc). A read that lands between the
worker storing a notification and the platform displaying it drops it for good, so a polling test
lost the first push about one run in eight. The worker itself never reads its notifications.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest

from tests.fakes.push_service import PushService
from tests.web.conftest import Web
from tests.web.test_notify import set_state

pytestmark = pytest.mark.browser

SHOWN = """() => navigator.serviceWorker.ready
  .then((registration) => registration.getNotifications())
  .then((shown) => shown.map((n) => ({
    title: n.title, body: n.body, tag: n.tag, data: n.data, actions: n.actions.map((a) => a.action),
  })))"""


def row(pane: str) -> str:
    return f'li.session[data-pane="{pane}"]'


def session_of(web: Web, pane: str) -> str:
    """The session key of ``pane``, after ``roost state`` gave it a record."""
    set_state(web, pane, "working")
    record = web.daemon.wait_for(
        lambda: web.daemon.record_where(lambda r: (r.get("tmux") or {}).get("pane") == pane),
        what=f"a record for {pane}",
    )
    return str(record["session_key"])


def request_to(method: str, suffix: str) -> Callable[[Any], bool]:
    return lambda request: bool(request.method == method and request.url.endswith(suffix))


def viewing_status(web: Web, endpoint: str) -> int:
    """What rosterd answers ``POST /push/viewing`` for ``endpoint``: 204 while subscribed, else 404."""
    with web.daemon.unix() as client:
        return client.post("/push/viewing", json={"endpoint": endpoint, "session": None}).status_code


def open_app(page: Any, web: Web, pane: str, notifications: bool = True) -> None:
    """Log in and wait until the service worker controls the page and the settings know
    whether this device is subscribed (until then they may overwrite an endpoint a test sets)."""
    if notifications:
        page.context.grant_permissions(["notifications"], origin=web.origin)
    page.goto(web.new_link())
    page.wait_for_selector(row(pane))
    assert page.evaluate("() => navigator.serviceWorker.ready.then(() => true)")
    page.wait_for_function("() => window.roost.settings.known")


def test_the_settings_panel_turns_the_sound_on_and_off(page: Any, web: Web) -> None:
    pane = web.roost.start()
    open_app(page, web, pane, notifications=False)
    assert page.locator("#settings").is_hidden()
    page.click("#sidebar .open-settings")
    page.wait_for_selector("#settings[open]")
    assert page.locator("#push-enabled").is_visible() and not page.locator("#push-enabled").is_checked()
    assert not page.locator("#notify-sound").is_checked()
    page.check("#notify-sound")
    assert page.evaluate("localStorage.getItem('roost-notify-sound')") == "on"
    page.uncheck("#notify-sound")
    assert page.evaluate("localStorage.getItem('roost-notify-sound')") is None
    page.evaluate("localStorage.setItem('roost-notify-sound', 'on')")
    page.click("#settings-close")
    page.click("#sidebar .open-settings")
    assert page.locator("#notify-sound").is_checked()  # the panel shows what notify.js will read


@pytest.mark.parametrize("viewport", [{"width": 1200, "height": 760}, {"width": 390, "height": 844}])
def test_the_two_settings_read_apart_and_nothing_hidden_shows(
    page: Any, web: Web, viewport: dict[str, int]
) -> None:
    web.roost.start()
    page.set_viewport_size(viewport)
    page.goto(web.new_link())
    page.wait_for_function("() => window.roost.settings.known")
    page.click("#sidebar .open-settings" if viewport["width"] >= 700 else "#deck .open-settings")
    page.wait_for_selector("#settings[open]")
    shown = page.evaluate(
        """() => [...document.querySelectorAll("#settings input, #settings button:not(#settings-close)")]
            .filter((control) => control.checkVisibility())
            .map((control) => (control.closest("label") || control).textContent.trim())"""
    )
    assert shown == ["System notifications on this device", "Beep with this page's pop-ups"]
    first, second = (set(label.lower().split()) for label in shown)
    assert len(first & second) <= 1, shown  # no two labels that read alike
    for about in ("#push-about", "#sound-about"):
        assert page.locator(about).is_visible()


INCOGNITO = "Chrome currently does not support the Push API in incognito mode"


@pytest.fixture
def push_page(chromium: Any) -> Iterator[Any]:
    """Like the ``page`` fixture, but Chromium's own console line refusing the Push API in a
    fresh (incognito) context is expected here: the page's answer to it is what is tested."""
    context = chromium.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    yield page
    # Closing the context cuts the change stream: what it reports then is no fault.
    unexpected = [error for error in errors if not error.startswith(INCOGNITO)]
    context.close()
    assert not unexpected, f"the page reported errors: {unexpected}"


def test_desktop_notifications_subscribe_this_device_or_say_why_not(push_page: Any, web: Web) -> None:
    page = push_page
    pane = web.roost.start()
    open_app(page, web, pane)
    page.click("#sidebar .open-settings")
    page.click("#push-enabled")
    page.wait_for_function("() => document.getElementById('push-status').textContent !== ''", timeout=20000)
    status = page.locator("#push-status").inner_text()
    endpoint = page.evaluate("window.roost.settings.endpoint")
    if endpoint is None:
        # A fresh Chromium context is incognito: it refuses the Push API (and a persistent profile
        # with no network waits on a push service that never answers).
        print(f"push status: {status}")
        assert status.startswith("This browser could not subscribe to push messages:"), status
        assert not page.locator("#push-enabled").is_checked()  # the box says what is so
        return
    assert status == "System notifications are on for this device.", status
    assert viewing_status(web, endpoint) == 204  # rosterd keeps this endpoint
    assert page.locator("#push-enabled").is_checked()
    page.uncheck("#push-enabled")
    page.wait_for_function("() => document.getElementById('push-status').textContent.includes('off')")
    assert viewing_status(web, endpoint) == 404


def pump(cdp: Any, done: Callable[[], bool], seconds: float = 10) -> None:
    """Let DevTools events reach their handlers until ``done()`` holds or ``seconds`` pass: the
    sync API delivers them only while it talks to the browser."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        cdp.send("Runtime.evaluate", {"expression": "1"})
        time.sleep(0.02)


def registration_id(cdp: Any, scope: str) -> str:
    found: dict[str, str] = {}

    def updated(params: dict[str, Any]) -> None:
        for registration in params["registrations"]:
            if registration["scopeURL"] == scope and not registration["isDeleted"]:
                found["id"] = registration["registrationId"]

    cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
    cdp.send("ServiceWorker.enable")
    pump(cdp, lambda: "id" in found)
    assert "id" in found, "no service worker registration for the page"
    return found["id"]


class Displayed:
    """What DevTools' background-service log says the browser displayed, in order.

    Chromium logs "Notification displayed" after handing the notification to the platform, and
    before ``showNotification()`` resolves in the worker: from then on a read keeps it.
    """

    def __init__(self, cdp: Any) -> None:
        self.cdp = cdp
        self.events: list[dict[str, str]] = []
        cdp.on("BackgroundService.backgroundServiceEventReceived", self._received)
        cdp.send("BackgroundService.startObserving", {"service": "notifications"})
        cdp.send("BackgroundService.setRecording", {"shouldRecord": True, "service": "notifications"})

    def _received(self, params: dict[str, Any]) -> None:
        event = params["backgroundServiceEvent"]
        if event["eventName"] == "Notification displayed":
            self.events.append({item["key"]: item["value"] for item in event["eventMetadata"]})

    def wait(self, count: int) -> list[dict[str, str]]:
        """The first ``count`` displayed notifications' title and body, once there are that many."""
        pump(self.cdp, lambda: len(self.events) >= count)
        assert len(self.events) >= count, f"displayed {self.events}, waited for {count}"
        return self.events[:count]


def test_a_push_shows_one_notification_per_session(page: Any, web: Web) -> None:
    pane = web.roost.start()
    key = session_of(web, pane)
    open_app(page, web, pane)
    cdp = page.context.new_cdp_session(page)
    registration = registration_id(cdp, f"{web.origin}/")
    displayed = Displayed(cdp)

    def push(doc: dict[str, Any]) -> None:
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": web.origin, "registrationId": registration, "data": json.dumps(doc)},
        )

    push({"session_key": key, "name": "builder", "state": "needs input", "revision": 3})
    assert displayed.wait(1) == [{"Title": "Roost", "Body": "builder: needs input"}]
    builder = {"title": "Roost", "tag": key, "data": {"key": key, "request": None}, "actions": []}
    assert page.evaluate(SHOWN) == [{**builder, "body": "builder: needs input"}]
    push({"session_key": key, "name": "builder", "state": "done", "revision": 4})
    assert displayed.wait(2)[1] == {"Title": "Roost", "Body": "builder: done"}
    # The same session's tag: the second replaces the first.
    assert page.evaluate(SHOWN) == [{**builder, "body": "builder: done"}]
    push({"session_key": "other-session", "name": "tests", "state": "done", "revision": 1})
    assert displayed.wait(3)[2] == {"Title": "Roost", "Body": "tests: done"}
    assert sorted(n["body"] for n in page.evaluate(SHOWN)) == ["builder: done", "tests: done"]
    push({"session_key": key, "name": "builder", "state": "error", "revision": 5})  # a failed turn
    assert displayed.wait(4)[3] == {"Title": "Roost", "Body": "builder: error"}
    cdp.detach()


def test_a_clicked_notification_opens_its_session_and_marks_it_seen(page: Any, web: Web) -> None:
    pane = web.roost.start()
    key = session_of(web, pane)
    open_app(page, web, pane, notifications=False)
    page.wait_for_function("key => window.roost.roster.records.has(key)", arg=key)
    with page.expect_request(request_to("POST", "/seen")) as seen:
        # What the service worker's notificationclick handler posts to the window it focuses.
        page.evaluate(
            """key => navigator.serviceWorker.dispatchEvent(
                new MessageEvent("message", { data: { type: "open-session", session_key: key } }))""",
            key,
        )
    assert seen.value.url == f"{web.origin}/sessions/{quote(key, safe='')}/seen"
    assert seen.value.response().status == 200
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"]')


def test_clicking_a_notification_in_the_service_worker_opens_its_session(page: Any, web: Web) -> None:
    """The worker's own notificationclick: the notification closes and the open window shows
    the session (the click is synthetic here, so the window may refuse to be focused)."""
    pane = web.roost.start()
    key = session_of(web, pane)
    open_app(page, web, pane)
    page.wait_for_function("key => window.roost.roster.records.has(key)", arg=key)
    worker = next(w for w in page.context.service_workers if w.url == f"{web.origin}/sw.js")
    with page.expect_request(request_to("POST", "/seen")) as seen:
        worker.evaluate(
            """async (key) => {
                await self.registration.showNotification("Roost", { tag: key, data: key });
                const [shown] = await self.registration.getNotifications({ tag: key });
                self.dispatchEvent(new NotificationEvent("notificationclick", { notification: shown }));
            }""",
            key,
        )
    assert seen.value.url == f"{web.origin}/sessions/{quote(key, safe='')}/seen"
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    assert page.evaluate(SHOWN) == []  # the handler closed it before telling the window


def test_a_subscribed_device_tells_rosterd_what_it_views_and_can_unsubscribe(page: Any, web: Web) -> None:
    first = web.roost.start()
    second = web.roost.window("other", "sh")
    keys = {pane: session_of(web, pane) for pane in (first, second)}
    service = PushService(web.daemon.get("/push/vapid-key")["key"])
    try:
        subscription = service.subscription("phone")
        endpoint = subscription["endpoint"]
        with web.daemon.unix() as client:
            assert client.post("/push/subscribe", json=subscription).status_code == 201
        open_app(page, web, first, notifications=False)
        # This device as if its browser had subscribed: the same endpoint rosterd keeps.
        page.evaluate("endpoint => { window.roost.settings.endpoint = endpoint; }", endpoint)
        for pane in (first, second):
            page.wait_for_function("key => window.roost.roster.records.has(key)", arg=keys[pane])
            with page.expect_request(request_to("POST", "/push/viewing")) as told:
                page.click(row(pane))
            assert told.value.post_data_json == {"endpoint": endpoint, "session": keys[pane]}
            assert told.value.response().status == 204
        page.click("#sidebar .open-settings")
        assert page.locator("#push-enabled").is_checked()
        with page.expect_request(request_to("DELETE", "/push/subscribe")) as gone:
            page.uncheck("#push-enabled")
        assert gone.value.post_data_json == {"endpoint": endpoint}
        assert gone.value.response().status == 204
        page.wait_for_selector("#push-enabled:not(:checked)")
        assert viewing_status(web, endpoint) == 404  # rosterd forgot it
    finally:
        service.close()


def test_a_window_opened_for_a_notification_opens_its_session(page: Any, web: Web) -> None:
    pane = web.roost.start()
    key = session_of(web, pane)
    open_app(page, web, pane, notifications=False)
    page.goto(f"{web.origin}/?open={quote(key, safe='')}")
    page.wait_for_selector(f'.tab[data-pane="{pane}"][aria-selected="true"]')
    assert page.url == f"{web.origin}/"  # the address no longer asks, so a reload opens nothing
