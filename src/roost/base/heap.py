"""The daemon's heap as glibc's allocator keeps it: settled at start so large blocks go back to
the system when freed, and trimmed on a timer so what bursts left free in the middle goes back
too.

A swarm's admissions and a page's reads make blocks of a megabyte and more (a member set, a
union of fifty thousand records) and free them at once. glibc serves a block that large by
mapping pages of its own, but each such block freed raises the size it maps from next time, up
to 32 MiB: after the first few, every such document comes from the heap, between small objects
that live on, and its pages stay the process's when it is freed. A daemon at rest among 600
peers so held 1,173 MiB, of which one trim gave 456 MiB back. :func:`settle` fixes the size at which blocks
are mapped; :func:`give_back` hands free pages in the middle of the heap back (``malloc_trim``).

Elsewhere (musl, macOS) there is no such allocator to tell: both do nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools

MMAP_THRESHOLD = 256 * 1024
"""Bytes from which a block gets pages of its own, given back when it is freed: twice glibc's
first threshold, fixed (a request or a record is far below it, a document of many members above)."""
EVERY = 60.0
"""Seconds between trims: a trim walks the whole heap, so it runs off the loop and seldom."""

_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


def settle() -> bool:
    """Fix the size from which blocks are mapped; whether this allocator took it."""
    libc = _glibc()
    return libc is not None and libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1


def give_back() -> bool:
    """Hand the heap's free pages back to the system; whether any were."""
    libc = _glibc()
    return libc is not None and libc.malloc_trim(0) == 1


async def every(seconds: float = EVERY) -> None:
    """:func:`give_back` every ``seconds``, off the loop, until cancelled."""
    while True:
        await asyncio.sleep(seconds)
        await asyncio.to_thread(give_back)
