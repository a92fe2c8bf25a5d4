"""The layout record's checks answer every document with a sentence or None, never an exception:
each value of a good record, replaced by each value of the wrong kind, is tried."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest

from roost.pane.state.layoutcheck import check

GOOD = {
    "schema": 1,
    "socket": "/tmp/s",
    "server": "1796310851-9151",
    "sessions": [
        {
            "name": "main",
            "windows": [
                {
                    "index": 1,
                    "name": "agent",
                    "named": True,
                    "layout": "b25d,80x24,0,0,0",
                    "width": 80,
                    "height": 24,
                    "active": True,
                    "panes": [
                        {
                            "index": 1,
                            "active": True,
                            "name": "agent",
                            "cwd": "/tmp",
                            "command": "claude",
                            "running": "claude",
                            "worktree": None,
                            "branch": None,
                            "agent": {
                                "harness": "claude",
                                "session_id": "0b6e-11",
                                "argv": ["claude", "--model", "m"],
                                "env": {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
                                "cwd": "/tmp",
                            },
                        }
                    ],
                }
            ],
        }
    ],
}
WRONG = [None, True, -1, 10**12, 1.5, "", "x\x00y", "../up", [], [None], {}, {"a": None}]


def _places(value: object, path: tuple = ()) -> Iterator[tuple]:
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, (*path, key))
    elif isinstance(value, list):
        for at, inner in enumerate(value):
            yield from _places(inner, (*path, at))


def _with(path: tuple, replacement: object) -> object:
    if not path:
        return replacement
    doc = copy.deepcopy(GOOD)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = replacement
    return doc


def test_a_good_record_passes() -> None:
    assert check(GOOD) is None


@pytest.mark.parametrize("path", list(_places(GOOD)), ids=lambda path: ".".join(map(str, path)) or "root")
def test_any_value_of_the_wrong_kind_is_a_sentence_never_an_exception(path: tuple) -> None:
    for replacement in WRONG:
        found = check(_with(path, replacement))
        assert found is None or isinstance(found, str)


def test_what_restore_would_act_on_is_refused_when_it_is_not_what_tmux_could_have_said() -> None:
    agent = ("sessions", 0, "windows", 0, "panes", 0, "agent")
    for path, value in [
        (("sessions", 0, "name"), "a:b"),
        ((*agent, "env"), {"LD_PRELOAD=/x.so X": "1"}),
        ((*agent, "argv"), "rm -rf /"),
        ((*agent, "session_id"), "../../etc/passwd"),
        ((*agent, "harness"), "Claude Code"),
        (("sessions", 0, "windows", 0, "panes", 0, "cwd"), "relative/dir"),
        (("sessions", 0, "windows", 0, "width"), 0),
        (("sessions", 0, "windows", 0, "panes", 0, "name"), "two\nlines\x1b[2J"),
    ]:
        assert check(_with(path, value)), path
