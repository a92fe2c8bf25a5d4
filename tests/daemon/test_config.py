"""``rosterd.toml``: every key either works or is refused in one line naming the file and the
key; the specification's own example loads; the swarm listener never binds beyond loopback and
the tailnet."""

from __future__ import annotations

from pathlib import Path

import pytest

from roost.daemon import config

SPEC_EXAMPLE = """\
# ~/.config/rosterd/rosterd.toml on Linux, ~/Library/Application Support/rosterd/ on macOS
[node]
name = "gibson"              # pinned; a renamed machine is a new name, the id stays
port = 8791                  # the swarm listener, on the Tailscale interface
listen = "tailscale"
loopback_port = 8790         # the page and local tools, bearer in loopback.token

[swarm]
static_peers = ["100.64.0.12:8791"]   # the fallback without Tailscale

[runner]
default_permission_policy = "attention"
idle_timeout_s = 1800
suspend_on_needs_attention = false
resume_on_crash = true
max_resumes_per_hour = 6
recap = true

[sources]
files = false
scan_interval_ms = 2000

[harness.claude]
adapter = "claude-agent-acp"
[harness.codex]
adapter = "codex-acp"
[harness.pi]
adapter = "pi-acp"
extension = true
gate_timeout_s = 3600
"""
"""The rosterd specification's example config, verbatim (its "Config" section)."""

LISTEN_REFUSED = (
    "is refused: rosterd listens on loopback, its unix socket and the Tailscale interface only; "
    'write "tailscale", "off", or a loopback or Tailscale address'
)


def loaded(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "rosterd.toml"
    path.write_text(text)
    return config.load(path)


def refusal(tmp_path: Path, text: str) -> str:
    with pytest.raises(config.ConfigError) as refused:
        loaded(tmp_path, text)
    assert refused.value.exit_code == 1
    return refused.value.message


def test_the_specifications_example_loads_with_every_key_taken(tmp_path: Path) -> None:
    found = loaded(tmp_path, SPEC_EXAMPLE)
    assert found.node == config.Node(name="gibson", port=8791, listen="tailscale", loopback_port=8790)
    assert found.swarm == config.Swarm(static_peers=("100.64.0.12:8791",))
    assert (found.runner.default_permission_policy, found.runner.idle_timeout_s) == ("attention", 1800)
    assert (found.sources.files, found.sources.scan_interval_ms) == (False, 2000)
    assert found.harness["claude"].adapter == "claude-agent-acp"
    assert found.harness["codex"].adapter == "codex-acp"
    assert found.harness["pi"] == config.Harness(adapter="pi-acp", extension=True, gate_timeout_s=3600)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[node]\nlisten = "0.0.0.0"\n', f'[node] listen = "0.0.0.0" {LISTEN_REFUSED}'),
        ('[node]\nlisten = "::"\n', f'[node] listen = "::" {LISTEN_REFUSED}'),
        ('[node]\nlisten = "192.168.1.20"\n', f'[node] listen = "192.168.1.20" {LISTEN_REFUSED}'),
        ('[node]\nlisten = "eth0"\n', f'[node] listen = "eth0" {LISTEN_REFUSED}'),
        ('[node]\nlisten = "100.128.0.1"\n', f'[node] listen = "100.128.0.1" {LISTEN_REFUSED}'),
        (
            "[sources]\nfiles = true\n",
            "[sources] files = true is not supported: this version makes no claim of a harness's "
            "session files (it reads them only for what each turn used), so only false is taken",
        ),
        (
            '[budget]\ncurrency = "usd"\n',
            "[budget] currency must be a three-letter code such as USD, got 'usd'",
        ),
        (
            "[budget]\nwarn = 1.5\n",
            "[budget] warn must be a fraction of a limit, greater than 0 and at most 1",
        ),
        ("[budget]\nday = 0\n", "[budget] day must be a limit greater than 0"),
        ("[budget]\nsession = true\n", "[budget] session must be a number, got True"),
        ('[budget.folders]\n"rel/path" = 5\n', '[budget.folders] "rel/path" is not an absolute folder'),
        ('[budget.folders]\n"/abs" = -1\n', '[budget.folders] "/abs" must be a limit greater than 0'),
        (
            "[harness.amp]\nextension = true\n",
            "[harness.amp] extension = true is not supported: roost has no integration for amp "
            "to supply its claims and permission gate",
        ),
        (
            '[harness.mine]\nadapter = "mine-acp"\nextension = true\n',
            "[harness.mine] extension = true is not supported: roost has no integration for mine "
            "to supply its claims and permission gate",
        ),
        (
            '[swarm]\nstatic_peers = ["peer"]\n',
            '[swarm] static_peers holds "peer", which is not host:port (a port from 1 to 65535, an IPv6 '
            "address in brackets)",
        ),
        (
            '[swarm]\nstatic_peers = ["peer:0"]\n',
            '[swarm] static_peers holds "peer:0", which is not host:port',
        ),
        ('[swarm]\nstatic_peers = ["fd7a::1:8791"]\n', '[swarm] static_peers holds "fd7a::1:8791", which'),
        ('[swarm]\nstatic_peers = "peer:8791"\n', "[swarm] static_peers must be a list of strings"),
        ("[swarm]\nmdns = true\n", "unknown key 'mdns' in [swarm]; known: static_peers"),
        (
            "[journal]\nkeep_days = 30\n",
            "unknown section [journal]; known: node, swarm, runner, sources, api, mcp, budget, harness.NAME",
        ),
    ],
)
def test_a_key_that_would_do_nothing_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    said = refusal(tmp_path, text)
    assert said.startswith(f"{tmp_path / 'rosterd.toml'}: {message}")
    assert "\n" not in said


@pytest.mark.parametrize(
    "listen", ["tailscale", "off", "127.0.0.1", "127.0.0.2", "::1", "100.64.0.12", "fd7a:115c:a1e0::1"]
)
def test_the_swarm_listener_may_be_the_tailnet_loopback_or_off(tmp_path: Path, listen: str) -> None:
    assert loaded(tmp_path, f'[node]\nlisten = "{listen}"\n').node.listen == listen


@pytest.mark.parametrize(
    "peer", ["100.64.0.12:8791", "gibson:8791", "gibson.tail1234.ts.net:8791", "[fd7a::1]:8791"]
)
def test_a_static_peer_is_host_and_port(tmp_path: Path, peer: str) -> None:
    assert loaded(tmp_path, f'[swarm]\nstatic_peers = ["{peer}"]\n').swarm.static_peers == (peer,)


def test_a_harness_table_amends_its_default_key_by_key(tmp_path: Path) -> None:
    """``[harness.pi] gate_timeout_s = 60`` changes the hold; pi keeps its adapter and extension."""
    found = loaded(tmp_path, "[harness.pi]\ngate_timeout_s = 60\n")
    assert found.harness["pi"] == config.Harness(adapter="pi-acp", extension=True, gate_timeout_s=60)
    assert loaded(tmp_path, "[harness.pi]\nextension = false\n").harness["pi"].extension is False
