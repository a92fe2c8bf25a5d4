"""ACP traffic as claims: what each update says, the recap, the replay, hostile values."""

from __future__ import annotations

from roost.headless.runner.link import replayed
from roost.headless.runner.rebuild import fold
from roost.headless.runner.traffic import Traffic, current_option


def chunk(text: str, message: str | None = None) -> dict:
    update = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {**update, "messageId": message} if message else update


def note(update: dict) -> dict:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": update}}


def test_a_turn_is_active_once_per_kind_then_idle_with_its_final_message_as_recap() -> None:
    traffic = Traffic()
    assert traffic.turn_started().activity == "active"
    said = [traffic.update(chunk("a")), traffic.update(chunk("b"))]
    assert [s and (s.activity, s.event) for s in said] == [("active", "message"), None]
    assert traffic.update({"sessionUpdate": "tool_call", "toolCallId": "t"}).event == "tool_call"
    traffic.update(chunk("Warning: no metadata"))  # an adapter's own note, of no message
    traffic.update(chunk("", "m2"))
    traffic.update(chunk("the answer", "m2"))
    ended = traffic.turn_ended({"stopReason": "end_turn", "usage": {"totalTokens": 8}})
    assert (ended.activity, ended.event) == ("done", "end_turn")
    assert ended.fields["recap"] == "the answer"
    assert ended.fields["usage"] == {"tokens": {"totalTokens": 8}}


def test_without_recap_no_text_is_kept_and_an_error_reads_as_one() -> None:
    traffic = Traffic(recap=False)
    traffic.turn_started()
    traffic.update(chunk("secret"))
    ended = traffic.turn_ended({"error": {"code": -32603, "message": "overloaded\x1b[2J"}})
    assert (ended.activity, ended.event) == ("error", "prompt_failed")
    assert "recap" not in ended.fields
    assert ended.fields["error_reason"] == "overloaded [2J"


