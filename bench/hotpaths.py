"""Benchmark the three verbs that should start like a shell tool's, each against its own floor.

A verb's **floor** is what it cannot avoid: a bare start of the venv's interpreter
(``python -c pass``) followed by exactly the tmux calls that verb makes, recorded from a run of
the verb itself and replayed one after the other, timed as one. The aim is each verb's median
within 1.3x its floor's, in the same run. A **bash** version of each verb (a bash start plus the
same tmux calls and the same decisions) is timed too, for reference: what a shell tool costs.

- **hook**: ``rosterd-hook`` fed a Claude-shaped ``PreToolUse`` on a pane already working, the
  most frequent event: it must change nothing and cost one tmux read.
- **screen**: ``roost screen %N`` on a pane showing a recorded Claude screen.
- **read**: ``roost read %N`` on a pane whose turn ended with a kept reply.

All on one throwaway tmux server of 50 panes, interleaved round by round (``common.measure``).

Run: ``.venv/bin/python bench/hotpaths.py [--runs N] [--budget SECONDS] [--src DIR]``;
``--src`` runs roost from another source tree (``PYTHONPATH``), to measure a tree before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import (
    BIN,
    PYTHON,
    PYTHON_START,
    ROOT,
    TMUX,
    Sandbox,
    measure,
    p90,
    print_imports,
    screen_tui,
)

AIM = 1.3
PANES = 50
SESSION = "bench-session-1"
TRANSCRIPT = f"{ROOT}/transcript.jsonl"
REPLY = "All 12 tests pass.\n\nTwo lint warnings in `src/api.ts`."


def event(name: str, **extra: object) -> bytes:
    payload = {
        "hook_event_name": name,
        "session_id": SESSION,
        "cwd": str(ROOT),
        "transcript_path": TRANSCRIPT,
    }
    return json.dumps({**payload, **extra}).encode()


class Timed:
    """Commands run one after the other and timed as one (a verb is a sequence of one).

    Quacks like ``common.Case`` (``run`` and ``runs``) so ``common.measure`` can interleave it;
    each run also records the CPU time its processes used, children included. On a machine
    shared with other work, CPU time barely moves with the load while wall time does, so its
    ratios are the steadier check on the wall-clock ones the aim is stated in.
    """

    def __init__(self, argvs: list[list[str]], env: dict[str, str], input: bytes | None = None) -> None:
        self.argvs = argvs
        self.env = env
        self.input = input
        self.runs: list[tuple[float, float, float]] = []  # (spawned, exited, CPU seconds)

    def run(self) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        spawned = time.monotonic()
        for i, argv in enumerate(self.argvs):
            proc = subprocess.run(
                argv, input=self.input if i == 0 else None, capture_output=True, env=self.env
            )
            if proc.returncode != 0:
                sys.exit(f"bench: {shlex.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-300:]}")
        exited = time.monotonic()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        self.runs.append((spawned, exited, cpu))
        return exited - spawned

    def output(self) -> tuple[int, bytes]:
        """Exit status and stdout of one run of the first command."""
        proc = subprocess.run(self.argvs[0], input=self.input, capture_output=True, env=self.env)
        return proc.returncode, proc.stdout


def recording_env(box: Sandbox, env: dict[str, str]) -> tuple[dict[str, str], Path]:
    """``env`` with a ``tmux`` first on PATH that logs each call's argv whole (NUL-separated)."""
    wrapdir = box.root / "recording"
    wrapdir.mkdir(exist_ok=True)
    log = box.root / "tmux-argv.log"
    wrapper = wrapdir / "tmux"
    quoted = shlex.quote(str(log))
    wrapper.write_text(
        f"#!/bin/sh\n{{ printf 'a%s\\0' \"$@\"; printf 'e\\0'; }} >> {quoted}\n"
        f'exec {shlex.quote(TMUX)} "$@"\n'
    )
    wrapper.chmod(0o755)
    return {**env, "PATH": f"{wrapdir}{os.pathsep}{env['PATH']}"}, log


def tmux_calls(verb: Timed, box: Sandbox) -> list[list[str]]:
    """The argv (after ``tmux``) of every tmux call one run of ``verb`` makes."""
    env, log = recording_env(box, verb.env)
    log.unlink(missing_ok=True)
    Timed(verb.argvs, env, verb.input).run()
    calls: list[list[str]] = [[]]
    for item in log.read_bytes().split(b"\0")[:-1] if log.exists() else []:
        if item == b"e":
            calls.append([])
        else:
            calls[-1].append(item[1:].decode())
    return calls[:-1]


