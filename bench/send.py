"""Benchmark ``roost send`` to an idle agent, through to the proof that its turn began.

The agent is the tests' fake agent TUI with ``--work 0`` and its hooks on: it fires
``UserPromptSubmit`` through the real ``rosterd-hook`` on Enter, which is what send waits
for, then ``Stop`` at once. Before each timed send (untimed) the pane is waited back to done.

A second, instrumented run of the same send splits its time into phases: interpreter start,
imports, resolving the target, pasting until the text shows, pressing Enter until it leaves
the input line, and waiting for the agent's hook to begin the turn. It wraps send's own
functions from outside, so it measures the code as it is, and skips a phase whose function
it cannot find.

Run: ``.venv/bin/python bench/send.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics

from common import (
    BIN,
    FAKE_AGENT,
    PYTHON,
    Case,
    Sandbox,
    count_calls,
    measure,
    print_imports,
    report,
    wait_for,
)

SUBJECT = "roost send (to an idle agent)"
INSTRUMENTED = "the same send, instrumented"
MESSAGE = "say hi"

# Runs one send in-process, timing its phases; the JSON line on stderr is what it measured.
DRIVER = """
import time
started = time.monotonic()
import sys
from roost.faces.cli.roost import main
from roost.faces.cli.roost import send
imported = time.monotonic()
from roost.pane.tmux import paste, targets
spans = {}
def timed(owner, name, label):
    fn = getattr(owner, name, None)
    if fn is None:
        return
    def wrapper(*args, **kwargs):
        begun = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            spans[label] = spans.get(label, 0.0) + time.monotonic() - begun
    setattr(owner, name, wrapper)
timed(targets, "resolve", "resolve target")
timed(paste, "deliver", "paste until shown")
timed(paste, "submit", "Enter until it left")
timed(send, "_wait_for_turn", "wait for the turn")
code = main(sys.argv[1:])
ended = time.monotonic()
import json
times = {"started": started, "imported": imported, "ended": ended, "spans": spans}
sys.stderr.write(json.dumps(times) + "\\n")
sys.exit(code)
"""
PHASES = (
    "interpreter start",
    "imports",
    "resolve target",
    "paste until shown",
    "Enter until it left",
    "wait for the turn",
    "rest of send",
    "exit",
)


def phases(case: Case) -> dict[str, list[float]]:
    """Each instrumented run's time, phase by phase; ``rest of send`` is what no phase timed."""
    found: dict[str, list[float]] = {name: [] for name in PHASES}
    for spawned, exited, stderr in case.runs:
        m = json.loads(stderr.decode().splitlines()[-1])
        spans = {
            "interpreter start": m["started"] - spawned,
            "imports": m["imported"] - m["started"],
            **m["spans"],
            "rest of send": m["ended"] - m["imported"] - sum(m["spans"].values()),
            "exit": exited - m["ended"],
        }
        for name in PHASES:
            found[name].append(spans.get(name, 0.0))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--budget", type=float, default=60, help="seconds of timing at most")
    args = parser.parse_args()

    print("roost send")
    with Sandbox() as box:
        box.start("sleep 100000")
        agent = shlex.join([str(PYTHON), str(FAKE_AGENT), "--work", "0", "--reply", "hi"])
        pane = box.windows(1, agent)[0]
        wait_for(lambda: "fake agent ready" in box.tmux("capture-pane", "-p", "-t", pane), what="the agent")
        box.set_options(pane, {"@roost-state": "idle"})

        def settled() -> None:
            """The agent's last turn has ended: badge done (or idle) and turn-done caught up."""

            def idle() -> bool:
                state = box.option(pane, "@roost-state")
                turn, done = box.option(pane, "@roost-turn"), box.option(pane, "@roost-turn-done")
                return state in ("done", "idle") and turn == done

            wait_for(idle, what=f"{pane} to finish its turn")

        send = [str(BIN / "roost"), "send", pane, MESSAGE]
        counting, log = box.counting_env(box.env)
        settled()
        calls = count_calls(Case(send, counting), log)
        print(f"  tmux calls by one send: {len(calls)}")
        settled()
        print_imports("send", send, box.env)

        instrumented = Case([str(PYTHON), "-c", DRIVER, *send[1:]], box.env, setup=settled)
        cases = {**box.baselines(), SUBJECT: Case(send, box.env, setup=settled), INSTRUMENTED: instrumented}
        samples = measure(cases, args.runs, args.budget)
    medians = report("roost send vs baselines", samples)
    split = phases(instrumented)
    print(f"\nwhere one send's time goes ({INSTRUMENTED}, median of {len(split['imports'])} runs):")
    for name, values in split.items():
        share = statistics.median(values)
        print(f"  {name:<20} {share * 1000:7.1f}ms  {share / medians[INSTRUMENTED]:5.0%}")


if __name__ == "__main__":
    main()
