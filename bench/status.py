"""Benchmark ``roost status --json`` on a server of 50 badged panes.

The panes run ``sleep`` and carry the ``@roost-*`` options a real agent's hooks would set, so
the listing has every field to fill. A ``tmux`` wrapper first on PATH counts the invocations
at 1, 10 and 50 panes: status must cost one tmux call whatever the pane count.

Run: ``.venv/bin/python bench/status.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import subprocess

from common import BIN, ROOT, Case, Sandbox, count_calls, measure, print_imports, report

PANES = 50
COUNTS = (1, 10, PANES)
STATES = ("working", "blocked", "done", "idle", "error")
SUBJECT = f"roost status --json ({PANES} panes)"


def badge(box: Sandbox, panes: list[str], first: int) -> None:
    """Give each pane the options an agent's hooks leave behind."""
    for n, pane in enumerate(panes, start=first):
        box.set_options(
            pane,
            {
                "@roost-state": STATES[n % len(STATES)],
                "@roost-since": "1700000000",
                "@roost-turn": str(n),
                "@roost-session-id": f"session-{n}",
                "@roost-cwd": str(ROOT),
                "@roost-harness": "claude",
                "@roost-transcript-path": f"{ROOT}/transcript-{n}.jsonl",
                "@roost-name": f"agent-{n}",
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--budget", type=float, default=60, help="seconds of timing at most")
    args = parser.parse_args()

    print("roost status --json")
    with Sandbox() as box:
        status = [str(BIN / "roost"), "status", "--json"]
        counting, log = box.counting_env(box.env)
        panes = [box.start("sleep 100000")]
        badge(box, panes, 0)
        calls = []
        for count in COUNTS:
            new = box.windows(count - len(panes))
            badge(box, new, len(panes))
            panes += new
            calls.append(len(count_calls(Case(status, counting), log)))
        listed = json.loads(subprocess.run(status, capture_output=True, env=box.env).stdout)["panes"]
        if len(listed) != PANES or any(p["state"] is None for p in listed):
            raise SystemExit(f"bench: status listed {len(listed)} panes, not {PANES} badged ones")
        per_count = ", ".join(f"{n} panes: {c}" for n, c in zip(COUNTS, calls, strict=True))
        verdict = "one call whatever the pane count" if set(calls) == {1} else "NOT one call"
        print(f"  tmux calls: {per_count} ({verdict})")
        print_imports("status --json", status, box.env)

        cases = {**box.baselines(), SUBJECT: Case(status, box.env)}
        samples = measure(cases, args.runs, args.budget)
    report("roost status --json vs baselines", samples)


if __name__ == "__main__":
    main()
