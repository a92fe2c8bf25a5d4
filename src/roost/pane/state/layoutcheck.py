"""The checks a layout record passes before ``roost restore`` acts on any of it.

A record is roost's own file, but it is read back after a crash, a reboot or a person's edit,
so every value is checked for what it is used as: a session or window name tmux is given, a
directory a pane starts in, a command line, environment variables. The first problem found is
returned as one sentence naming where it is; nothing is acted on until the whole file passes.
Written by hand with plain ``isinstance`` checks: the CLI never loads pydantic.
"""

from __future__ import annotations

import re

NAME = re.compile(r"[^\x00-\x1f\x7f:.]{1,200}")
"""A session name tmux keeps as given: one line, no ``:`` or ``.`` (they separate a target)."""
WINDOW_NAME = re.compile(r"[^\x00-\x1f\x7f]{0,200}")
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
HARNESS = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
SERVER = re.compile(r"\d{1,20}-\d{1,10}")
MAX_TEXT = 4096
MAX_ARGS = 256


def check(document: object) -> str | None:
    """Why ``document`` is not a layout record roost can restore; None when it is one."""
    from roost.pane.state.layout import LIMITS, SCHEMA

    if not isinstance(document, dict):
        return "not a JSON object"
    if document.get("schema") != SCHEMA:
        return f"schema must be {SCHEMA}"
    if not isinstance(document.get("server"), str) or not SERVER.fullmatch(document["server"]):
        return "server must be START-PID"
    if not _text(document.get("socket")):
        return "socket must be a string"
    restored = document.get("restored")
    if restored is not None and not isinstance(restored, dict):
        return "restored must be an object"
    sessions = document.get("sessions")
    if not isinstance(sessions, list) or not sessions:
        return "sessions must be a non-empty list"
    counts = {"sessions": len(sessions), "windows": 0, "panes": 0}
    seen: set[str] = set()
    for s, session in enumerate(sessions):
        where = f"sessions[{s}]"
        if not isinstance(session, dict) or not isinstance(session.get("name"), str):
            return f"{where} must be an object with a name"
        if not NAME.fullmatch(session["name"]) or session["name"] in seen:
            return f"{where}.name must be one line of 1 to 200 characters without : or ., and unique"
        seen.add(session["name"])
        windows = session.get("windows")
        if not isinstance(windows, list) or not windows:
            return f"{where}.windows must be a non-empty list"
        counts["windows"] += len(windows)
        for w, window in enumerate(windows):
            problem = _window(window, f"{where}.windows[{w}]")
            if problem:
                return problem
            counts["panes"] += len(window["panes"])
    for what, most in LIMITS.items():
        if counts[what] > most:
            return f"more than {most} {what}"
    return None


def _window(window: object, where: str) -> str | None:
    if not isinstance(window, dict):
        return f"{where} must be an object"
    if not _count(window.get("index")):
        return f"{where}.index must be a whole number"
    if not isinstance(window.get("name"), str) or not WINDOW_NAME.fullmatch(window["name"]):
        return f"{where}.name must be one line of at most 200 characters"
    if not isinstance(window.get("named"), bool) or not isinstance(window.get("active"), bool):
        return f"{where}.named and .active must be true or false"
    if not isinstance(window.get("layout"), str) or len(window["layout"]) > MAX_TEXT:
        return f"{where}.layout must be a string"
    for size in ("width", "height"):
        if window.get(size) is not None and not (_count(window[size]) and 1 <= window[size] <= 10000):
            return f"{where}.{size} must be a whole number from 1 to 10000"
    panes = window.get("panes")
    if not isinstance(panes, list) or not panes:
        return f"{where}.panes must be a non-empty list"
    for p, pane in enumerate(panes):
        problem = _pane(pane, f"{where}.panes[{p}]")
        if problem:
            return problem
    return None


def _pane(pane: object, where: str) -> str | None:
    if not isinstance(pane, dict):
        return f"{where} must be an object"
    if not _count(pane.get("index")) or not isinstance(pane.get("active"), bool):
        return f"{where}.index must be a whole number and .active true or false"
    for field in ("name", "branch"):
        if pane.get(field) is not None and not (
            isinstance(pane[field], str) and WINDOW_NAME.fullmatch(pane[field])
        ):
            return f"{where}.{field} must be one line of at most 200 characters, or null"
    for field in ("command", "running"):
        if pane.get(field) is not None and not _text(pane[field]):
            return f"{where}.{field} must be a string without NUL, or null"
    for field in ("cwd", "worktree"):
        if pane.get(field) is not None and not _path(pane[field]):
            return f"{where}.{field} must be an absolute path or null"
    agent = pane.get("agent")
    if agent is None:
        return None
    return _agent(agent, f"{where}.agent")


def _agent(agent: object, where: str) -> str | None:
    if not isinstance(agent, dict):
        return f"{where} must be an object or null"
    if not isinstance(agent.get("harness"), str) or not HARNESS.fullmatch(agent["harness"]):
        return f"{where}.harness must be an agent's name"
    if not isinstance(agent.get("session_id"), str) or not SESSION_ID.fullmatch(agent["session_id"]):
        return f"{where}.session_id must be letters, digits, . _ : - (at most 128)"
    argv = agent.get("argv")
    if argv is not None and not (
        isinstance(argv, list) and 0 < len(argv) <= MAX_ARGS and all(_text(arg) for arg in argv)
    ):
        return f"{where}.argv must be a non-empty list of strings or null"
    env = agent.get("env")
    if not isinstance(env, dict) or not all(
        isinstance(name, str) and VARIABLE.fullmatch(name) and _text(value) for name, value in env.items()
    ):
        return f"{where}.env must map variable names to strings"
    if agent.get("cwd") is not None and not _path(agent["cwd"]):
        return f"{where}.cwd must be an absolute path or null"
    return None


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 100000


def _text(value: object) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT and "\x00" not in value


def _path(value: object) -> bool:
    return _text(value) and value.startswith("/")  # type: ignore[union-attr]
