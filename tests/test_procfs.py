"""The one ``/proc`` reader (``roost.base.procfs``): what the kernel says, whatever a process is named."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from roost.base import procfs


def test_this_process_is_read_as_the_kernel_knows_it() -> None:
    stat = procfs.stat("self")
    assert stat is not None and not stat.gone
    assert (stat.ppid, stat.pgrp) == (os.getppid(), os.getpgrp())
    assert stat.start_ticks > 0
    assert os.getpid() in procfs.pids()
    assert procfs.cmdline(os.getpid()) == sys.orig_argv


def test_a_name_with_spaces_and_parentheses_leaves_the_fields_in_place(tmp_path: Path) -> None:
    """The fields are read after the last ``)``, so a name that looks like the line's own
    punctuation changes nothing."""
    odd = tmp_path / "a) (b c)"
    odd.symlink_to("/bin/sleep")
    child = subprocess.Popen([str(odd), "30"])
    try:
        stat = procfs.stat(child.pid)
        assert stat is not None
        assert (stat.name, stat.ppid) == (b"a) (b c)", os.getpid())
        assert child.pid in procfs.children()
    finally:
        child.kill()
        child.wait()


def test_an_ended_process_is_gone_and_a_reaped_one_is_not_there() -> None:
    child = subprocess.Popen(["/bin/true"])
    deadline = time.monotonic() + 10
    while (stat := procfs.stat(child.pid)) is not None and not stat.gone:
        assert time.monotonic() < deadline, "the child never ended"
        time.sleep(0.01)
    assert stat is not None and stat.gone  # a zombie until reaped
    child.wait()
    assert procfs.stat(child.pid) is None
    assert procfs.cmdline(child.pid) == []


def test_the_walk_up_the_tree_starts_at_the_process_and_stops_at_init_or_the_bound() -> None:
    """The one ancestor walk: the hook's agent, a shared process, a claim's ancestry all read it."""
    child = subprocess.Popen(["sleep", "30"])
    try:
        walked = [pid for pid, _ in procfs.lineage(child.pid)]
        assert walked[:2] == [child.pid, os.getpid()]
        assert 1 not in walked and len(walked) == len(set(walked))
        assert [pid for pid, _ in procfs.lineage(child.pid, hops=1)] == [child.pid]
        assert list(procfs.lineage(1)) == []
    finally:
        child.kill()
        child.wait()
    assert list(procfs.lineage(child.pid)) == []  # reaped: nothing to walk
