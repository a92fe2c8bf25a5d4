"""What the real Claude Code, Codex, pi, OpenCode, Copilot CLI and Gemini CLI turns cost, as
rosterd counts them from the agents' own records, held to what the fake model API charged, to
the token; and a session budget that a real turn crosses mid-turn (issue 36, item 5).

The fake APIs report the usage each answer is charged (``ModelAPI.charge``, the test's choice)
and keep what they reported (``charged``). rosterd never sees those numbers: it reads them back
from Claude's transcript, Codex's rollout, pi's session file, OpenCode's database, Copilot's
events file and Gemini's chat file when a turn ends (and, for the budgets, while one runs), and
prices them by the price table. So a count that matches here went through the real CLI's own
bookkeeping, the manifest's ``[usage]`` and the ledger.
"""

from __future__ import annotations

import json
import queue
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from roost.services.ledger import prices as price_table
from tests.agents.conftest import TURN_TIMEOUT, AgentPane, _stop_strays
from tests.agents.test_matrix import ROWS, Matrix, launch
from tests.agents.test_rosterd_claude import listed, rosterd
from tests.api.sse import Event, Events
from tests.cli.rosterd.helpers import ok
from tests.conftest import Roost
from tests.daemon.fixture import Daemon, daemon
from tests.fakes.model_api import SLOW_SECONDS, Step, ToolCall, Usage, default_script, reply_for
from tests.fakes.webhook_receiver import Receiver
from tests.recorder import APIS, script

pytestmark = pytest.mark.agent

__all__ = ["daemon", "rosterd"]

PRICED = "claude-sonnet-4-6"
"""A model the packaged price table knows (USD)."""
UNPRICED = "claude-roost-unpriced"
"""A model no price table knows: its turns show their tokens and an unknown cost."""
CODEX_MODEL = "gpt-fake"
"""The ``codex`` fixture's model, which a user's ``prices.toml`` prices in these tests."""
CODEX_PRICE = {"currency": "EUR", "input": 2.0, "output": 8.0, "cached_read": 0.5, "cached_write": 0.0}


def tokens(used: Usage) -> dict[str, int]:
    """What the ledger must say an answer charged ``used`` used, under its names."""
    counts = {
        "input": used.input,
        "output": used.output,
        "thought": 0,
        "cached_read": used.cached_read,
        "cached_write": used.cached_write,
    }
    counts["total"] = used.input + used.output + used.cached_read + used.cached_write
    return counts


def written(used: Usage) -> dict[str, int]:
    """``tokens(used)`` as a ledger line and ``spend.last`` write it: the counts that are not 0."""
    return {name: count for name, count in tokens(used).items() if count}


def cost(used: Usage, price: dict[str, Any]) -> float:
    """What ``used`` costs at ``price`` (per million tokens), computed here, not by roost."""
    amount = (
        used.input * price["input"]
        + used.output * price["output"]
        + used.cached_read * price["cached_read"]
        + used.cached_write * price["cached_write"]
    )
    return round(amount / 1_000_000, price_table.DIGITS)


def packaged(model: str) -> dict[str, Any]:
    """The packaged price table's entry for ``model``."""
    table = tomllib.loads(Path(price_table.__file__).with_name(price_table.FILE).read_text())
    return table["models"][model]


def send(roost: Roost, agent: AgentPane, prompt: str) -> None:
    """One turn through ``roost send``, waited for to its end."""
    proc = roost.run("send", agent.name, prompt)
    assert proc.returncode == 0, proc.stderr
    agent.wait_state("done")


def spent(daemon: Daemon, agent: AgentPane | Matrix, turns: int) -> dict[str, Any]:
    """The pane's record once the ledger has counted ``turns`` of its turns (a beat after each
    ends: it reads the agent's record off the loop)."""
    try:
        return daemon.wait_for(
            lambda: (
                (row := listed(daemon, agent.pane)).get("spend") and row["spend"]["turns"] >= turns and row
            ),
            timeout=15,
        )
    except AssertionError:
        counted = ledger_lines(daemon) if ledger(daemon).exists() else []
        raise AssertionError(
            f"the ledger counted no turn {turns}; its lines: {counted}\n{agent.evidence()}"
        ) from None


