"""The control client against a real tmux server: output, replies, pauses, endings."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from roost.pane.tmux.controlclient import ControlClient, ControlClosed, Resync, quote
from roost.pane.tmux.notifications import Continue, Output, Pause, Reply
from roost.pane.tmux.server import TmuxError
from tests.conftest import Roost
from tests.tmux.conftest import Recorder, alive, client_sessions, new_session, run, server


def pane_bytes(rec: Recorder, pane: str) -> bytes:
    return b"".join(item.data for item in rec.of(Output) if item.pane == pane)


@pytest.mark.parametrize("pause_after", [None, 2])
def test_pane_output_arrives_as_raw_bytes(roost: Roost, pause_after: int | None) -> None:
    pane = new_session(roost, "w")

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec, pause_after=pause_after) as client:
            assert client.session_name == "w"
            assert client.session_id is not None and client.session_id.startswith("$")
            roost.tmux("send-keys", "-t", pane, r"printf 'caf\303\251 \033[1mbold\134\n'", "Enter")
            want = "café \x1b[1mbold\\\r\n".encode()
            await rec.wait(lambda: want in pane_bytes(rec, pane), what="printf output")
            # %output without pause-after, %extended-output (with an age) with it.
            assert {item.age_ms is None for item in rec.of(Output)} == {pause_after is None}
        assert client.closed

    run(main())


def test_replies_match_commands_in_order_amid_output(roost: Roost) -> None:
    pane = new_session(roost, "w")

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec) as client:
            roost.tmux("send-keys", "-t", pane, "yes | head -c 2000000", "Enter")
            await rec.wait(lambda: b"y\r\ny\r\n" in pane_bytes(rec, pane), what="output flowing")
            before = len(rec.of(Output))
            commands = [client.command("display-message", "-p", f"reply {i}") for i in range(200)]
            replies = await asyncio.gather(*commands)
            assert [reply.text for reply in replies] == [f"reply {i}" for i in range(200)]
            assert all(reply.ok and reply.ours for reply in replies)
            assert len(rec.of(Output)) > before

    run(main())


def test_a_hooks_reply_block_does_not_shift_the_matching(roost: Roost) -> None:
    pane = new_session(roost, "w")
    extra = roost.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", pane, "/bin/sh").strip()

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec) as client:
            theirs = len([r for r in rec.of(Reply) if not r.ours])
            # roost's config runs an after-kill-pane hook in this client's name: a block with flag 0.
            killed, after = await asyncio.gather(
                client.command("kill-pane", "-t", extra), client.command("display-message", "-p", "after")
            )
            assert killed.ok and killed.lines == ()
            assert after.text == "after"
            await rec.wait(lambda: len([r for r in rec.of(Reply) if not r.ours]) > theirs, what="hook block")
            assert (await client.command("display-message", "-p", "still in step")).text == "still in step"

    run(main())


def test_errors_raise_and_leave_the_queue_in_step(roost: Roost) -> None:
    new_session(roost, "w")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            missing, unknown, fine = await asyncio.gather(
                client.command("kill-pane", "-t", "%999"),
                client.command("no-such-command"),
                client.command("display-message", "-p", "fine"),
                return_exceptions=True,
            )
            assert isinstance(missing, TmuxError) and "can't find pane" in str(missing)
            assert isinstance(unknown, TmuxError) and "unknown command" in str(unknown)
            assert isinstance(fine, Reply) and fine.text == "fine"
            with pytest.raises(ValueError):
                await client.command("display-message", "-p", "two\nlines")
            with pytest.raises(ValueError):
                await client.command()
            assert (await client.command("display-message", "-p", "ok")).text == "ok"

    run(main())


def test_commands_sent_together_answer_together_and_stop_at_a_failure(roost: Roost) -> None:
    new_session(roost, "w")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            answers: list[list[Reply] | None] = []
            client.ask_together(
                answers.append, ("display-message", "-p", "one"), ("display-message", "-p", "a ; b")
            )
            # tmux drops the rest of a line after a failed command: only two replies come.
            client.ask_together(
                answers.append,
                ("display-message", "-p", "before"),
                ("kill-pane", "-t", "%999"),
                ("display-message", "-p", "never"),
            )
            assert (await client.command("display-message", "-p", "after")).text == "after"
            first, second = answers
            assert first is not None and [r.text for r in first] == ["one", "a ; b"]
            assert second is not None and [r.ok for r in second] == [True, False]
            assert second[0].text == "before" and "can't find pane" in second[1].text
            with pytest.raises(ValueError):
                client.ask_together(answers.append)
            with pytest.raises(ValueError):
                client.ask_together(answers.append, ("display-message",), ())
        ended: list[list[Reply] | None] = []
        with pytest.raises(ControlClosed):
            client.ask_together(ended.append, ("display-message", "-p", "late"))

    run(main())


@pytest.mark.parametrize(
    "value",
    ["a'b", 'say "hi"', "semi ; colon", "$HOME ~ \\ back\\slash", "{brace} [x]", "%1 #{pane_id}", "ünï ✅"],
)
def test_arguments_reach_tmux_verbatim(roost: Roost, value: str) -> None:
    pane = new_session(roost, "w")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            await client.command("set-option", "-p", "-t", pane, "@roost-test", value)
            shown = await client.command("show-options", "-p", "-v", "-t", pane, "@roost-test")
            assert shown.lines == (value.encode(),)

    run(main())


def test_quote() -> None:
    assert quote("plain") == "'plain'"
    assert quote("it's") == "'it'\\''s'"
    with pytest.raises(ValueError):
        quote("a\nb")


def test_attach_is_read_only_for_size_and_environment(roost: Roost, monkeypatch: pytest.MonkeyPatch) -> None:
    pane = new_session(roost, "w")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/roost-test-leak")

    async def main() -> None:
        async with ControlClient(server(roost), "=w"):
            size = roost.tmux("display-message", "-p", "-t", pane, "#{window_width}x#{window_height}").strip()
            assert size == "120x30"
            flags = roost.tmux("list-clients", "-F", "#{client_flags}")
            assert "ignore-size" in flags and "pause-after=2" in flags
            env = roost.tmux("show-environment", "-t", "=w", check=False)
            assert "roost-test-leak" not in env

    run(main())


def test_attaching_a_missing_session_fails(roost: Roost) -> None:
    new_session(roost, "w")

    async def main() -> None:
        client = ControlClient(server(roost), "=nope")
        with pytest.raises(ControlClosed, match="can't find session"):
            await client.start()
        assert client.closed
        assert not alive(client.pid)

    run(main())


def test_killing_the_session_ends_the_client_cleanly(roost: Roost, caplog: pytest.LogCaptureFixture) -> None:
    new_session(roost, "w")
    new_session(roost, "other")
    caplog.set_level(logging.DEBUG)

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec) as client:
            assert client_sessions(roost) == [client.session_id]
            roost.tmux("kill-session", "-t", "=w")
            assert await asyncio.wait_for(client.wait_closed(), 10) is None
            assert client.closed
            assert not alive(client.pid)
            with pytest.raises(ControlClosed):
                await client.command("display-message", "-p", "x")
        assert client_sessions(roost) == []

    run(main())
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_killing_the_server_ends_the_client(roost: Roost) -> None:
    new_session(roost, "w")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            roost.tmux("kill-server")
            await asyncio.wait_for(client.wait_closed(), 10)
            assert not alive(client.pid)
            with pytest.raises(ControlClosed):
                await client.command("display-message", "-p", "x")

    run(main())


def test_commands_racing_the_end_get_a_reply_or_fail_never_hang(roost: Roost) -> None:
    new_session(roost, "w")
    new_session(roost, "other")

    async def main() -> None:
        async with ControlClient(server(roost), "=w") as client:
            commands = [client.command("kill-session", "-t", "=w")]
            commands += [client.command("display-message", "-p", f"{i}") for i in range(20)]
            results = await asyncio.wait_for(asyncio.gather(*commands, return_exceptions=True), 10)
            assert all(isinstance(result, Reply | ControlClosed) for result in results), results
            await asyncio.wait_for(client.wait_closed(), 10)

    run(main())


def test_a_paused_pane_is_continued_and_resynced(roost: Roost) -> None:
    pane = new_session(roost, "w", "yes")

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec, pause_after=1) as client:
            await rec.wait(lambda: rec.of(Output), what="yes output")
            # tmux pauses a pane for a client that fell pause_after seconds behind; whether a
            # stalled loop gets there depends on timing, so pause it the way tmux does.
            name = roost.tmux("list-clients", "-F", "#{client_name}").strip()
            roost.tmux("refresh-client", "-t", name, "-A", f"{pane}:pause")
            await rec.wait(lambda: Pause(pane) in rec.items, what="%pause")
            await rec.wait(lambda: Continue(pane) in rec.items, what="%continue")
            resync = await rec.wait(lambda: [r for r in rec.of(Resync) if r.pane == pane], what="resync")
            assert resync[0].screen.count(b"y") > 10
            assert rec.items.index(Pause(pane)) < rec.items.index(Continue(pane)) < rec.items.index(resync[0])
            flowing = len(rec.of(Output))
            await rec.wait(lambda: len(rec.of(Output)) > flowing, what="output flowing again")
            roost.tmux("kill-session", "-t", "=w")
            await asyncio.wait_for(client.wait_closed(), 10)

    run(main())


def test_a_stalled_loop_loses_output_not_the_client(roost: Roost) -> None:
    pane = new_session(roost, "w", "yes")

    async def main() -> None:
        rec = Recorder()
        async with ControlClient(server(roost), "=w", rec, pause_after=1) as client:
            await rec.wait(lambda: rec.of(Output), what="yes output")
            time.sleep(2.5)  # A stalled event loop: the reader falls more than a second behind.
            seen = len(rec.of(Output))
            await rec.wait(lambda: len(rec.of(Output)) > seen + 10, what="output after the stall")
            assert (await client.command("display-message", "-p", "alive")).text == "alive"
            # Where tmux did pause the pane, the client resumed it and re-read the screen.
            if Pause(pane) in rec.items:
                await rec.wait(lambda: [r for r in rec.of(Resync) if r.pane == pane], what="resync")
            roost.tmux("kill-session", "-t", "=w")
            await asyncio.wait_for(client.wait_closed(), 10)

    run(main())
