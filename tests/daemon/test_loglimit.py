"""The daemon's HTTP server log: one line per kind per window, and the next says how many were held."""

from __future__ import annotations

import logging

from roost.daemon.loglimit import OnePerWindow


def record(msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.error", logging.INFO, __file__, 1, msg, args, None)


def test_one_line_per_kind_per_window_then_a_count_of_the_rest() -> None:
    now = [0.0]
    limit = OnePerWindow(window=60, clock=lambda: now[0])
    assert limit.filter(record('%s - "WebSocket %s" 403', "a", "/ws"))
    assert not any(limit.filter(record('%s - "WebSocket %s" 403', "b", "/ws")) for _ in range(500))
    assert limit.filter(record("Invalid HTTP request received."))
    now[0] = 61
    later = record('%s - "WebSocket %s" 403', "c", "/ws")
    assert limit.filter(later)
    assert (
        later.getMessage() == 'c - "WebSocket /ws" 403 (500 more like it in the 60 s before were not logged)'
    )
    assert not limit.filter(record('%s - "WebSocket %s" 403', "d", "/ws"))
