"""What an interactive session's turns used, read from the file its agent keeps of them.

An agent in a terminal pane tells rosterd nothing of tokens: no hook carries a count. But
Claude Code and Codex write every answer of their model, with what it used, to a JSON-lines
file of their own (a transcript, a rollout); OpenCode keeps its messages as rows of an SQLite
database, each a JSON document. The agent's manifest says where that file is and how an
answer's line reads (``[usage]``, :class:`roost.agents.model.Usage`), and for a database the
query whose rows, in order, are the session's lines; this module reads it, and knows no agent.

Only numbers leave it: a line is parsed when it holds the values an answer's line must hold,
and of it only the token counts, the answer's id and the model's id are kept. No prompt,
reply, tool input or other text of the file is stored, logged or passed on.

Reading is incremental and never counts a byte twice. Each session's :class:`Transcript` keeps
the offset up to which its turns were counted (of a database, the number of the query's rows); a
turn's end reads from there to the last whole line and moves the offset on
(:meth:`Transcript.turn`); a look mid-turn reads the same span without moving it
(:meth:`Transcript.peek`). A file first seen as the session is already under way is counted from
its end as it is then (what came before is not this daemon's to count, though the model it last
named is still the model in force), unless the manifest says where an answer's time is (``at``)
and the session's process start is known: then it is read from its start and an answer counts
when it came after that start. An agent that writes its file only once its first answer is in
(pi), or whose hook names the session late, would otherwise have that first answer taken for
history. One that does not exist yet is counted from its start when it appears. A file that
shrank was rewritten under its agent: it is taken from its new end, and nothing of it counted
again. Lines of one answer that straddle a turn's end are counted once: the ids of the last turn
counted are remembered.

Everything here does file IO: the daemon runs it in a thread, never on its loop.
"""

from __future__ import annotations

import glob
import json
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from roost.agents.model import Usage as Spec
from roost.agents.schema import SESSION_ID

READ_MAX = 64 * 1024 * 1024
"""Bytes of a transcript read at one turn's end; past it the rest is skipped, uncounted."""
TAIL = 65536
"""Bytes read back from a file's end to find where its last whole line ends."""
IDS_KEPT = 1024
"""Answer ids of the last turn counted that a later read still recognises."""
BUSY_SECONDS = 1.0
"""How long a read of an agent's database waits for the agent's own write to finish."""
COUNT_MAX = 1 << 53


@dataclass(frozen=True)
class Answer:
    """One answer of the model as its agent recorded it: its id (None: each line is one), the
    model's id, and its token counts under the ledger's names (``cached_write_1h`` is the part
    of ``cached_write`` written for an hour, where the agent says)."""

    id: str | None
    model: str | None
    tokens: Mapping[str, int]


def pattern_for(pattern: str, session_id: str) -> str:
    """``pattern`` with each placeholder filled in from ``session_id``."""
    return SESSION_ID.sub(lambda m: session_id[: int(m[1])] if m[1] else session_id, pattern)


def located(spec: Spec, session_id: str, env: Mapping[str, str] | None = None) -> str | None:
    """The file the agent keeps of session ``session_id``, under the first of the manifest's
    roots whose variables are all set; None when there is none (yet). Of several files a
    pattern finds, the first by name."""
    env = os.environ if env is None else env
    if not session_id or any(c in session_id for c in "/*?[]\0") or session_id in (".", ".."):
        return None
    for root in spec.roots:
        base = _expand(root, env)
        if base is None:
            continue
        for pattern in spec.files:
            found = sorted(glob.glob(os.path.join(glob.escape(base), pattern_for(pattern, session_id))))
            files = [path for path in found if os.path.isfile(path)]
            if files:
                return files[0]
        return None
    return None


def _expand(root: str, env: Mapping[str, str]) -> str | None:
    """A root with its variables filled in; None when one of them is not set."""
    parts = []
    for part in root.split("/"):
        if part.startswith("$"):
            value = env.get(part[1:])
            if not value:
                return None
            parts.append(value)
        else:
            parts.append(part)
    path = "/".join(parts)
    if path == "~" or path.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        path = home + path[1:]
    return path if os.path.isabs(path) else None