def ledger(daemon: Daemon) -> Path:
    """The usage ledger of ``daemon``'s sandbox."""
    return Path(daemon.env["XDG_STATE_HOME"]) / "roost" / "ledger" / "usage.jsonl"


def ledger_lines(daemon: Daemon) -> list[dict[str, Any]]:
    """The usage ledger's lines, one per counted turn, oldest first."""
    return [json.loads(line) for line in ledger(daemon).read_text().splitlines()]


def conversation(agent: AgentPane) -> list[Usage]:
    """What the fake API charged the conversation's answers (not the agent's side calls)."""
    return agent.api.conversation_usage()


@pytest.mark.parametrize("agent_flags", [("--model", PRICED)])
def test_claude_turns_count_what_the_api_charged_to_the_token_and_cost_the_tables_price(
    roost: Roost, rosterd: Daemon, claude: AgentPane
) -> None:
    charges = [
        Usage(input=1203, output=347, cached_read=5011, cached_write=709),
        Usage(input=58, output=1291, cached_read=9007, cached_write=2),
    ]
    claude.api.charge = lambda n: charges[n]
    price = packaged(PRICED)
    for number, prompt in enumerate(("the first priced turn", "the second priced turn"), start=1):
        send(roost, claude, prompt)
        record = spent(rosterd, claude, number)
        assert conversation(claude) == charges[:number], "one answer per turn, as the script says"
        last = record["spend"]["last"]
        assert (last["model"], last["tokens"]) == (PRICED, written(charges[number - 1]))
        assert last["cost"] == {"amount": cost(charges[number - 1], price), "currency": "USD"}

    lines = ledger_lines(rosterd)
    assert [(line["harness"], line["model"], line["lane"]) for line in lines] == [
        ("claude", PRICED, "interactive")
    ] * 2
    assert [line["tokens"] for line in lines] == [written(used) for used in charges]
    total = {name: sum(tokens(used)[name] for used in charges) for name in tokens(charges[0])}
    amount = round(sum(cost(used, price) for used in charges), price_table.DIGITS)
    spend = record["spend"]
    assert (spend["turns"], spend["tokens"], spend["cost"], spend["unpriced"]) == (
        2,
        total,
        {"USD": amount},
        0,
    )

    usage = json.loads(ok(rosterd, "usage", "--json"))
    [row] = usage["rows"]
    assert (row["harness"], row["model"], row["turns"], row["sessions"]) == ("claude", PRICED, 2, 1)
    assert (row["tokens"], row["cost"], row["unpriced"]) == (total, {"USD": amount}, 0)
    assert usage["total"]["tokens"] == total

    [pane] = [p for p in roost.json("status", "--json")["panes"] if p["id"] == claude.pane]
    assert pane["spend"] == spend, "the pane's options carry what the record does"


@pytest.mark.parametrize("agent_flags", [("--model", UNPRICED)])
def test_a_claude_turn_of_a_model_no_table_prices_shows_its_tokens_and_an_unknown_cost(
    roost: Roost, rosterd: Daemon, claude: AgentPane
) -> None:
    charge = Usage(input=777, output=88, cached_read=999, cached_write=11)
    claude.api.charge = lambda _n: charge
    send(roost, claude, "a turn of an unpriced model")
    spend = spent(rosterd, claude, 1)["spend"]
    assert (spend["tokens"], spend["cost"], spend["unpriced"]) == (tokens(charge), {}, 1)
    assert (spend["last"]["model"], spend["last"]["cost"]) == (UNPRICED, None)
    [row] = json.loads(ok(rosterd, "usage", "--json"))["rows"]
    assert (row["model"], row["tokens"], row["cost"], row["unpriced"]) == (UNPRICED, tokens(charge), {}, 1)
    assert "unknown" in ok(rosterd, "usage").decode()


