"""Soak the swarm: real daemons, sessions changing, links cut and healed, a restart, a revocation.

By default ten daemons, each in its own namespaces (``tests/nodes.py``), for thirty minutes,
with sessions changing on every node, links cut and healed at random, one node restarted and
one revoked along the way (``tests/mesh/soak.py`` drives it and states every rule it checks).
Needs root, and runs itself in a network namespace of its own so nothing leaves the machine.

It prints the changes each owner emitted and each node saw, any lost, duplicated or invented
(each must be 0), the partitions made and healed and the longest time to heal, the restart
and the revocation, and each daemon's RSS and open descriptors from the first quarter of its
run (after warm-up) to the last; it exits 1 when any check fails.

Run: ``sudo .venv/bin/python bench/swarm_soak.py [--nodes 10] [--minutes 30] [--seed 34]
[--change-every 1 3] [--cut-every 45]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import in_namespace
from tests.mesh.soak import Settings, Soak
from tests.nodes import Network


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument(
        "--change-every", type=float, nargs=2, default=(1.0, 3.0), metavar=("LOW", "HIGH"),
        help="seconds between one node's claims, drawn evenly between the two",
    )  # fmt: skip
    parser.add_argument("--cut-every", type=float, default=45.0, help="mean seconds between cuts")
    parser.add_argument("--quiet", action="store_true", help="no line per cut, heal, restart and revocation")
    options = parser.parse_args()
    if os.getuid() != 0:
        sys.exit("bench/swarm_soak.py: needs root (namespaces, veth links and a bridge)")
    settings = Settings(
        nodes=options.nodes,
        seconds=options.minutes * 60,
        seed=options.seed,
        change_every=tuple(options.change_every),
        cut_every=options.cut_every,
    )
    network = Network()
    try:
        with tempfile.TemporaryDirectory(prefix="soak") as root:
            soak = Soak(network, Path(root), settings, progress=None if options.quiet else print)
            report = soak.run()
    finally:
        network.close()
    print(report.text(), flush=True)
    return 1 if report.failures else 0


if __name__ == "__main__":
    in_namespace()
    sys.exit(main())
