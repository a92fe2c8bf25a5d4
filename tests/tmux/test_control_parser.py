"""The control-mode parser on recorded tmux 3.3a byte streams: no tmux needed.

The stream below is what ``tmux -C attach-session`` wrote on these machines, with reply lines
added that look like notifications and guards; every test feeds it the way a pipe may
deliver it, split anywhere.
"""

from __future__ import annotations

import pytest

from roost.pane.tmux.control import Parser, notification
from roost.pane.tmux.notifications import (
    ClientDetached,
    ClientSessionChanged,
    Continue,
    Exit,
    LayoutChange,
    Output,
    PaneModeChanged,
    Pause,
    Reply,
    SessionChanged,
    SessionRenamed,
    SessionsChanged,
    SessionWindowChanged,
    SubscriptionChanged,
    Unknown,
    UnlinkedWindowAdd,
    UnlinkedWindowClose,
    UnlinkedWindowRenamed,
    WindowAdd,
    WindowClose,
    WindowPaneChanged,
    WindowRenamed,
    layout_panes,
    unescape,
)

# Attach, a few commands (one whose output looks like notifications, one tmux rejects), pane
# output with escapes and raw UTF-8, structure notices, then the session closing.
RECORDED = (
    b"%begin 1795967261 268 0\n"
    b"%end 1795967261 268 0\n"
    b"%session-changed $0 one\n"
    b"%begin 1795967261 274 1\n"
    b"@0 %0 %output x\n"
    b"%sessions-changed\n"
    b"%end 1795967261 273 1\n"
    b"%begin 1795967261 999 1\n"
    b"%end 1795967261 274 1\n"
    b"%begin 1795967261 278 1\n"
    b"parse error: unknown command: bogus-cmd\n"
    b"%error 1795967261 278 1\n"
    b"%output %0 echo hello\\134\\134 \xc3\xa9\\015\\012\n"
    b"%extended-output %0 12 : a : b\\033[1m\n"
    b"%window-renamed @0 my window\n"
    b"%window-add @2\n"
    b"%layout-change @2 c19e,80x24,0,0[80x12,0,0,2,80x11,0,13,3] c19e,80x24,0,0[80x12,0,0,2,80x11,0,13,3] *\n"
    b"%unlinked-window-add @3\n"
    b"%session-renamed $2 thr ee\n"
    b"%unlinked-window-close @2\n"
    b"%pause %0\n"
    b"%continue %0\n"
    b"%sessions-changed\n"
    b"%exit\n"
)


def expected() -> list[object]:
    return [
        Reply(1795967261, 268, 0, True, ()),
        SessionChanged("$0", "one"),
        Reply(
            1795967261,
            274,
            1,
            True,
            (b"@0 %0 %output x", b"%sessions-changed", b"%end 1795967261 273 1", b"%begin 1795967261 999 1"),
        ),
        Reply(1795967261, 278, 1, False, (b"parse error: unknown command: bogus-cmd",)),
        Output("%0", b"echo hello\\134\\134 \xc3\xa9\\015\\012"),
        Output("%0", b"a : b\\033[1m", 12),
        WindowRenamed("@0", "my window"),
        WindowAdd("@2"),
        LayoutChange(
            "@2",
            "c19e,80x24,0,0[80x12,0,0,2,80x11,0,13,3]",
            "c19e,80x24,0,0[80x12,0,0,2,80x11,0,13,3]",
            "*",
        ),
        UnlinkedWindowAdd("@3"),
        SessionRenamed("$2", "thr ee"),
        UnlinkedWindowClose("@2"),
        Pause("%0"),
        Continue("%0"),
        SessionsChanged(),
        Exit(None),
    ]


def test_recorded_stream_in_one_read() -> None:
    parser = Parser()
    assert parser.feed(RECORDED) + parser.finish() == expected()


def test_split_at_every_byte_boundary() -> None:
    for cut in range(len(RECORDED) + 1):
        parser = Parser()
        got = parser.feed(RECORDED[:cut]) + parser.feed(RECORDED[cut:]) + parser.finish()
        assert got == expected(), f"split at byte {cut}"


def test_one_byte_at_a_time() -> None:
    parser = Parser()
    got = [item for i in range(len(RECORDED)) for item in parser.feed(RECORDED[i : i + 1])]
    assert got + parser.finish() == expected()


def test_output_unescapes_octal_to_raw_bytes() -> None:
    [plain, extended] = [item for item in Parser().feed(RECORDED) if isinstance(item, Output)]
    assert plain.data == b"echo hello\\\\ \xc3\xa9\r\n"
    assert plain.data.decode() == "echo hello\\\\ é\r\n"
    assert plain.age_ms is None
    assert extended.data == b"a : b\x1b[1m"
    assert extended.age_ms == 12


@pytest.mark.parametrize(
    ("escaped", "raw"),
    [
        (b"plain", b"plain"),
        (b"\\000\\001\\037", b"\x00\x01\x1f"),
        (b"\\134", b"\\"),
        (b"\\134015", b"\\015"),
        (b"\\033]0;title\\007", b"\x1b]0;title\x07"),
        (b"\xe2\x9c\x85 done", "✅ done".encode()),
        (b"\xff\xfe not utf-8", b"\xff\xfe not utf-8"),
        (b"trailing \\", b"trailing \\"),
        (b"\\9xx", b"\\9xx"),
    ],
)
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")  # the stray backslash
def test_unescape(escaped: bytes, raw: bytes) -> None:
    assert unescape(escaped) == raw