def user_prices(roost: Roost, model: str, price: dict[str, Any]) -> None:
    """A user's ``prices.toml`` that prices ``model``, as a person adds a model the packaged
    table lacks: written before the daemon starts (it reads the table once)."""
    folder = Path(roost.env["XDG_CONFIG_HOME"]) / "roost"
    folder.mkdir(parents=True, exist_ok=True)
    entry = "\n".join(f"{key} = {json.dumps(value)}" for key, value in price.items())
    (folder / price_table.FILE).write_text(f'[models."{model}"]\n{entry}\ntaken = "2026-12-06"\n')


@pytest.fixture
def priced_codex(roost: Roost) -> None:
    """The fake Codex model, priced by the user."""
    user_prices(roost, CODEX_MODEL, CODEX_PRICE)


def test_codex_turns_count_what_the_api_charged_priced_by_the_users_table(
    roost: Roost, priced_codex: None, rosterd: Daemon, codex: AgentPane
) -> None:
    # The Responses API counts no cache write, and its input count holds the cached reads.
    charges = [
        Usage(input=4321, output=123, cached_read=2048),
        Usage(input=17, output=2345, cached_read=8192),
    ]
    codex.api.charge = lambda n: charges[n]
    for number, prompt in enumerate(("a codex turn to count", "and a second one"), start=1):
        send(roost, codex, prompt)
        record = spent(rosterd, codex, number)
        assert conversation(codex) == charges[:number]
        used = charges[number - 1]
        amount = cost(used, CODEX_PRICE)
        last = record["spend"]["last"]
        assert (last["model"], last["tokens"], last["cost"]) == (
            CODEX_MODEL,
            written(used),
            {"amount": amount, "currency": "EUR"},
        )

    assert [(line["harness"], line["model"], line["tokens"]) for line in ledger_lines(rosterd)] == [
        ("codex", CODEX_MODEL, written(used)) for used in charges
    ]
    total = {name: sum(tokens(used)[name] for used in charges) for name in tokens(charges[0])}
    amount = round(sum(cost(used, CODEX_PRICE) for used in charges), price_table.DIGITS)
    spend = record["spend"]
    assert (spend["turns"], spend["tokens"], spend["cost"], spend["unpriced"]) == (
        2,
        total,
        {"EUR": amount},
        0,
    )
    [row] = json.loads(ok(rosterd, "usage", "--json"))["rows"]
    assert (row["harness"], row["model"], row["tokens"], row["cost"]) == (
        "codex",
        CODEX_MODEL,
        total,
        {"EUR": amount},
    )


Last = tuple[str, dict[str, int], dict[str, Any]]
"""A turn's ``spend.last`` as a test expects it: the model, the tokens, the cost."""


def two_turns(
    roost: Roost,
    rosterd: Daemon,
    agent_bin: Path,
    name: str,
    charges: list[Usage],
    last: Callable[[Usage], Last],
) -> dict[str, Any]:
    """Two turns of the real agent ``name`` in a roost pane, started as the agent matrix starts
    it (tests/agents/test_matrix.py) with its integration, against the fake API charging
    ``charges``: each turn's ``spend.last`` held to ``last(charge)``. The record after both."""
    recipe = ROWS[name]
    api = APIS[recipe["api"]](script=script(recipe["tool"]))
    api.charge = lambda n: charges[n]
    try:
        with rosterd.unix(timeout=TURN_TIMEOUT) as client:
            agent = launch(roost, rosterd, client, name, True, api, agent_bin)
            try:
                for number, prompt in enumerate((f"a {name} turn to count", "and a second"), start=1):
                    agent.send(prompt)
                    agent.until_idle(number)
                    record = spent(rosterd, agent, number)
                    assert api.conversation_usage() == charges[:number]
                    said = record["spend"]["last"]
                    assert (said["model"], said["tokens"], said["cost"]) == last(charges[number - 1])
            finally:
                _stop_strays(Path(roost.env["HOME"]))
    finally:
        api.close()
    return record


