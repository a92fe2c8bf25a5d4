"""What the daemon's document declares in roost's own keywords, given to the cases schemathesis
makes (``SCHEMATHESIS_HOOKS``, loaded by the ``st`` process of tests/api/test_fuzz.py).

The document states every rule the daemon checks; those no JSON Schema can say it states with
keywords of roost's own (see :mod:`roost.faces.api.openapi`), which schemathesis does not know:

============================  ===============================================================
keyword                       what this module does with a generated case
============================  ===============================================================
``x-max-bytes``               a body (its JSON as sent) or a text (its UTF-8) past it is
``x-max-decoded-bytes``       dropped: the daemon answers 413 for its size, whatever else it
                              holds, so it tests nothing of the schema
``x-most-ahead-ms``, ``-s``   a moment the schema allows but the daemon's clock does not (too
                              far ahead, or before 1970) is moved to just ahead of now
``x-existing-folder``         a path the schema allows that names no folder here becomes ``/``
``x-resolved-host``           a URL the schema allows whose host is a name this machine's
                              resolver does not know (a ``ts.net`` name) names localhost
============================  ===============================================================

Only a value the schema allows is replaced, and only by another it allows, so a valid case stays
valid and an invalid one stays invalid where it was made so. The clock, the file system and the
resolver are the machine's state, which no document can hold: this is where the test supplies it.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import schemathesis
from jsonschema import Draft202012Validator
from schemathesis.core import NOT_SET

AHEAD_MS = 500
"""At most how far past now a moved deadline lands: a wait it ends is over well within the run's
request timeout."""
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})", re.IGNORECASE)


def _takes_a_body(context: Any) -> bool:
    """Whether the operation declares a body: the hooks below apply to those alone. On every
    operation they would wrap every strategy, and behind a map schemathesis filters its
    generated path parameters so often that hypothesis gives up (``GET /agents/{session}``)."""
    return _request_body(context.operation) is not None


@schemathesis.hook.apply_to(_takes_a_body)
def filter_case(context: Any, case: Any) -> bool:
    """Keep a case only while its body and its texts fit the sizes the document declares."""
    declared = _request_body(context.operation)
    if declared is None or case.body is NOT_SET:
        return True
    limit = declared.get("x-max-bytes")
    try:
        size = len(json.dumps(case.body, allow_nan=False).encode())
    except (TypeError, ValueError):
        return True
    if limit is not None and size > limit:
        return False
    return all(_fits(value, schemas) for _, _, value, schemas in _properties(case.body, declared, context))


@schemathesis.hook.apply_to(_takes_a_body)
def map_case(context: Any, case: Any) -> Any:
    """Give each value that the machine's state decides (the clock, the folders, the resolver)
    one the state allows, where the schema allows it."""
    declared = _request_body(context.operation)
    if declared is None or case.body is NOT_SET:
        return case
    for holder, key, value, schemas in list(_properties(case.body, declared, context)):
        for schema in schemas:
            moved = _moved(value, schema)
            if moved is not value:
                holder[key] = value = moved
    return case


def _request_body(operation: Any) -> dict[str, Any] | None:
    declared = operation.definition.raw.get("requestBody")
    return declared if isinstance(declared, dict) else None


def _pointer(root: dict[str, Any], ref: str) -> Any:
    found: Any = root
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return found


def _parts(schema: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    """``schema`` and every schema it is made of (allOf, anyOf, oneOf), each ``$ref`` followed."""
    while isinstance(schema, dict) and "$ref" in schema:
        schema = _pointer(root, schema["$ref"])
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key, ()):
            found += _parts(part, root)
    return found


def _properties(body: Any, declared: dict[str, Any], context: Any) -> Iterator[tuple[Any, Any, Any, list]]:
    """(the object, the key, the value, every schema part the document gives that key) for each
    value of every object in the body, nested ones too."""
    root = context.operation.schema.raw_schema
    schema = declared.get("content", {}).get("application/json", {}).get("schema")
    yield from _walk(body, _parts(schema, root), root)


def _walk(value: Any, parts: list[dict[str, Any]], root: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in list(value.items()):
            inner = [p for part in parts for p in _parts(part.get("properties", {}).get(key), root)]
            yield value, key, item, inner
            yield from _walk(item, inner, root)
    elif isinstance(value, list):
        inner = [p for part in parts for p in _parts(part.get("items"), root)]
        for item in value:
            yield from _walk(item, inner, root)


def _fits(value: Any, schemas: list[dict[str, Any]]) -> bool:
    """Whether a text is within the bytes its schema declares (as UTF-8, or decoded from base64)."""
    if not isinstance(value, str):
        return True
    for schema in schemas:
        most = schema.get("x-max-bytes")
        if most is not None and len(value.encode(errors="surrogatepass")) > most:
            return False
        most = schema.get("x-max-decoded-bytes")
        if most is not None and len(_decoded(value)) > most:
            return False
    return True


def _decoded(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _moved(value: Any, schema: dict[str, Any]) -> Any:
    """``value``, or one the machine's state allows where ``schema`` (the part carrying the
    keyword) allows ``value`` and the state does not."""
    if "x-most-ahead-ms" in schema and _allowed(value, schema):
        now = time.time() * 1000
        if value > now + schema["x-most-ahead-ms"]:
            return math.floor(now) + value % AHEAD_MS
    if "x-most-ahead-s" in schema:
        return _moment(value, schema["x-most-ahead-s"])
    if schema.get("x-existing-folder") and _allowed(value, schema) and not os.path.isdir(value):
        return "/"
    if schema.get("x-resolved-host") and _allowed(value, schema):
        return _resolvable(value)
    return value


def _allowed(value: Any, schema: dict[str, Any]) -> bool:
    return not isinstance(value, bool) and Draft202012Validator(schema).is_valid(value)


def _moment(value: Any, ahead: float) -> Any:
    """A moment (seconds, or an RFC 3339 time) after 1970 and at most ``ahead`` seconds past now."""
    now = time.time()
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return value if value <= now + ahead else now
    if isinstance(value, str) and RFC3339.fullmatch(value):
        try:
            at = datetime.fromisoformat(value.upper().replace("Z", "+00:00")).timestamp()
        except ValueError:
            return value
        if not 0 < at <= now + ahead:
            return datetime.fromtimestamp(now, UTC).isoformat().replace("+00:00", "Z")
    return value


def _resolvable(url: str) -> str:
    """The URL, its host ``localhost`` where it named another name (none here resolves)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removesuffix(".")
    if not re.search(r"[a-z]", host) or host == "localhost" or ":" in host:
        return url
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"localhost{port}", parts.path, parts.query, parts.fragment))
