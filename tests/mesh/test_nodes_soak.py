"""The soak of the swarm as a short run (issue 34, part 4): ten real daemons in namespaces for
eighty seconds, sessions changing on every node, links cut and healed at random (the first
cut longer than a follower's silence, so a peer is found ``unreachable``), one node
restarted and one revoked, client streams dropped and resumed from ``?since=``; then no
change lost, duplicated or invented on any node's stream, every partition healed, every
union the owners' own rosters, and no daemon's memory or descriptors growing
(:mod:`tests.mesh.soak` states each rule; ``bench/swarm_soak.py`` is the half-hour run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mesh.soak import Settings, Soak
from tests.nodes import Network

SHORT = Settings(
    nodes=10,
    seconds=80.0,
    cut_every=9.0,
    long_cut=(13.0, 16.0),
    short_cut=(1.0, 4.0),
    restart_at=0.25,
    restart_down=4.0,
    revoke_at=0.5,
    drop_every=12.0,
    sample_every=3.0,
    converge_within=90.0,
    rss_margin=0.25,
    rss_floor=16.0,
    fd_margin=16.0,
)
"""Every ingredient of the long run, in a minute and a half of changes: the margins of the
memory rule are wider, as a daemon's first minutes are still its warm-up."""


@pytest.mark.alone  # bounds on time (a heal, convergence), and ten daemons busy two cores
@pytest.mark.timeout(480)
def test_ten_nodes_lose_no_change_through_cuts_a_restart_and_a_revocation(
    network: Network, tmp_path: Path
) -> None:
    report = Soak(network, tmp_path, SHORT, progress=print).run()
    print(report.text())
    assert not report.failures, report.text()