def command(call: list[str]) -> str:
    """The tmux command a call runs, past the socket and config flags."""
    args = iter(call)
    for arg in args:
        if arg in ("-S", "-L", "-f"):
            next(args, None)
        else:
            return arg
    return ""


# The same verbs in bash, as a shell tool would write them: the same tmux calls, the same checks.
BASH_HOOK = r"""
IFS= read -r -d '' payload
field() {
  [[ $payload =~ \"$1\"[[:space:]]*:[[:space:]]*\"([^\"]*)\" ]] && REPLY=${BASH_REMATCH[1]} || REPLY=
}
field hook_event_name; name=$REPLY
case $name in
  PreToolUse) action=tool ;; PostToolUse|PostToolUseFailure) action=working ;;
  UserPromptSubmit) action=prompt ;; *) action=other ;;
esac
[[ $action == other ]] && exit 0
field session_id; session=$REPLY; field cwd; cwd=$REPLY; field transcript_path; transcript=$REPLY
sep=$'\x1f'
out=$(tmux -S "${TMUX%%,*}" display-message -p -t "$TMUX_PANE" \
  "#{pane_id}$sep#{@roost-state}$sep#{@roost-reason}$sep#{@roost-session-id}$sep#{@roost-cwd}$sep#{@roost-harness}$sep#{@roost-transcript-path}")
IFS=$sep read -r id state reason had_session had_cwd harness had_transcript <<<"$out"
[[ $id == "$TMUX_PANE" ]] || exit 0
[[ $had_session == "$session" && $had_cwd == "$cwd" ]] || exit 1
[[ $harness == claude && $had_transcript == "$transcript" ]] || exit 1
[[ $state == working && -z $reason ]] || [[ $action == tool && $state == blocked ]] || exit 1
exit 0
"""

BASH_SCREEN = r"""
target=$1
panes=$(tmux -S "$ROOST_SOCKET" list-panes -a -F '#{pane_id}')
if [[ $'\n'$panes$'\n' != *$'\n'$target$'\n'* ]]; then
  echo "roost screen: can't find pane '$target'" >&2; exit 2
fi
mapfile -t rows < <(tmux -S "$ROOST_SOCKET" capture-pane -p -t "$target")
kept=()
for row in "${rows[@]}"; do [[ $row == *[![:space:]]* ]] && kept+=("$row"); done
first=$(( ${#kept[@]} > 40 ? ${#kept[@]} - 40 : 0 ))
(( ${#kept[@]} )) && printf '%s\n' "${kept[@]:first}"
exit 0
"""

BASH_READ = r"""
target=$1
sep=$'\x1f'
while IFS=$sep read -r id state reply_turn key; do
  [[ $id == "$target" ]] && break
done < <(tmux -S "$ROOST_SOCKET" list-panes -a \
  -F "#{pane_id}$sep#{@roost-state}$sep#{@roost-reply-turn}$sep#{start_time}-#{pid}")
[[ $id == "$target" ]] || { echo "roost read: can't find pane '$target'" >&2; exit 2; }
printf -v file '%s/roost/panes/%s/%s/replies/%06d' "$XDG_STATE_HOME" "$key" "${target#%}" "$reply_turn"
IFS= read -r -d '' text < "$file"
if [[ $state == working || $state == blocked ]]; then
  echo "roost read: '$target' is $state — this reply is from an earlier turn." >&2
fi
printf '%s' "$text"
exit 0
"""


def bash_verb(box: Sandbox, name: str, script: str) -> list[str]:
    path = box.root / f"{name}.bash"
    path.write_text(script)
    return ["/bin/bash", "--norc", "--noprofile", str(path)]


