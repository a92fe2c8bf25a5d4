"""``rosterd explain KEY [--json]``: which source set each field of a session, and what lost.

The truthfulness view from ``GET /sessions/{KEY}/explain``: winners, shadowed claims, leases,
last sequence per source, refused claims, and each needs_attention that evidence ended (which
source's, why, and when). It names sources, times and events, never a
field's value (values are in ``rosterd read``). KEY resolves as for ``read``.
"""

from __future__ import annotations

import json

from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

TYPE_CHECKING = False  # as in roost.base.paths: importing typing costs every verb ~2 ms
if TYPE_CHECKING:
    from typing import Any

USAGE = (("explain KEY [--json]", "which source set each field, and which claims were refused"),)


def claim(ref: dict[str, Any]) -> str:
    """A claim reference as ``source seq N event E activity A at T``, leaving out what is unset."""
    parts = [str(ref.get("source"))]
    parts += [f"{name} {ref[name]}" for name in ("seq", "event", "activity") if ref.get(name) is not None]
    return " ".join([*parts, f"at {ref.get('received_at')}"])


def lease(held: dict[str, Any]) -> str:
    state = "expired" if held.get("expired") else "expires"
    return f"heard {held.get('heard_at')}, {state} {held.get('expires_at')}"


def sections(view: dict[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(title, [(name, text)]) for each part of the view that has entries."""
    winners = view.get("fields") or {}
    shadowed = view.get("shadowed") or {}
    return [
        ("set by", [(name, claim(origin["claim"])) for name, origin in winners.items()]),
        ("shadowed", [(name, claim(o["claim"])) for name, losers in shadowed.items() for o in losers]),
        ("leases", [(source, lease(held)) for source, held in (view.get("leases") or {}).items()]),
        ("last seq", [(source, str(seq)) for source, seq in (view.get("sequences") or {}).items()]),
        (
            "refused",
            [
                (str(entry.get("field") or "-"), f"{entry.get('reason')} ({claim(entry['claim'])})")
                for entry in view.get("rejected") or []
            ],
        ),
        (
            "overruled",
            [
                (
                    str(entry.get("source")),
                    f"{entry.get('evidence')} ({claim(entry['ended'])}, ended at {entry.get('at')})",
                )
                for entry in view.get("overruled") or []
            ],
        ),
    ]


def describe(view: dict[str, Any]) -> list[str]:
    lines = printing.fields(
        [
            ("session", view.get("session_key")),
            ("occupant", view.get("occupant_id")),
            ("revision", f"{view.get('revision')} (completed {view.get('completed_revision') or '-'})"),
            ("sources", ", ".join(view.get("sources") or []) or "-"),
        ]
    )
    for title, pairs in sections(view):
        if pairs:
            lines.append(f"{title}:")
            lines += ["  " + text for text in printing.fields(pairs)]
    return lines


def run(verb: str, args: list[str]) -> int:
    options = parse(args, "usage: rosterd explain KEY [--json]", flags=("--json",), positional=1)
    with Client() as client:
        body = client.get(path_of("sessions", options.positional[0], "explain"))
    if "--json" in options.flags:
        printing.raw(body)
    else:
        for text in describe(json.loads(body)):
            printing.line(text)
    return 0
