"""A stand-in for a harness whose permission requests run roost's gate hook.

``python gated_harness.py DIR`` reads ``DIR/payload.json`` (a ``PermissionRequest`` event),
runs ``rosterd-hook --gate`` as its own child with that event on stdin (as Claude Code runs its
hooks), writes the hook's pid to ``DIR/hook.pid`` when it starts and, when it ends,
``DIR/result.json``: its exit status, what it printed and how long it took. Then it stays
alive until killed, so its session stays live. Killing the hook by its pid is what Claude does
when the person answers the dialog in the terminal first.

The hook finds its session as it does under a real harness: this process, its nearest
ancestor that is not a shell.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    where = Path(sys.argv[1])
    hook = os.path.join(os.path.dirname(sys.executable), "rosterd-hook")
    payload = (where / "payload.json").read_bytes()
    began = time.monotonic()
    proc = subprocess.Popen([hook, "--gate"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    (where / "hook.pid").write_text(str(proc.pid))
    out, _ = proc.communicate(payload)
    result = {"returncode": proc.returncode, "stdout": out.decode(), "seconds": time.monotonic() - began}
    (where / "result.tmp").write_text(json.dumps(result))
    (where / "result.tmp").rename(where / "result.json")
    signal.pause()


if __name__ == "__main__":
    main()
