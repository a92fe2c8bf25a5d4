"""The daemon's heap gives freed megabytes back to the system (:mod:`roost.base.heap`).

Each case runs in a Python of its own: an allocator's thresholds are the whole process's, and
the resident size is what is measured. The blocks freed sit between small ones that live on,
as a member set or a union's text sits among records and connections in the daemon.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest

from roost.base import heap

BURST = """
import sys
from roost.base import heap

def resident():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024

if "settle" in sys.argv:
    assert heap.settle()
big = bytearray(8 << 20)
del big  # glibc now serves blocks under 8 MiB from its heap, unless settled
documents, small = [], []
for n in range(300):
    documents.append(bytearray(1 << 20))
    small.append(b"s" * 1024 + bytes([n % 256]))
burst = resident()
del documents
if "give_back" in sys.argv:
    assert heap.give_back()
print(burst, resident())
"""


def burst(*how: str) -> tuple[int, int]:
    """MiB resident with 300 one-megabyte documents held, then with them freed."""
    done = subprocess.run([sys.executable, "-c", BURST, *how], capture_output=True, text=True, check=True)
    held, after = map(int, done.stdout.split())
    return held, after


needs_glibc = pytest.mark.skipif(heap._glibc() is None, reason="glibc's allocator only")


@needs_glibc
def test_without_either_the_freed_megabytes_stay_resident() -> None:
    held, after = burst()
    assert held >= 300 and after >= held - 20  # what the other two cases put right


@needs_glibc
def test_a_settled_heap_gives_each_freed_document_back_as_it_goes() -> None:
    held, after = burst("settle")
    assert held >= 300 and after <= held - 280


@needs_glibc
def test_giving_back_returns_the_free_pages_of_an_unsettled_heap() -> None:
    held, after = burst("give_back")
    assert held >= 300 and after <= held - 280


def test_every_gives_back_on_its_timer_off_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread = threading.get_ident()
    given: list[int] = []
    monkeypatch.setattr(heap, "give_back", lambda: given.append(threading.get_ident()))

    async def two() -> None:
        task = asyncio.create_task(heap.every(0.01))
        while len(given) < 2:
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(asyncio.wait_for(two(), 5))
    assert loop_thread not in given
