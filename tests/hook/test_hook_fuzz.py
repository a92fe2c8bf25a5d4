"""``rosterd-hook`` fed arbitrary bytes and hostile events: it always exits 0 within its 800 ms,
says nothing on stderr, and a stdin that is not an event changes nothing.

The hook runs in every agent's hooks, so whatever a model makes its agent write can reach its
stdin. Each example is one real ``rosterd-hook`` process on a real pane.
"""

from __future__ import annotations

import itertools
import json
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from roost.base.text import control
from tests.conftest import Roost, examples
from tests.hook.test_hook import BOUND, event, hook, pane, settled, state

__all__ = ["pane"]

pytestmark = pytest.mark.alone  # each example is timed against the deadline

EXAMPLES = examples(40)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"]), max_size=10),
    st.sampled_from(["\x1b]0;pwned\x07\x1b[2J", "/tmp/\x1b[31mred", "semi;", "\u202e", "x" * 100_000]),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | HOSTILE_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
EVENTS = st.sampled_from(
    [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Notification",
        "Stop",
        "StopFailure",
        "NoSuchEvent",
    ]
)
HOSTILE_EVENT = st.fixed_dictionaries(
    {"hook_event_name": st.one_of(EVENTS, HOSTILE_TEXT)},
    optional={
        "session_id": st.one_of(HOSTILE_TEXT, JSON),
        "cwd": st.one_of(HOSTILE_TEXT, JSON),
        "notification_type": st.one_of(st.sampled_from(["permission_prompt", "idle_prompt"]), HOSTILE_TEXT),
        "tool_name": st.one_of(HOSTILE_TEXT, JSON),
        "tool_input": JSON,
        "last_assistant_message": st.one_of(HOSTILE_TEXT, JSON),
        "transcript_path": st.one_of(HOSTILE_TEXT, JSON),
        "agent_id": st.one_of(HOSTILE_TEXT, JSON),
        "error": st.one_of(HOSTILE_TEXT, JSON),
    },
)
DIALOG_WITH_ESCAPES = {
    "hook_event_name": "PermissionRequest",
    "tool_name": "Write",
    "tool_input": {"file_path": "/tmp/\x1b[31mred\x1b]0;pwned\x07"},
}
"""Found by this suite: the dialog's reason kept the ESC of the path it named."""
NOT_AN_EVENT = st.one_of(
    st.binary(max_size=4096),
    JSON.filter(lambda value: not isinstance(value, dict)).map(lambda value: json.dumps(value).encode()),
    st.just(b"[" * 100_000),
    st.just(b'{"hook_event_name": "Stop"'),  # cut short
)


def options(roost: Roost, pane: str) -> str:
    return roost.tmux("show-options", "-p", "-t", pane)


def timed(roost: Roost, pane: str, raw: bytes) -> None:
    began = time.monotonic()
    proc = hook(roost, pane, raw=raw, settle=False)
    took = time.monotonic() - began
    assert proc.returncode == 0
    assert took < BOUND, f"took {took:.3f}s"
    assert proc.stderr == b""
    settled(roost)


def test_bytes_that_are_no_event_change_nothing(roost: Roost, pane: str) -> None:
    before = options(roost, pane)

    @SETTINGS
    @given(raw=NOT_AN_EVENT)
    def run(raw: bytes) -> None:
        timed(roost, pane, raw)
        assert options(roost, pane) == before

    run()


def test_hostile_events_are_survived_and_a_real_one_still_lands(roost: Roost, pane: str) -> None:
    made = itertools.count()

    @SETTINGS
    @given(first=HOSTILE_EVENT, then=HOSTILE_EVENT)
    @example(first=DIALOG_WITH_ESCAPES, then={"hook_event_name": "StopFailure", "error": "\x1b[2Jgone"})
    def run(first: dict, then: dict) -> None:
        # A pane of its own per example: a hook handed off on a loaded machine lands late, and
        # must not land on the next example's pane.
        own = roost.window(f"fuzz{next(made)}", "sh")
        for payload in (first, then):
            timed(roost, own, json.dumps(payload).encode())
            # What the badge says is one line of printable text, whatever the event held.
            for name in ("@roost-state", "@roost-reason"):
                value = roost.option(own, name)
                assert control(value) is None, (name, value)

    run()
    hook(roost, pane, event("UserPromptSubmit"))
    assert state(roost, pane) == "working"
    hook(roost, pane, event("Stop", last_assistant_message="still counted"))
    assert state(roost, pane) == "done"
