"""A daemon's refusal that a session's owner, another node, did not answer is exit 3, as the
contract says for every verb that needs a peer; any other refusal stays exit 1. An ambiguous
name across the swarm lists each candidate, its node in the message."""

from __future__ import annotations

import json

import pytest

from roost.base.errors import PeerUnreachable
from roost.faces.cli.daemonclient import Refused


@pytest.mark.parametrize(
    ("status", "doc", "exit_code"),
    [
        (502, {"error": "100.64.0.2:8791 did not answer: no answer in time", "code": "peer_unreachable"}, 3),
        (502, {"error": "the adapter failed", "code": "adapter_failed"}, 1),
        (409, {"error": "busy", "code": "busy"}, 1),
        (409, {"error": "not_owner", "code": "not_owner"}, 1),
    ],
)
def test_only_an_unreachable_peer_is_exit_3(status: int, doc: dict[str, str], exit_code: int) -> None:
    refused = Refused(status, json.dumps(doc).encode())
    assert (refused.exit_code, refused.status, refused.message) == (exit_code, status, doc["error"])
    assert PeerUnreachable.exit_code == 3


def test_an_ambiguous_name_across_the_swarm_names_each_candidates_node() -> None:
    doc = {
        "error": "the name 'twin' is ambiguous across the swarm: a:1:1 on laptop, b:2:2 on desk",
        "candidates": ["a:1:1", "b:2:2"],
        "nodes": [{"session_key": "a:1:1", "node": "laptop"}, {"session_key": "b:2:2", "node": "desk"}],
    }
    refused = Refused(409, json.dumps(doc).encode())
    assert refused.exit_code == 1
    assert "a:1:1 on laptop" in refused.message and refused.message.endswith("\n  a:1:1\n  b:2:2")