@dataclass
class Transcript:
    """One session's file as counted so far: its path, the offset counted up to, the model the
    last ``model_when`` line named, and the ids of the last turn counted."""

    spec: Spec
    path: str
    offset: int
    model: str | None = None
    counted: list[str] = field(default_factory=list)
    since: float | None = None
    """The session's process start (Unix seconds): an answer of the part of the file that was
    there when it was first seen (up to ``judged``) counts when its time is after it."""
    judged: int = 0
    session_id: str = ""
    """The session whose rows a database's query selects (a file is the session's own)."""

    @classmethod
    def opened(
        cls,
        spec: Spec,
        path: str,
        offset: int | None = None,
        since: float | None = None,
        session_id: str = "",
    ) -> Transcript:
        """A file first seen now, counted from ``offset`` (where the usage ledger says it was
        counted to before the daemon restarted), else from its start when ``since`` (the
        session's process start) can tell its answers from a resumed conversation's (``at``),
        else from its end (a session already under way), with the model the part not read last
        named, which its next answers are of."""
        seen = cls(spec, path, 0, session_id=session_id)
        if offset is None:
            if spec.query is not None:
                rows = _rows(path, spec.query, session_id, 0)
                offset = rows[1] if rows is not None else 0
            else:
                try:
                    size = os.stat(path).st_size
                except OSError:
                    size = 0
                offset = seen._whole(size)
            if since is not None and spec.at is not None:
                seen.since, seen.judged = since, offset
                return seen
        seen.offset = offset
        seen.model = seen._model_before(offset)
        return seen

    def turn(self) -> list[Answer]:
        """The answers written since the last turn counted, and the offset moved past them."""
        answers, end, model = self._read()
        self.offset, self.model = end, model
        self.counted = [answer.id for answer in answers if answer.id is not None][-IDS_KEPT:]
        return answers

    def peek(self) -> list[Answer]:
        """The answers of the turn under way so far; nothing is counted."""
        return self._read()[0]

    def _model_before(self, end: int) -> str | None:
        """The model the last ``model_when`` line before ``end`` names (None: the manifest reads
        each answer's own). Codex names it once per turn, before the turn's answers, and says
        who it is (its SessionStart hook) as that turn starts: the file is first seen with the
        line already written."""
        if self.spec.model_when is None or end == 0:
            return None
        if self.spec.query is not None:
            rows = _rows(self.path, self.spec.query, self.session_id, 0)
            lines = rows[0][:end] if rows is not None else []
        else:
            start = max(0, end - READ_MAX)
            try:
                with open(self.path, "rb") as f:
                    f.seek(start)
                    lines = f.read(end - start).splitlines()
            except OSError:
                return None
        markers = _markers(self.spec.model_when)
        for line in reversed(lines):
            if not all(marker in line for marker in markers):
                continue
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict) and _matches(doc, self.spec.model_when):
                named = _text(_at(doc, self.spec.model))
                if named is not None:
                    return named
        return None

    def _whole(self, size: int) -> int:
        """The end of the last whole line at or before ``size`` (a line being written is read
        once it is whole)."""
        start = max(0, size - TAIL)
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                tail = f.read(size - start)
        except OSError:
            return size
        cut = tail.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        return 0 if start == 0 else size

    def _read(self) -> tuple[list[Answer], int, str | None]:
        if self.spec.query is not None:
            return self._read_rows()
        try:
            with open(self.path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size < self.offset:  # rewritten under its agent: nothing of it is counted again
                    return [], self._whole(size), self.model
                f.seek(self.offset)
                data = f.read(min(size - self.offset, READ_MAX))
        except OSError:
            return [], self.offset, self.model
        cut = data.rfind(b"\n")
        if cut < 0:  # a line being written, or one past READ_MAX that is skipped whole
            return [], self.offset + (len(data) if len(data) == READ_MAX else 0), self.model
        judged = None
        if self.since is not None:
            judged = (self.since, data[: max(0, self.judged - self.offset)].count(b"\n"))
        lines = data[: cut + 1].splitlines()
        answers, model = _answers(self.spec, lines, self.model, set(self.counted), judged)
        return answers, self.offset + cut + 1, model

    def _read_rows(self) -> tuple[list[Answer], int, str | None]:
        """``_read`` of a database: the query's rows past the offset are the lines."""
        rows = _rows(self.path, self.spec.query or "", self.session_id, self.offset)
        if rows is None:
            return [], self.offset, self.model
        lines, count = rows
        if count < self.offset:  # rows taken back (a reverted turn): nothing is counted again
            return [], count, self.model
        judged = (self.since, max(0, self.judged - self.offset)) if self.since is not None else None
        answers, model = _answers(self.spec, lines, self.model, set(self.counted), judged)
        return answers, self.offset + len(lines), model


def _rows(path: str, query: str, session_id: str, start: int) -> tuple[list[bytes], int] | None:
    """The rows of ``query`` for ``session_id`` from row ``start`` on (each its first column, a
    JSON text) until they pass ``READ_MAX`` bytes (the rest are read next time), and how many
    rows it has in all; None when the database cannot be read. It is opened read-only: the
    agent's store is never written."""
    import sqlite3

    uri = f"file:{urllib.parse.quote(path)}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        db.execute("PRAGMA query_only = ON")
        lines: list[bytes] = []
        size = count = 0
        for row in db.execute(query, {"session_id": session_id}):
            count += 1
            if count <= start or size >= READ_MAX:
                continue
            value = row[0] if row else None
            line = value.encode() if isinstance(value, str) else value if isinstance(value, bytes) else b""
            size += len(line)
            lines.append(line)
        return lines, count
    except sqlite3.Error:
        return None
    finally:
        db.close()


def _markers(when: Mapping[str, object]) -> list[bytes]:
    """Bytes a line must hold to possibly match ``when``: each string value as JSON writes it."""
    return [json.dumps(value).encode() for value in when.values() if isinstance(value, str)]


def _answers(
    spec: Spec,
    lines: Iterable[bytes],
    model: str | None,
    counted: set[str],
    judged: tuple[float, int] | None = None,
) -> tuple[list[Answer], str | None]:
    """The answers in ``lines``, by id (the last line of an id counting, in the order ids first
    appear), skipping ids already ``counted`` and, with ``judged`` (a time and a count of
    lines), answers in the first lines of that count whose time is not after it (or cannot be
    read); and the model named last by a ``model_when`` line."""
    wanted, switches = _markers(spec.when), _markers(spec.model_when or {})
    found: dict[object, Answer] = {}
    for number, line in enumerate(lines):
        answer_line = all(marker in line for marker in wanted)
        model_line = spec.model_when is not None and all(marker in line for marker in switches)
        if not (answer_line or model_line):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        if model_line and _matches(doc, spec.model_when or {}):
            named = _text(_at(doc, spec.model))
            model = named or model
        if not (answer_line and _matches(doc, spec.when)):
            continue
        tokens = _tokens(spec, doc)
        if tokens is None:
            continue
        ident = _text(_at(doc, spec.id)) if spec.id is not None else None
        if ident is not None and ident in counted:
            continue
        if judged is not None and number < judged[1] and not _after(_at(doc, spec.at), judged[0]):
            continue
        own = model if spec.model_when is not None else _text(_at(doc, spec.model))
        key: object = ident if ident is not None else ("line", number)
        found.pop(key, None)
        found[key] = Answer(ident, own, tokens)
    return list(found.values()), model


def _matches(doc: Mapping[str, Any], when: Mapping[str, object]) -> bool:
    return all(_at(doc, tuple(path.split("."))) == value for path, value in when.items())


def _at(doc: object, path: tuple | None) -> object:
    if path is None:
        return None
    for step in path:
        if isinstance(step, int) and isinstance(doc, list) and -len(doc) <= step < len(doc):
            doc = doc[step]
        elif isinstance(step, str) and isinstance(doc, dict):
            doc = doc.get(step)
        else:
            return None
    return doc


def _after(value: object, since: float) -> bool:
    """Whether ``value``, an ISO 8601 time, is at or after ``since`` (Unix seconds)."""
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return False
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp() >= since


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 256 else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < COUNT_MAX else 0


def _tokens(spec: Spec, doc: Mapping[str, Any]) -> dict[str, int] | None:
    """An answer's counts under the ledger's names, with ``total``; None when it names none."""
    read = {name: _count(_at(doc, path)) for name, path in spec.tokens.items()}
    if not any(read.values()):
        return None
    included = sum(read.get(name, 0) for name in spec.input_includes)
    read["input"] = max(0, read.get("input", 0) - included)
    read["output"] = read.get("output", 0) + sum(read.get(name, 0) for name in spec.output_adds)
    read["cached_write_1h"] = min(read.get("cached_write_1h", 0), read.get("cached_write", 0))
    tokens = {
        name: read.get(name, 0) for name in ("input", "output", "thought", "cached_read", "cached_write")
    }
    tokens["total"] = tokens["input"] + tokens["output"] + tokens["cached_read"] + tokens["cached_write"]
    if read["cached_write_1h"]:
        tokens["cached_write_1h"] = read["cached_write_1h"]
    return tokens
