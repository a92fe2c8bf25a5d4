"""A session taken in by a handoff is this node's only once the origin was sent the answer; a
daemon killed between opening it and answering drops it at its next start, its holder still
running or not, because the origin, having heard nothing, kept its own copy."""

from __future__ import annotations

import json
import signal

from tests.runner.conftest import Headless, end_holders, headless

__all__ = ["headless"]


def test_a_session_whose_handoff_answer_never_went_out_is_dropped_at_the_next_start(
    headless: Headless,
) -> None:
    headless.daemon.start()
    key = headless.start(name="taken in")["session_key"]
    headless.prompt(key, "the first words", wait="idle")
    holders = headless.holder_pids()
    assert len(holders) == 1
    headless.daemon.stop(signal.SIGKILL)  # its holder goes on, as after any daemon crash
    kept = headless.kept / f"{key.replace(':', '_')}.json"
    entry = json.loads(kept.read_text())
    kept.write_text(json.dumps({**entry, "arrived_from": "0123456789abcdef:1:1", "unconfirmed": True}))
    headless.daemon.start()
    ended = headless.until(key, timeout=15, liveness="ended")
    assert ended["ended_reason"] == "exit"
    headless.daemon.wait_for(lambda: headless.holder_pids() == [], 15, what="the holder to end")
    assert not kept.exists()
    assert "the origin did not get the answer" in headless.daemon.log.read_text()
    end_holders(headless)