def counted_to_the_token(
    roost: Roost,
    rosterd: Daemon,
    agent_bin: Path,
    name: str,
    model: str,
    price: dict[str, Any],
    charges: list[Usage],
) -> None:
    """Two real turns of agent ``name`` (``two_turns``), each counted as the API charged it in
    the ledger's own names and priced at ``price``; the ledger's lines and the session's spend
    their sums."""

    def last(used: Usage) -> Last:
        return model, written(used), {"amount": cost(used, price), "currency": price["currency"]}

    record = two_turns(roost, rosterd, agent_bin, name, charges, last)
    assert [(line["harness"], line["lane"], line["tokens"]) for line in ledger_lines(rosterd)] == [
        (name, "interactive", written(used)) for used in charges
    ]
    total = {token: sum(tokens(used)[token] for used in charges) for token in tokens(charges[0])}
    amount = round(sum(cost(used, price) for used in charges), price_table.DIGITS)
    spend = record["spend"]
    assert (spend["turns"], spend["tokens"], spend["cost"]) == (2, total, {price["currency"]: amount})


PI_MODEL = "claude-sonnet-4-5"
"""The model pi's recipe sets (tests/fixtures/screens/pi/recipe.toml): the packaged table prices
it as an alias of ``PRICED``."""


def test_pi_turns_in_a_terminal_count_what_the_api_charged(
    roost: Roost, rosterd: Daemon, agent_bin: Path
) -> None:
    # pi keeps Anthropic's counts apart (input without the cache) and an hour's cache writes.
    charges = [
        Usage(input=911, output=77, cached_read=12001, cached_write=303),
        Usage(input=45, output=1502, cached_read=13313, cached_write=0),
    ]
    counted_to_the_token(roost, rosterd, agent_bin, "pi", PI_MODEL, packaged(PRICED), charges)


OPENCODE_MODEL = "claude-sonnet-4-5"
"""The model OpenCode's recipe sets (tests/fixtures/screens/opencode/recipe.toml)."""


def test_opencode_turns_in_a_terminal_count_what_the_api_charged(
    roost: Roost, rosterd: Daemon, agent_bin: Path
) -> None:
    """Read back from OpenCode's own database (its ``message`` rows), not a file of lines."""
    charges = [
        Usage(input=1203, output=347, cached_read=5011, cached_write=709),
        Usage(input=58, output=1291, cached_read=9007, cached_write=2),
    ]
    counted_to_the_token(roost, rosterd, agent_bin, "opencode", OPENCODE_MODEL, packaged(PRICED), charges)


COPILOT_MODEL = "claude-sonnet-4.5"
"""The model Copilot CLI's recipe sets (tests/fixtures/screens/copilot/recipe.toml), named as
Copilot names it: no packaged price knows it (Copilot bills premium requests), a user's does."""
COPILOT_PRICE = {"currency": "USD", "input": 3.0, "output": 15.0, "cached_read": 0.3, "cached_write": 3.75}


@pytest.fixture
def priced_copilot(roost: Roost) -> None:
    """Copilot's model, priced by the user."""
    user_prices(roost, COPILOT_MODEL, COPILOT_PRICE)


def test_copilot_turns_in_a_terminal_count_what_the_api_charged_priced_by_the_users_table(
    roost: Roost, priced_copilot: None, rosterd: Daemon, agent_bin: Path
) -> None:
    """Read back from Copilot's events file; its input count holds the cache, taken off it."""
    charges = [
        Usage(input=1203, output=347, cached_read=5011, cached_write=709),
        Usage(input=58, output=1291, cached_read=9007, cached_write=2),
    ]
    counted_to_the_token(roost, rosterd, agent_bin, "copilot", COPILOT_MODEL, COPILOT_PRICE, charges)


GEMINI_MODEL = "gemini-3.1-pro-preview"
"""The model Gemini CLI 0.61.0 asks for its conversation unless told otherwise: no price table
knows it, so a user's ``prices.toml`` prices it in this test."""
GEMINI_PRICE = {"currency": "USD", "input": 2.0, "output": 12.0, "cached_read": 0.2, "cached_write": 0.0}


@pytest.fixture
def priced_gemini(roost: Roost) -> None:
    """Gemini's model, priced by the user."""
    user_prices(roost, GEMINI_MODEL, GEMINI_PRICE)


def gemini_tokens(used: Usage) -> dict[str, int]:
    """What the ledger must say a Gemini answer charged ``used`` used: its thinking tokens are
    billed as output, so the ledger's output holds them."""
    counts = {**tokens(used), "output": used.output + used.thought, "thought": used.thought}
    counts["total"] = counts["input"] + counts["output"] + counts["cached_read"] + counts["cached_write"]
    return counts


