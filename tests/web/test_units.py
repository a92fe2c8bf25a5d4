"""The pure parts of the web face: login tokens and cookies, repaint bytes, browser messages."""

from __future__ import annotations

import json

import pytest

from roost.faces.api.logins import OUTSTANDING, Logins, cookie_name
from roost.faces.api.terminal import LIMIT, Closing, Input, Resize, parse
from roost.pane.tmux.server import SEP
from roost.pane.tmux.view import NAMES, PaneState, paint


def state_line(**values: str) -> str:
    base = {name: "0" for name in NAMES}
    base.update(
        pane_id="%3",
        session_id="$1",
        window_id="@2",
        window_panes="1",
        window_width="80",
        window_height="25",
        pane_width="80",
        pane_height="24",
        cursor_flag="1",
        wrap_flag="1",
        scroll_region_lower="23",
        alternate_saved_x="4294967295",
        alternate_saved_y="4294967295",
    )
    base.update(values)
    return SEP.join(base[name] for name in NAMES)


class TestLogins:
    def test_a_token_works_once(self) -> None:
        logins = Logins("secret")
        token = logins.issue()
        assert logins.redeem(token)
        assert not logins.redeem(token)
        assert not logins.redeem("never-issued")

    def test_old_unused_tokens_are_forgotten(self) -> None:
        logins = Logins("secret")
        first = logins.issue()
        rest = [logins.issue() for _ in range(OUTSTANDING)]
        assert not logins.redeem(first)
        assert all(logins.redeem(token) for token in rest)

    def test_a_cookie_is_valid_until_it_expires_and_only_for_its_key(self) -> None:
        now = [1000.0]
        logins = Logins("secret", clock=lambda: now[0], lifetime=60)
        cookie = logins.cookie()
        assert logins.valid(cookie)
        assert Logins("secret", clock=lambda: now[0]).valid(cookie)  # survives a restart
        assert not Logins("another secret", clock=lambda: now[0]).valid(cookie)
        assert not logins.valid(cookie[:-1] + ("0" if cookie[-1] != "0" else "1"))
        body, _, mac = cookie.rpartition(".")
        assert not logins.valid(body.replace(".1060.", ".9999999999.") + "." + mac)
        now[0] = 1061.0
        assert not logins.valid(cookie)
        assert not logins.valid(None)

    def test_cookie_names_are_per_port(self) -> None:
        assert cookie_name(8790) != cookie_name(8791)

    def test_a_link_carries_a_redeemable_token(self) -> None:
        logins = Logins()
        link = logins.link("http://127.0.0.1:9")
        assert link.startswith("http://127.0.0.1:9/login?token=")
        assert logins.redeem(link.partition("token=")[2])


class TestPaint:
    def test_state_is_read_from_one_line(self) -> None:
        state = PaneState.parse(
            state_line(
                cursor_x="4", cursor_y="7", keypad_cursor_flag="1", mouse_sgr_flag="1", history_size="12"
            )
        )
        assert (state.pane, state.session, state.window) == ("%3", "$1", "@2")
        assert state.size == (80, 24) and state.window_size == (80, 25)
        assert state.cursor == (4, 7) and state.history == 12
        assert state.modes == ("keypad_cursor_flag", "mouse_sgr_flag")
        assert state.alternate_saved is None

    def test_a_line_that_is_not_a_state_is_refused(self) -> None:
        with pytest.raises(ValueError):
            PaneState.parse("can't find pane: %9")

    def test_the_normal_screen_is_rows_then_cursor_and_modes(self) -> None:
        state = PaneState.parse(
            state_line(cursor_x="2", cursor_y="1", keypad_cursor_flag="1", cursor_flag="0")
        )
        data = paint(state, [b"old", b"$ ls", b"a  b"])
        assert data == b"old\r\n$ ls\r\na  b\x1b[0m\x1b[?1h\x1b[2;3H\x1b[?25l"

    def test_a_full_screen_program_goes_on_the_alternate_screen(self) -> None:
        state = PaneState.parse(
            state_line(
                alternate_on="1", alternate_saved_x="0", alternate_saved_y="5", scroll_region_lower="10"
            )
        )
        data = paint(state, [b"history", b"$ vim"], [b"~", b"~"])
        normal, _, alternate = data.partition(b"\x1b[?1049h")
        assert normal == b"history\r\n$ vim\x1b[0m\x1b[6;1H"
        assert alternate == b"\x1b[H\x1b[2J~\r\n~\x1b[0m\x1b[1;11r\x1b[1;1H"

    def test_no_wrap_is_restored(self) -> None:
        assert b"\x1b[?7l" in paint(PaneState.parse(state_line(wrap_flag="0")), [b"x"])


class TestMessages:
    def message(self, doc: object) -> dict[str, str]:
        return {"type": "websocket.receive", "text": json.dumps(doc)}

    def test_input_resize_paste_and_binary(self) -> None:
        assert parse(self.message({"type": "input", "data": "é\r"})) == Input("é\r".encode())
        assert parse(self.message({"type": "input", "data": "a\rb", "paste": True})) == Input(b"a\rb", True)
        assert parse(self.message({"type": "input", "data": "\xff", "binary": True})) == Input(b"\xff")
        assert parse(self.message({"type": "resize", "cols": 80, "rows": 24})) == Resize(80, 24)

    def test_a_message_over_the_limit_is_too_big_even_in_bytes(self) -> None:
        wide = "é" * (LIMIT // 2 + 1)  # under the limit in characters, over it in UTF-8 bytes
        with pytest.raises(Closing) as refused:
            parse(self.message({"type": "input", "data": wide}))
        assert refused.value.code == 1009

    @pytest.mark.parametrize(
        "doc", [None, [], "x", {"type": "resize", "cols": 80}, {"type": "resize", "cols": 1.5, "rows": 2}]
    )
    def test_malformed_messages_are_policy_violations(self, doc: object) -> None:
        with pytest.raises(Closing) as refused:
            parse(self.message(doc))
        assert refused.value.code == 1008
