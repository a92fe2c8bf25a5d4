"""``POST /sessions/{key}/input``: raw bytes into a pane, unfenced.

The independent raw-byte surface beside the fenced prompt: no pins, no state checks, no
encoding. ``{"data": BASE64}`` is written to the pane exactly as given (no bracketed-paste
markers, line feeds kept as line feeds, no Enter added), in one tmux call, once. Any pane
of roost's tmux server can take input, whether or not an agent runs in it; ``key`` is the
pane (``%N``) or a session key, pid or unique name that resolves to one.

The bytes are not logged or stored: the paste buffer is deleted as it is pasted.
"""

from __future__ import annotations

import asyncio
import base64

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions.prompt import DEFINITE_FAILURES
from roost.api import rows, schemas, services
from roost.api.body import read
from roost.api.errors import NotFound, TooLarge, Unavailable
from roost.api.operations import KEY, operation
from roost.tmux import paste
from roost.tmux.server import Server

DATA_LIMIT = 65_536
"""Bytes one call may write."""
BODY_LIMIT = DATA_LIMIT * 4 // 3 + 4096


def decode(body: schemas.Input) -> bytes:
    """The bytes, within :data:`DATA_LIMIT` (a 413); the schema has checked the base64."""
    data = base64.b64decode(body.data)
    if len(data) > DATA_LIMIT:
        raise TooLarge(f"data is {len(data)} bytes, more than {DATA_LIMIT}", limit=DATA_LIMIT)
    return data


def write(tmux: Server, pane: str, data: bytes) -> tuple[int, str]:
    """One raw paste, under the pane's send lock so it never lands inside a prompt."""
    with paste.pane_lock(tmux, pane):
        proc = paste.paste_once(tmux, pane, data, bracket=False, raw=True)
    return proc.returncode, proc.stderr.decode(errors="replace").strip()


@operation(
    "write raw bytes to a pane, unfenced, once",
    answers={200: ("InputResult", "written")},
    fails=(400, 404, 409, 413, 503),
    body=schemas.Input,
    params=(KEY,),
)
async def raw_input(request: Request) -> JSONResponse:
    daemon = services.of(request)
    data = decode(await read(request, schemas.Input, BODY_LIMIT))
    key = request.path_params["key"]
    if daemon.tmux is None:
        raise NotFound(f"no session {key!r}")
    pane = rows.session_pane(daemon.live.roster, daemon.tmux.socket, key)
    code, error = await asyncio.to_thread(write, daemon.tmux, pane, data)
    if code != 0:
        if any(failure in error for failure in DEFINITE_FAILURES):
            raise NotFound(f"no session {key!r}")
        raise Unavailable(f"tmux could not write to {pane}: {error}")
    return JSONResponse({"session_id": pane, "written_bytes": len(data)})
