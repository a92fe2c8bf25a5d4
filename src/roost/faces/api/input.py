"""``POST /sessions/{key}/input``: raw bytes into a pane, unfenced.

The independent raw-byte surface beside the fenced prompt (:mod:`roost.actions.rawinput`):
``{"data": BASE64}`` is written to the pane exactly as given, once. ``key`` is the pane
(``%N``) or a session key, pid or unique name that resolves to one.
"""

from __future__ import annotations

import base64

from starlette.requests import Request
from starlette.responses import JSONResponse

from roost.actions import rawinput
from roost.faces.api import context, schemas
from roost.faces.api.body import read
from roost.faces.api.errors import TooLarge
from roost.faces.api.operations import KEY, operation
from roost.faces.api.schemas import DATA_LIMIT

BODY_LIMIT = DATA_LIMIT * 4 // 3 + 4096


def decode(body: schemas.Input) -> bytes:
    """The bytes, within :data:`DATA_LIMIT` (a 413); the schema has checked the base64."""
    data = base64.b64decode(body.data)
    if len(data) > DATA_LIMIT:
        raise TooLarge(f"data is {len(data)} bytes, more than {DATA_LIMIT}", limit=DATA_LIMIT)
    return data


@operation(
    "write raw bytes to a pane, unfenced, once",
    answers={200: ("InputResult", "written")},
    fails=(400, 404, 409, 413, 503),
    body=schemas.Input,
    params=(KEY,),
    limit=BODY_LIMIT,
)
async def raw_input(request: Request) -> JSONResponse:
    data = decode(await read(request, schemas.Input))
    written = await rawinput.write(context.of(request).door, request.path_params["key"], data)
    return JSONResponse({"session_id": written.pane, "written_bytes": written.written_bytes})
