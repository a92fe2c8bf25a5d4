"""Benchmark ``rosterd-hook``: the command every agent runs on every hook event.

Most events change nothing (a tool starts or ends while the pane is already working), so that
case must cost one tmux read and no write; the aim is to stay within 3x a bare interpreter
start. A state change (a prompt submitted to a done pane) is timed too.

The hook reads only ``$TMUX`` and ``$TMUX_PANE`` to find its pane, so it runs here as a plain
subprocess with those set to a real pane's values rather than inside the pane.

Run: ``.venv/bin/python bench/hook.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess

from common import (
    BIN,
    PYTHON,
    PYTHON_START,
    ROOT,
    Case,
    Sandbox,
    count_calls,
    measure,
    print_imports,
    report,
)

AIM = 3.0
SESSION = "bench-session-1"
UNCHANGED_PRE = "hook unchanged (PreToolUse)"
UNCHANGED_POST = "hook unchanged (PostToolUse)"
CHANGE = "hook change (UserPromptSubmit from done)"


def event(name: str, **extra: object) -> bytes:
    payload = {
        "hook_event_name": name,
        "session_id": SESSION,
        "cwd": str(ROOT),
        "transcript_path": f"{ROOT}/transcript.jsonl",
        **extra,
    }
    return json.dumps(payload).encode()


def interpreter_notes() -> None:
    """What a bare start imports: the PATH ``python3`` may be a shim or load a ``.pth`` with certifi."""
    for label, exe in (("python3 on PATH", shutil.which("python3")), (".venv/bin/python", str(PYTHON))):
        if not exe:
            continue
        proc = subprocess.run([exe, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
        site = next((line for line in proc.stderr.splitlines() if line.rstrip().endswith("| site")), "")
        site_ms = int(site.split("|")[1]) / 1000 if site else 0.0
        certifi = "imports certifi" if "certifi" in proc.stderr else "no certifi"
        print(f"  {label} ({exe}): site {site_ms:.1f} ms, {certifi}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--budget", type=float, default=60, help="seconds of timing at most")
    args = parser.parse_args()

    print("rosterd-hook")
    interpreter_notes()
    with Sandbox() as box:
        box.start("sleep 100000")
        pane = box.windows(1)[0]
        box.set_options(
            pane,
            {
                "@roost-session-id": SESSION,
                "@roost-cwd": str(ROOT),
                "@roost-harness": "claude",
                "@roost-transcript-path": f"{ROOT}/transcript.jsonl",
                "@roost-state": "working",
                "@roost-turn": "1",
            },
        )
        env = {**box.tmux_env(), "TMUX_PANE": pane}
        hook = [str(BIN / "rosterd-hook")]
        pre = event("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
        post = event("PostToolUse", tool_name="Bash", tool_input={"command": "ls"})

        def to_done() -> None:
            box.set_options(pane, {"@roost-state": "done"})

        cases = {
            **box.baselines(),
            UNCHANGED_PRE: Case(hook, env, pre),
            UNCHANGED_POST: Case(hook, env, post),
            CHANGE: Case(hook, env, event("UserPromptSubmit", prompt="hi"), setup=to_done),
        }

        counting, log = box.counting_env(env)
        to_done()
        calls = count_calls(Case(hook, counting, event("UserPromptSubmit", prompt="hi")), log)
        if box.option(pane, "@roost-state") != "working":
            raise SystemExit("bench: the hook did not badge the pane working")
        changed = len(calls)
        calls = count_calls(Case(hook, counting, pre), log)
        writes = [c for c in calls if "set-option" in c]
        print(f"  tmux calls: unchanged event {len(calls)} ({len(writes)} writes), state change {changed}")
        if len(calls) != 1 or writes:
            print("  WARNING: an unchanged event should cost exactly one tmux read and no write")
        print_imports("the unchanged hook", hook, env, pre)

        box.set_options(pane, {"@roost-state": "working"})
        samples = measure(cases, args.runs, args.budget)
    medians = report("rosterd-hook vs baselines", samples)
    ratio = medians[UNCHANGED_PRE] / medians[PYTHON_START]
    verdict = "met" if ratio <= AIM else "NOT met"
    print(f"\naim: unchanged-state hook within {AIM:g}x a bare interpreter start: {ratio:.2f}x, {verdict}")


if __name__ == "__main__":
    main()
