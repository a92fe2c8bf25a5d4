"""The registered webhooks on disk: private, whole, bounded, and refused when unsafe or broken."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from roost.base.errors import SetupError, TargetGone, TooMany
from roost.services.notify import destinations, registrations
from roost.services.notify.registrations import MOST, Registrations

TOKEN = "0123456789abcdef0123"


def hook(url: str = "http://127.0.0.1:8000/hook", events: tuple[str, ...] = ()) -> registrations.Webhook:
    return registrations.new(destinations.parse(url), events, TOKEN, 1_700_000_000.5)


def test_webhooks_survive_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "config" / "webhooks.json"
    store = Registrations(path)
    first, second = hook(), hook("https://box.tail1234.ts.net/x", ("attention", "session_ended"))
    store.add(first)
    store.add(second)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    doc = json.loads(path.read_text())
    assert doc["schema"] == "rosterd.webhooks.v1"
    assert [entry["token"] for entry in doc["webhooks"]] == [TOKEN, TOKEN]
    again = Registrations(path)
    assert again.all() == [first, second]
    assert again.all()[1].wants("attention") and not again.all()[1].wants("activity")
    assert again.all()[0].wants("activity")  # no kinds named: every kind


def test_what_is_shown_holds_no_token(tmp_path: Path) -> None:
    shown = hook(events=("attention",)).public()
    assert set(shown) == {"id", "url", "events", "created_at"}
    assert shown["events"] == ["attention"] and shown["created_at"] == "2023-11-14T22:13:20.500Z"
    assert TOKEN not in json.dumps(shown)


def test_removing_one(tmp_path: Path) -> None:
    path = tmp_path / "webhooks.json"
    store = Registrations(path)
    kept, gone = hook(), hook()
    store.add(kept)
    store.add(gone)
    assert store.remove(gone.id) == gone
    assert Registrations(path).all() == [kept]
    with pytest.raises(TargetGone, match="no such webhook"):
        store.remove(gone.id)


def test_at_most_64(tmp_path: Path) -> None:
    path = tmp_path / "webhooks.json"
    store = Registrations(path)
    for _ in range(MOST):
        store.add(hook())
    before = path.read_bytes()
    with pytest.raises(TooMany, match="64 webhooks are registered already; delete one first"):
        store.add(hook())
    assert len(store.all()) == MOST and path.read_bytes() == before


def test_no_file_is_no_webhooks(tmp_path: Path) -> None:
    assert Registrations(tmp_path / "webhooks.json").all() == []
    assert not (tmp_path / "webhooks.json").exists()


def test_a_file_others_can_read_is_refused_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "webhooks.json"
    Registrations(path).add(hook())
    path.chmod(0o640)
    with pytest.raises(SetupError, match=r"is readable by others \(mode 640\); chmod 600 it"):
        Registrations(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def stored(**entry: object) -> str:
    """A file of one webhook: a good entry, but for ``entry``."""
    good = {
        "id": "0123456789abcdef",
        "url": "http://127.0.0.1/",
        "events": [],
        "token": TOKEN,
        "created_at": 1,
    }
    return json.dumps({"schema": "rosterd.webhooks.v1", "webhooks": [{**good, **entry}]})


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ("not json", "Expecting value"),
        ('{"schema": "other", "webhooks": []}', "its schema is not rosterd.webhooks.v1"),
        ('{"schema": "rosterd.webhooks.v1"}', "'webhooks'"),
        ('{"schema": "rosterd.webhooks.v1", "webhooks": [{"id": "x"}]}', "'url'"),
        (stored(id="../../x"), "an id is not 16 hex digits"),
        (stored(url="http://192.168.1.4/"), "url points to 192.168.1.4, which is not on"),
        (stored(events=["bogus"]), "webhook 0123456789abcdef's events are not change kinds"),
        (stored(token="short"), "webhook 0123456789abcdef's token is not a bearer token"),
        (stored(created_at="yesterday"), "webhook 0123456789abcdef's created_at is not a time"),
    ],
)
def test_a_broken_file_is_refused_naming_the_problem(tmp_path: Path, doc: str, why: str) -> None:
    path = tmp_path / "webhooks.json"
    path.write_text(doc)
    path.chmod(0o600)
    with pytest.raises(SetupError) as refused:
        Registrations(path)
    assert refused.value.message.startswith(f"{path} is not a list of webhooks (")
    assert why in refused.value.message and refused.value.message.endswith("; fix or remove it")
    assert TOKEN not in refused.value.message