def billed(used: Usage) -> Usage:
    """``used`` as Gemini bills it: its thinking tokens as output."""
    return Usage(used.input, used.output + used.thought, used.cached_read)


def test_gemini_turns_in_a_terminal_count_what_the_api_charged(
    roost: Roost, priced_gemini: None, rosterd: Daemon, agent_bin: Path
) -> None:
    # The Gemini API's prompt count holds the cached part, and counts thinking apart from output.
    charges = [
        Usage(input=2203, output=91, cached_read=8192, thought=517),
        Usage(input=64, output=1733, cached_read=10240, thought=0),
    ]

    def last(used: Usage) -> Last:
        counted = {name: count for name, count in gemini_tokens(used).items() if count}
        return GEMINI_MODEL, counted, {"amount": cost(billed(used), GEMINI_PRICE), "currency": "USD"}

    record = two_turns(roost, rosterd, agent_bin, "gemini", charges, last)
    assert [(line["harness"], line["lane"], line["model"]) for line in ledger_lines(rosterd)] == [
        ("gemini", "interactive", GEMINI_MODEL)
    ] * 2
    total = {name: sum(gemini_tokens(used)[name] for used in charges) for name in gemini_tokens(charges[0])}
    amount = round(
        sum(cost(billed(used), GEMINI_PRICE) for used in charges),
        price_table.DIGITS,
    )
    spend = record["spend"]
    assert (spend["turns"], spend["tokens"], spend["cost"], spend["unpriced"]) == (
        2,
        total,
        {"USD": amount},
        0,
    )


CROSS = "CROSS"
"""A prompt holding this is answered with a look at a file (Claude's Read tool, which asks no
permission), then a final answer 4 s after the file's contents came back: a turn that has
spent its first answer and then says nothing (no hook fires) while the model thinks."""

HELD = "no prompt is sent until a person lifts it"
"""How an exceeded budget's reason ends."""


def crossing_script(prompt: str) -> Step:
    """The fake model's script: ``CROSS`` as above, anything else as the default script."""
    if CROSS in prompt:
        return ToolCall(
            "read notes.txt",
            then=f"READ:{reply_for(prompt)}",
            then_delay=SLOW_SECONDS,
            tool="Read",
            input={"file_path": "notes.txt"},
        )
    return default_script(prompt)


def budget_attention(frames: list[Event], key: str) -> list[dict[str, Any]]:
    """The records of the ``attention`` changes a budget's crossing made for session ``key``."""
    return [
        frame.data["record"]
        for frame in frames
        if frame.name == "attention" and crossed(frame.data["record"], key)
    ]


def crossed(record: dict[str, Any], key: str) -> bool:
    """Whether ``record`` is session ``key``'s, with a budget its own turn crossed."""
    return record["session_key"] == key and (record.get("budget") or {}).get("crossed_by") == key


@pytest.fixture
def webhook(rosterd: Daemon) -> Iterator[Receiver]:
    """A receiver on loopback, registered with the daemon for its ``attention`` changes."""
    receiver = Receiver()
    with rosterd.unix() as client:
        body = {"url": receiver.url, "events": ["attention"], "token": "usage-live-receiver-0123456789"}
        assert client.post("/hooks", json=body).status_code == 201
    yield receiver
    receiver.close()


def drained(stream: Events) -> list[Event]:
    """Every frame the stream has brought so far."""
    frames = []
    while True:
        try:
            frames.append(stream.next(0.5))
        except queue.Empty:
            return frames


