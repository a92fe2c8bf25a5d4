"""Each body limit the document declares (``x-max-bytes`` on a request body) is the one its route
refuses past: a byte more is a 413 carrying that limit, and a body of exactly the limit is read."""

from __future__ import annotations

import subprocess
from urllib.parse import quote

import httpx

from tests.api.helpers import about


def test_every_declared_body_limit_is_the_routes(api: httpx.Client, proc: subprocess.Popen[bytes]) -> None:
    assert api.post("/claim", json=about(proc, activity="working")).status_code == 200
    snapshot = api.get("/snapshot").json()
    key = quote(snapshot["records"][0]["session_key"], safe="")
    node = quote(snapshot["node"], safe="")  # the routes under /swarm/{node} run here for this node
    doc = api.get("/openapi.json").json()
    declared = {
        (path, method): op["requestBody"]["x-max-bytes"]
        for path, ops in doc["paths"].items()
        for method, op in ops.items()
        if "requestBody" in op
    }
    assert declared and len(set(declared.values())) > 1
    for (path, method), limit in declared.items():
        target = path.replace("{key}", key).replace("{node}", node)
        over = api.request(method, target, content=b"{}" + b" " * (limit - 1))
        assert (over.status_code, over.json().get("limit")) == (413, limit), (path, over.text)
        exact = api.request(method, target, content=b"{}" + b" " * (limit - 2))
        assert exact.status_code != 413, (path, exact.text)
