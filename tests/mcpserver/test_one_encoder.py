"""One encoder for text bound for a pane: the same hostile text sent by ``roost send``, by the
API's fenced prompt and by MCP's ``session.send`` reaches the agent as the same bytes, which
are what a terminal's composer pastes (markers and ESC stripped, each newline one CR, tmux's
bracketed-paste markers, one Enter)."""

from __future__ import annotations

from tests.api.agentpane import AgentPane, pins, start_agent
from tests.conftest import Roost
from tests.mcpserver.client import ok, unix
from tests.runner.conftest import Headless

START, END = b"\x1b[200~", b"\x1b[201~"
HOSTILE = "one\r\ntwo\rthree\nfour \x1b[31mred\x1b[0m \x1b[201~typed?\x1b[20\x1b[200~1~ end é"
PASTED = START + "one\rtwo\rthree\rfour [31mred[0m typed? end é".encode() + END + b"\r"


def _by_roost_send(roost: Roost, agent: AgentPane) -> None:
    proc = roost.run("send", agent.pane, HOSTILE)
    assert proc.returncode == 0, proc.stderr


def _by_the_api(roost: Roost, agent: AgentPane) -> None:
    response = agent.post("/prompt", pins(agent.row() or {}, HOSTILE))
    assert response.status_code == 200 and response.json()["input"] == "accepted", response.text


def test_every_sender_pastes_the_same_bytes(headless: Headless, roost: Roost) -> None:
    headless.daemon.start()
    agents = [start_agent(roost, headless.daemon, name=name) for name in ("send", "api", "mcp")]
    _by_roost_send(roost, agents[0])
    _by_the_api(roost, agents[1])
    answer = ok(unix(headless.daemon), "session.send", name=agents[2].record()["session_key"], prompt=HOSTILE)
    assert answer["input"] == "accepted", answer
    for agent in agents:
        agent.wait_received(END + b"\r")
        agent.nothing_arrives(agent.received())
    assert [agent.received() for agent in agents] == [PASTED] * 3