def test_every_byte_value_round_trips() -> None:
    raw = bytes(range(256))
    escaped = b"".join(b"\\%03o" % b if b < 0x20 or b == 0x5C else bytes([b]) for b in raw)
    [out] = Parser().feed(b"%output %7 " + escaped + b"\n")
    assert isinstance(out, Output)
    assert out.pane == "%7"
    assert out.data == raw


def test_error_reply_and_its_text() -> None:
    [reply] = Parser().feed(b"%begin 1 5 1\ncan't find pane: %99\n%error 1 5 1\n")
    assert isinstance(reply, Reply)
    assert not reply.ok
    assert reply.ours
    assert reply.text == "can't find pane: %99"


def test_reply_of_a_hook_is_not_ours() -> None:
    [reply] = Parser().feed(b"%begin 1 310 0\n%end 1 310 0\n")
    assert isinstance(reply, Reply)
    assert not reply.ours


def test_block_ends_only_at_its_own_guard() -> None:
    stream = (
        b"%begin 7 40 1\n"
        b"%output %1 not output\n"
        b"%exit\n"
        b"%end 8 40 1\n"
        b"%error 7 41 1\n"
        b"%end 7 40\n"
        b"\n"
        b"%end 7 40 1\n"
        b"%window-add @1\n"
    )
    items = Parser().feed(stream)
    assert items == [
        Reply(
            7,
            40,
            1,
            True,
            (b"%output %1 not output", b"%exit", b"%end 8 40 1", b"%error 7 41 1", b"%end 7 40", b""),
        ),
        WindowAdd("@1"),
    ]


def test_reply_lines_keep_raw_bytes() -> None:
    [reply] = Parser().feed(b"%begin 1 2 1\n\x1b[31mred\x1b[0m \xc3\xa9\n%end 1 2 1\n")
    assert isinstance(reply, Reply)
    assert reply.lines == (b"\x1b[31mred\x1b[0m \xc3\xa9",)
    assert reply.text == "\x1b[31mred\x1b[0m é"


@pytest.mark.parametrize(
    ("line", "item"),
    [
        (b"%window-close @4", WindowClose("@4")),
        (b"%unlinked-window-renamed @5 a b", UnlinkedWindowRenamed("@5", "a b")),
        (b"%window-pane-changed @1 %3", WindowPaneChanged("@1", "%3")),
        (b"%session-changed $3 name with spaces", SessionChanged("$3", "name with spaces")),
        (b"%session-renamed plain", SessionRenamed(None, "plain")),
        (b"%session-window-changed $1 @2", SessionWindowChanged("$1", "@2")),
        (b"%pane-mode-changed %2", PaneModeChanged("%2")),
        (b"%client-session-changed /dev/pts/3 $1 main", ClientSessionChanged("/dev/pts/3", "$1", "main")),
        (b"%client-detached client-123", ClientDetached("client-123")),
        (b"%exit too far behind", Exit("too far behind")),
        (b"%exit", Exit(None)),
        (
            b"%subscription-changed busy $1 @2 1 %3 : a : b",
            SubscriptionChanged("busy", "$1", "@2", "1", "%3", "a : b"),
        ),
        (b"%subscription-changed s $1 - - - : ", SubscriptionChanged("s", "$1", "-", "-", "-", "")),
        (b"%layout-change @1 b25f,80x24,0,0,2", LayoutChange("@1", "b25f,80x24,0,0,2", "", "")),
    ],
)
def test_notifications(line: bytes, item: object) -> None:
    assert notification(line) == item


@pytest.mark.parametrize(
    "line",
    [
        b"%future-notice 1 2",
        b"%window-add",
        b"%window-pane-changed @1",
        b"%extended-output %1 5 no separator",
        b"%extended-output %1 old : x",
        b"%output %1",
        b"not a notification",
        b"%begin 1 2",
    ],
)
def test_unknown_or_malformed_lines_are_kept(line: bytes) -> None:
    assert notification(line) == Unknown(line)
    assert Parser().feed(line + b"\n") == [Unknown(line)]


def test_malformed_begin_is_not_a_block() -> None:
    assert Parser().feed(b"%begin x y z\n%window-add @1\n") == [Unknown(b"%begin x y z"), WindowAdd("@1")]


def test_finish_parses_a_last_line_without_newline() -> None:
    parser = Parser()
    assert parser.feed(b"%sessions-changed\n%exit") == [SessionsChanged()]
    assert parser.finish() == [Exit(None)]
    assert parser.finish() == []


def test_finish_drops_an_unterminated_reply() -> None:
    parser = Parser()
    assert parser.feed(b"%begin 1 2 1\npartial\n") == []
    assert parser.finish() == []
    assert parser.feed(b"%window-add @1\n") == [WindowAdd("@1")]


def test_layout_panes() -> None:
    assert layout_panes("b25f,80x24,0,0,2") == ["%2"]
    assert layout_panes("c19e,80x24,0,0[80x12,0,0,2,80x11,0,13,3]") == ["%2", "%3"]
    nested = (
        "d1a4,159x40,0,0{79x40,0,0,10,79x40,80,0[79x20,80,0,11,79x19,80,21{39x19,80,21,12,39x19,120,21,13}]}"
    )
    assert layout_panes(nested) == ["%10", "%11", "%12", "%13"]
    assert LayoutChange("@1", nested, nested, "*").panes == ["%10", "%11", "%12", "%13"]
