"""Benchmark ``roost send`` to a plain shell against a shell's own send and ``roost screen``.

The pane runs ``/bin/sh``: no badge, no turn, so send's proof is the screen (the text shows,
then leaves the input line after Enter). Each round times, interleaved (``common.measure``):

- ``roost send %N "echo hi"``;
- **bash send**: what a shell tool does, with no proof: ``load-buffer``, ``paste-buffer -p``,
  ``send-keys Enter`` in one bash script;
- ``roost screen %N`` on the same pane (it must stay no slower);
- the baselines: ``python -c pass`` and ``tmux list-panes -a``.

It prints each median as a multiple of the baselines and send's against the bash send, plus
the tmux calls of one send.

Run: ``.venv/bin/python bench/send_shell.py [--runs N] [--budget SECONDS] [--src DIR]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import BIN, Case, Sandbox, count_calls, measure, report

BASH_SEND = r"""
target=$1; shift
printf '%s' "$*" | tmux -S "$ROOST_SOCKET" load-buffer -b bash-send - \; \
  paste-buffer -p -d -b bash-send -t "$target"
tmux -S "$ROOST_SOCKET" send-keys -t "$target" Enter
"""


def command(call: str) -> str:
    """The tmux command a logged call ran (the first word after the global flags)."""
    words = iter(call.split())
    for word in words:
        if word in ("-S", "-L", "-f"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--budget", type=float, default=60, help="seconds of timing at most")
    parser.add_argument("--src", help="run roost from this source tree (PYTHONPATH)")
    args = parser.parse_args()
    with Sandbox() as box:
        if args.src:
            box.env["PYTHONPATH"] = str(Path(args.src).resolve())
        pane = box.start("/bin/sh")
        time.sleep(0.5)
        script = box.root / "send.bash"
        script.write_text(BASH_SEND)

        send = Case([str(BIN / "roost"), "send", pane, "echo hi"], box.env)
        cases = {
            **box.baselines(),
            "roost send": send,
            "bash send": Case(["/bin/bash", "--norc", "--noprofile", str(script), pane, "echo hi"], box.env),
            "roost screen": Case([str(BIN / "roost"), "screen", pane], box.env),
        }
        env, log = box.counting_env(box.env)
        calls = count_calls(Case(send.argv, env), log)
        print(f"roost send to a plain shell{', roost from ' + args.src if args.src else ''}")
        print(f"  one send: {len(calls)} tmux calls: {', '.join(map(command, calls))}")
        medians = report("send to a plain shell", measure(cases, args.runs, args.budget))
        print(f"\n  roost send / bash send: {medians['roost send'] / medians['bash send']:.2f}x")


if __name__ == "__main__":
    main()