@pytest.mark.parametrize("agent_flags", [("--model", PRICED)])
def test_a_budget_crossed_mid_turn_raises_attention_once_refuses_the_next_send_until_lifted(
    roost: Roost, rosterd: Daemon, webhook: Receiver, claude: AgentPane
) -> None:
    # At 15 USD per million output tokens: turn 1 spends 0.6003 (past the warning at 0.50),
    # turn 2's first answer 0.4506 more (past the limit of 1.00, while the turn runs), its last 0.0012.
    charges = [
        Usage(input=100, output=40000),
        Usage(input=200, output=30000),
        Usage(input=300, output=20),
        Usage(input=400, output=30),
    ]
    claude.api.charge = lambda n: charges[n]
    claude.api.script = crossing_script
    (claude.project / "notes.txt").write_text("notes\n")
    key = listed(rosterd, claude.pane)["session_key"]
    budgets = json.loads(ok(rosterd, "budget", "set", "session", key, "1", "--warn", "0.5", "--json"))
    assert [(b["scope"], b["session_key"], b["limit"], b["warn"]) for b in budgets["budgets"]] == [
        ("session", key, 1.0, 0.5)
    ]

    with Events(rosterd.unix(timeout=TURN_TIMEOUT), "/changes") as stream:
        send(roost, claude, "a turn to come near the budget")
        warned = rosterd.wait_for(lambda: (listed(rosterd, claude.pane).get("budget") or {}).get("state"))
        budget = listed(rosterd, claude.pane)["budget"]
        assert (warned, budget["crossed_by"], budget["lift"]) == (
            "warning",
            key,
            f"rosterd budget lift session {key}",
        )
        assert budget["reason"] == "this session has spent 0.60 USD of 1.00 USD, its budget: 60 % of it"

        assert roost.run("send", claude.name, f"a turn that goes past it {CROSS}").returncode == 0
        held = rosterd.wait_for(
            lambda: (
                ((row := listed(rosterd, claude.pane)).get("budget") or {}).get("state") == "exceeded" and row
            ),
            TURN_TIMEOUT,
            "the budget to be exceeded",
        )
        assert (held["activity"], claude.state()) == ("active", "working"), "told only after the turn"
        claude.wait_state("done")
        record = spent(rosterd, claude, 2)
        assert record["spend"]["cost"] == {
            "USD": round(sum(cost(c, packaged(PRICED)) for c in charges[:3]), price_table.DIGITS)
        }
        frames = drained(stream)

    told = budget_attention(frames, key)
    assert [(r["budget"]["state"], r["budget"]["reason"]) for r in told] == [
        ("warning", "this session has spent 0.60 USD of 1.00 USD, its budget: 60 % of it"),
        ("exceeded", "this session has spent 1.05 USD of 1.00 USD, its budget: " + HELD),
    ], "attention once per crossing, and not again when the turn that crossed it is counted"
    assert told[1]["activity"] == "active", "the limit was told while the turn ran"
    shown = json.loads(roost.option(claude.pane, "@roost-budget"))
    assert (shown["state"], shown["reason"]) == ("exceeded", told[1]["budget"]["reason"])
    [pane] = [p for p in roost.json("status", "--json")["panes"] if p["id"] == claude.pane]
    assert pane["budget"]["state"] == "exceeded"

    requests = len(claude.api.requests)
    for force in ((), ("--force",)):  # --force passes an open dialog, never a budget
        refused = roost.run("send", *force, claude.name, "one more prompt over budget")
        assert refused.returncode == 1
        assert refused.stderr == (
            f"roost send: {claude.name} is over budget: {told[1]['budget']['reason']}"
            f" — rosterd budget lift session {key} lets it through\n"
        )
    time.sleep(1)
    assert "one more prompt" not in claude.screen(), "nothing is typed into the pane"
    assert len(claude.api.requests) == requests and claude.state() == "done"

    lifted = json.loads(ok(rosterd, "budget", "lift", "session", key, "--json"))
    assert lifted["lift"]["period"] == f"session:{key}"
    claude.wait(
        lambda: json.loads(roost.option(claude.pane, "@roost-budget") or "{}").get("state") == "lifted",
        10,
        "the pane to show the budget lifted",
    )
    send(roost, claude, "a prompt once the budget is lifted")
    assert claude.api.streamed[-1] == reply_for("a prompt once the budget is lifted")
    delivered = [body["data"]["record"] for body in webhook.bodies() if crossed(body["data"]["record"], key)]
    assert [r["budget"]["crossing"] for r in delivered] == [r["budget"]["crossing"] for r in told]
