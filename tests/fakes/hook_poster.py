"""Post one hook event as Claude Code's HTTP hook does, from this process, then stay alive.

``python hook_poster.py URL OUT EVENT [PANE]`` POSTs the JSON ``EVENT`` to ``URL`` with
``X-Pane`` set to ``PANE`` (``$TMUX_PANE`` when not given) and writes the answer's status and
body to ``OUT`` (through a rename, so a reader never sees half of it). It then reads stdin,
so its pane, and its session, stay live while a test looks: each line that holds an event is
posted the same way, from the same process, its answer written to ``OUT`` again; an empty line
or the end of input ends it.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def post(url: str, event: bytes, pane: str, timeout: float = 120) -> str:
    """POST ``event`` from this process, ``pane`` in ``X-Pane``; the answer's status and body."""
    request = urllib.request.Request(
        url, data=event, headers={"Content-Type": "application/json", "X-Pane": pane}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return f"{answer.status} {answer.read().decode()}"
    except urllib.error.HTTPError as refused:
        return f"{refused.code} {refused.read().decode()}"
    except OSError as error:
        return f"failed {error}"


def main() -> None:
    url, out, event = sys.argv[1:4]
    pane = sys.argv[4] if len(sys.argv) > 4 else os.environ.get("TMUX_PANE", "")
    while event:
        said = post(url, event.encode(), pane)
        with open(out + ".tmp", "w") as written:
            written.write(said)
        os.rename(out + ".tmp", out)
        print("posted", flush=True)
        event = sys.stdin.readline().strip()


if __name__ == "__main__":
    main()
