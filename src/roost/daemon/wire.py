"""The HTTP/1.1 protocol the daemon serves: uvicorn's h11 one, answering a request it cannot
parse (a bad ``Content-Length``, a malformed request line) with the API's JSON error shape
instead of uvicorn's plain text, so every client reads one kind of failure."""

from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

NOT_HTTP = "the request is not valid HTTP/1.1 (a bad request line, header or Content-Length)"


class JsonErrors(H11Protocol):
    """uvicorn's h11 protocol; only the answer to an unparseable request differs."""

    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"error": NOT_HTTP}).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        for event in (
            h11.Response(status_code=400, headers=headers),
            h11.Data(data=body),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()
