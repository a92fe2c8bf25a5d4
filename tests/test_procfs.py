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
