"""Each pytest-xdist worker in a network namespace of its own, with only loopback.

``scripts/test`` runs the suite in one loopback-only network namespace, which its workers
would otherwise share. A swarm test makes a bridge and veth links in it (``tests.nodes``),
and Chromium watches the addresses of the namespace it runs in: a browser test on another
worker saw each of them come and go as a network change and failed its requests in flight
with ``net::ERR_NETWORK_CHANGED``. One namespace per worker keeps what one worker's tests do to
the network out of every other worker's sight (and their loopback ports apart).

Linux keeps namespaces per thread: ``unshare`` moves the worker's main thread, where its tests
run, and what it starts from then on; xdist's own threads talk to the controller over pipes
and stay where they were. It needs the right to make a namespace (root, as in CI and under
``scripts/test`` run as root); without it, the workers share the namespace they were given.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading

import pytest

CLONE_NEWNET = 0x40000000


def _own_network() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        why = os.strerror(ctypes.get_errno())
        raise pytest.UsageError(f"tests.worker_network: unshare(CLONE_NEWNET): {why}")
    ip = shutil.which("ip") or "/usr/sbin/ip"
    subprocess.run([ip, "link", "set", "lo", "up"], check=True)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") or os.geteuid() != 0:
        return
    if threading.current_thread() is not threading.main_thread():
        raise pytest.UsageError("tests.worker_network: an xdist worker runs its tests off the main thread")
    _own_network()