def test_a_permission_is_pending_until_answered() -> None:
    traffic = Traffic()
    traffic.turn_started()
    asked = traffic.asked(
        {"toolCallId": "t", "title": "touch x", "_meta": {"claudeCode": {"toolName": "Bash"}}},
        [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
    )
    assert (asked.activity, asked.event) == ("needs_attention", "permission")
    assert asked.fields["pending"]["tool"] == "Bash"
    assert traffic.update(chunk("while asking")) is None  # a chunk does not hide the question
    assert traffic.answered().activity == "active"
    assert traffic.answered() is None


def test_hostile_values_are_made_one_line_and_writable() -> None:
    traffic = Traffic()
    said = traffic.update({"sessionUpdate": "session_info_update", "title": "a\nb\u202e\ud800"})
    assert said.fields["name"] == "a b ?"  # a newline, a bidi override, a lone surrogate
    plan = traffic.update({"sessionUpdate": "plan", "entries": [{"content": "\ud800", "n": float("nan")}]})
    entry = plan.fields["plan"]["entries"][0]
    assert entry["n"] is None
    entry["content"].encode("utf-8")
    deep: dict = {}
    for _ in range(40):
        deep = {"d": deep}
    plan = traffic.update({"sessionUpdate": "plan", "entries": [deep]})
    assert len(str(plan.fields["plan"])) < 400
    assert (
        traffic.update({"sessionUpdate": "plan", "entries": list(range(10_000))}).fields["plan"]["entries"][
            -1
        ]
        == 255
    )


def test_a_replay_that_ended_idle_claims_idle_and_counts_no_turn_live() -> None:
    history = [
        {"jsonrpc": "2.0", "method": "_roost/turn_started", "params": {"turn": 1}},
        note(chunk("one")),
        note({"sessionUpdate": "plan", "entries": [{"content": "x"}]}),
        {"jsonrpc": "2.0", "method": "_roost/turn_ended", "params": {"turn": 1, "stopReason": "end_turn"}},
        note({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),
        "not an object",
        {"method": "session/update", "params": "nonsense"},
    ]
    folded = fold(replayed(Traffic(), history))
    assert (folded.activity, folded.event) == ("done", "end_turn")
    assert folded.fields["recap"] == "one"
    assert folded.fields["mode"] == "plan"
    assert folded.fields["plan"] == {"entries": [{"content": "x"}]}


def test_a_replay_cut_mid_turn_claims_the_turn_running() -> None:
    traffic = Traffic()
    history = [
        {"jsonrpc": "2.0", "method": "_roost/turn_started", "params": {"turn": 3}},
        note(chunk("so far")),
    ]
    folded = fold(replayed(traffic, history))
    assert folded.activity == "active"
    assert traffic.running
    ended = traffic.turn_ended({"stopReason": "end_turn"})
    assert ended.fields["recap"] == "so far"


def test_a_replay_is_claimed_as_of_its_last_activity_as_the_holder_stamped_it() -> None:
    history = [
        {"jsonrpc": "2.0", "method": "_roost/turn_started", "params": {"turn": 1, "at": 100.0}},
        note(chunk("one")),
        {"jsonrpc": "2.0", "method": "_roost/turn_ended", "params": {"turn": 1, "at": 103.5}},
        note({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),  # says no activity
    ]
    assert fold(replayed(Traffic(), history, [100.0, 101.0, 103.0, 104.0]), since=50.0).at == 103.5
    cut = fold(replayed(Traffic(), history[:2], [100.0, 101.0]), since=50.0)
    assert (cut.activity, cut.event, cut.at) == ("active", "message", 101.0)
    # No activity in the replay: the runner's own last word; an older holder's replay has no times.
    assert fold(replayed(Traffic(), history[3:], [104.0]), since=50.0).at == 50.0
    assert fold(replayed(Traffic(), history[:2]), since=50.0).at is None
    assert fold(replayed(Traffic(), history[:2], [1.0]), since=50.0).at is None  # not one per step
    assert fold(replayed(Traffic(), history[:2], ["soon", float("nan")]), since=50.0).at is None


def test_turns_are_counted_so_a_wait_can_tell_whose_recap_the_record_holds() -> None:
    traffic = Traffic()
    traffic.turn_started()
    assert (traffic.turns, traffic.ended) == (1, 0)
    traffic.turn_ended({"stopReason": "end_turn"})
    traffic.turn_started()
    assert (traffic.turns, traffic.ended) == (2, 1)  # the recap is turn 1's while turn 2 runs
    traffic.turn_ended({"stopReason": "cancelled"})
    assert (traffic.turns, traffic.ended) == (2, 2)


def test_mode_and_model_come_from_a_mode_update_or_the_config_options() -> None:
    traffic = Traffic()
    assert traffic.update({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}).fields == {
        "mode": "plan"
    }
    options = [
        {"id": "model", "category": "model", "currentValue": "big"},
        {"id": "mode", "category": "mode", "currentValue": "read-only"},
    ]
    said = traffic.update({"sessionUpdate": "config_option_update", "configOptions": options})
    assert said.fields == {"mode": "read-only", "model": "big"}
    said = traffic.update({"sessionUpdate": "config_option_update", "configOptions": options[:1]})
    assert said.fields == {"model": "big"}
    effort = [{"id": "effort", "category": "thought_level", "currentValue": "high"}]
    assert traffic.update({"sessionUpdate": "config_option_update", "configOptions": effort}) is None
    assert current_option(options, "model") == "big" and current_option(effort, "model") is None
    assert traffic.update({"sessionUpdate": "available_commands_update", "availableCommands": []}) is None
    usage = traffic.update({"sessionUpdate": "usage_update", "used": 5, "size": 10, "cost": {"amount": 0.1}})
    assert usage.fields == {"usage": {"used": 5, "size": 10, "cost": {"amount": 0.1}}}


def test_the_tokens_shown_are_always_the_last_turns_and_absent_when_it_reported_none() -> None:
    """The usage ledger counts ``usage.tokens`` when a turn ends: a turn that reported nothing
    must not show the turn before's again."""
    traffic = Traffic()
    traffic.update({"sessionUpdate": "usage_update", "used": 5, "size": 10})
    traffic.turn_started()
    first = traffic.turn_ended({"stopReason": "end_turn", "usage": {"totalTokens": 8}})
    assert first.fields["usage"] == {"used": 5, "size": 10, "tokens": {"totalTokens": 8}}
    traffic.turn_started()
    second = traffic.turn_ended({"stopReason": "end_turn"})
    assert second.fields["usage"] == {"used": 5, "size": 10}
    traffic.turn_started()
    assert "usage" not in traffic.turn_ended({"stopReason": "end_turn"}).fields  # nothing to take back
    bare = Traffic()
    bare.turn_started()
    bare.turn_ended({"stopReason": "end_turn", "usage": {"totalTokens": 1}})
    bare.turn_started()
    assert bare.turn_ended({"stopReason": "cancelled"}).fields["usage"] is None