def report(samples: dict[str, list[float]], cases: dict[str, Timed]) -> dict[str, tuple[float, float]]:
    """Print each case's wall-clock median and p90 and its CPU median, each as a multiple of
    its verb's floor; returns ``{case: (wall median, CPU median)}`` in seconds."""
    medians = {
        name: (statistics.median(values), statistics.median(run[2] for run in cases[name].runs))
        for name, values in samples.items()
    }
    runs = min(len(values) for values in samples.values())
    print(f"\nthe hot paths against their floors  ({runs} interleaved runs each)")
    width = max(len(name) for name in samples)
    print(f"  {'':<{width}}  {'median':>9}  {'p90':>9}  {'x floor':>7}  {'CPU':>9}  {'x floor':>7}")
    for name, values in samples.items():
        wall, cpu = medians[name]
        floor = medians.get(f"{name.split()[0]} floor")
        ratios = (f"{wall / floor[0]:7.2f}", f"{cpu / floor[1]:7.2f}") if floor else ("", "")
        print(
            f"  {name:<{width}}  {wall * 1000:7.1f}ms  {p90(values) * 1000:7.1f}ms  {ratios[0]:>7}"
            f"  {cpu * 1000:7.1f}ms  {ratios[1]:>7}"
        )
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--budget", type=float, default=90, help="seconds of timing at most")
    parser.add_argument("--src", help="run roost from this source tree (PYTHONPATH)")
    args = parser.parse_args()

    with Sandbox() as box:
        if args.src:
            box.env["PYTHONPATH"] = str(Path(args.src).resolve())
        box.start("sleep 100000")
        panes = box.windows(PANES - 2) + box.windows(1, screen_tui("done"))
        hook_pane, read_pane, screen_pane = panes[0], panes[1], panes[-1]
        identity = {
            "@roost-session-id": SESSION,
            "@roost-cwd": str(ROOT),
            "@roost-harness": "claude",
            "@roost-transcript-path": TRANSCRIPT,
        }
        box.set_options(hook_pane, {**identity, "@roost-state": "working", "@roost-turn": "1"})
        in_pane = box.tmux_env()
        hook = [str(BIN / "rosterd-hook")]
        for step in (
            event("UserPromptSubmit", prompt="run the tests"),
            event("Stop", last_assistant_message=REPLY),
        ):
            Timed([hook], {**in_pane, "TMUX_PANE": read_pane}, step).run()
        if json.loads(box.roost("read", "--json", read_pane))["source"] != "reply":
            sys.exit("bench: the read pane has no kept reply")
        time.sleep(0.5)  # the screen pane draws once: let it, before its screen is compared

        roost = str(BIN / "roost")
        pre_tool = event("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
        hook_env = {**in_pane, "TMUX_PANE": hook_pane}
        verbs = {
            "hook": Timed([hook], hook_env, pre_tool),
            "screen": Timed([[roost, "screen", screen_pane]], box.env),
            "read": Timed([[roost, "read", read_pane]], box.env),
        }
        bash = {
            "hook": Timed([bash_verb(box, "hook", BASH_HOOK)], hook_env, pre_tool),
            "screen": Timed([[*bash_verb(box, "screen", BASH_SCREEN), screen_pane]], box.env),
            "read": Timed([[*bash_verb(box, "read", BASH_READ), read_pane]], box.env),
        }
        cases = {PYTHON_START: Timed([[str(PYTHON), "-c", "pass"]], box.env)}
        print(f"hot paths on {PANES} panes" + (f", roost from {args.src}" if args.src else ""))
        for name, verb in verbs.items():
            calls = tmux_calls(verb, box)
            writes = [c for c in calls if any(a in ("set-option", "set") for a in c)]
            said = ", ".join(command(call) for call in calls)
            print(f"  {name}: {len(calls)} tmux call(s) ({said}), {len(writes)} write(s)")
            if name == "hook" and (len(calls) != 1 or writes):
                print("  WARNING: the unchanged hook should cost exactly one tmux read and no write")
            if verb.output() != bash[name].output():
                sys.exit(
                    f"bench: the bash {name} does not do what roost's does: {bash[name].output()!r:.200}"
                )
            untmuxed = {k: v for k, v in verb.env.items() if k != "TMUX"}
            floor = Timed([[str(PYTHON), "-c", "pass"], *([TMUX, *call] for call in calls)], untmuxed)
            cases |= {name: verb, f"{name} floor": floor, f"{name} bash": bash[name]}
        for name, verb in verbs.items():
            print_imports(name, verb.argvs[0], verb.env, verb.input)
        samples = measure(cases, args.runs, args.budget)
    medians = report(samples, cases)
    print()
    for name in verbs:
        (wall, cpu), (floor_wall, floor_cpu) = medians[name], medians[f"{name} floor"]
        verdict = "met" if wall / floor_wall <= AIM else "NOT met"
        shell = medians[f"{name} bash"][0] / floor_wall
        print(
            f"aim: {name} within {AIM:g}x its floor: {wall / floor_wall:.2f}x, {verdict}"
            f" (CPU {cpu / floor_cpu:.2f}x; bash {shell:.2f}x)"
        )


if __name__ == "__main__":
    main()
