"""The view's frame queue on its own: a reader that falls behind loses output, never a size or the end."""

from __future__ import annotations

from roost.pane.tmux.view import MAX_SIZE, Bytes, Closed, FrameQueue, Reset, Size, check


def test_output_past_the_backlog_is_dropped_and_the_reader_is_behind() -> None:
    queue = FrameQueue(backlog=10)
    assert not queue.push(Bytes(b"12345"))
    assert not queue.push(Size(80, 24))
    assert queue.push(Bytes(b"1234567"))
    assert queue.behind
    assert queue.drain() == [Size(80, 24)]


def test_a_repaint_ends_being_behind_and_drops_what_it_shows() -> None:
    queue = FrameQueue(backlog=10)
    queue.push(Bytes(b"x" * 11))
    queue.push(Closed("gone"))
    queue.start_over(Reset(80, 24, b"screen"))
    assert not queue.behind
    assert queue.drain() == [Closed("gone"), Reset(80, 24, b"screen")]


def test_sizes_are_checked_and_bounded() -> None:
    assert check(80, 24) == (80, 24)
    for cols, rows in ((0, 24), (80, 0), (MAX_SIZE + 1, 24)):
        try:
            check(cols, rows)
        except ValueError:
            continue
        raise AssertionError(f"{cols}x{rows} accepted")
