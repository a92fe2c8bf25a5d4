"""``roost api …``: the web app's CLI, over the daemon's unix socket. See ``HELP`` for the
contract (output and exit codes); the daemon decides everything, this only asks and prints."""

from __future__ import annotations

import os
import sys
import time

from roost.base import cjson
from roost.base.errors import (
    Conflict,
    DeliveredNoTurn,
    TooLarge,
    Unavailable,
    UsageError,
)
from roost.base.statusrow import FIELDS, STATES
from roost.faces.cli import output
from roost.faces.cli.daemonclient import TIMEOUT, Client, Lost, Refused, Unreachable, path_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

USAGE = """usage: roost api agent-status SESSION [--json]
       roost api agents [--json]
       roost api agent-wait SESSION --until STATES --timeout DURATION
       roost api agent-prompt SESSION TEXT [--wait --until STATES --timeout DURATION]
       roost api input SESSION [TEXT]"""

HELP = f"""{USAGE}

SESSION   a pane of roost's tmux server (%N), or a rosterd session key, pid or unique name
STATES    a comma list of distinct states: idle, working, blocked
DURATION  an integer with ms, s or m: 1ms to 5m

agent-status, agents  headered TSV, one row per session (source "legacy" when absent);
                      --json: the daemon's /agents body as sent: the row with exactly its
                      eleven fields (agents: {{"agents": [row, ...]}})
agent-wait            pins the session's status_epoch and occupant_id, then prints one
                      outcome: matched, timed_out, occupant_changed or session_closed
agent-prompt          pins status_epoch, occupant_id and revision; the daemon writes TEXT
                      (at most 16384 UTF-8 bytes) and one Enter only while they hold.
                      Prints TSV: input (accepted, ambiguous, rejected), written_bytes,
                      code (why it was rejected) and wait (the outcome, with --wait)
input                 writes TEXT, or standard input, to the pane as raw bytes, unfenced

exit  0  read, written, accepted (and matched, with --wait)
      1  usage error; prompt rejected; an outcome other than matched
      2  rosterd unreachable, or no such session
      4  input ambiguous: it may have arrived; never send it again"""

PROMPT_COLUMNS = ("input", "written_bytes", "code", "wait")
TEXT_LIMIT = 16_384
INPUT_LIMIT = 65_536
LONGEST_MS = 300_000
PROMPT_DEADLINE_MS = 10_000
"""How long a prompt without --wait may take to be admitted (the pane's send lock)."""
SLACK = 10.0
"""Seconds past a deadline to wait for the daemon's answer before calling it lost."""
_UNITS = {"ms": 1, "s": 1000, "m": 60_000}
"""Longest suffix first: "5ms" ends with "s" too."""


def duration_ms(text: str) -> int:
    """An integral duration in ms, s or m, as milliseconds (``re`` is not worth its import)."""
    unit = next((unit for unit in _UNITS if text.endswith(unit)), "")
    number = text[: -len(unit)] if unit else ""
    value = int(number) * _UNITS[unit] if number.isascii() and number.isdigit() else 0
    if not 1 <= value <= LONGEST_MS:
        raise UsageError(f"usage: --timeout takes an integer with ms, s or m, from 1ms to 5m (got {text!r})")
    return value


def states(text: str) -> list[str]:
    words = text.split(",")
    if not all(word in STATES for word in words) or len(set(words)) != len(words):
        raise UsageError(
            f"usage: --until takes a comma list of distinct states: idle,working,blocked (got {text!r})"
        )
    return words


def _options(
    args: list[str], flags: tuple[str, ...] = (), valued: tuple[str, ...] = ()
) -> tuple[list[str], dict[str, str]]:
    """Positional arguments and the options given; ``--`` ends the options."""
    positional: list[str] = []
    given: dict[str, str] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if arg == "--":
            positional += rest
            break
        if arg in flags:
            given[arg] = ""
        elif name in valued:
            if not eq:
                if not rest:
                    raise UsageError(USAGE)
                value = rest.pop(0)
            given[name] = value
        elif arg.startswith("--") or arg == "-h":
            raise UsageError(USAGE)
        else:
            positional.append(arg)
    return positional, given


def _fetch(target: str, body: Any = None, timeout: float = TIMEOUT) -> bytes:
    """The daemon's answer to ``GET target`` (``POST`` with a ``body``), its bytes as sent, on a
    connection of its own. A refusal is left to the caller (:func:`_failure`); an unreachable
    daemon is said in the words ``roost api`` has always used."""
    try:
        with Client(timeout=timeout) as client:
            return client.get(target) if body is None else client.post(target, body)
    except Unreachable as error:
        raise _reworded(error) from None


def _parsed(content: bytes) -> Any:
    try:
        return cjson.loads(content)
    except ValueError:
        raise Unavailable("rosterd answered without JSON") from None


def _call(target: str, body: Any = None, timeout: float = TIMEOUT) -> Any:
    """:func:`_fetch`, as JSON."""
    return _parsed(_fetch(target, body, timeout))


def _answer(target: str, body: Any = None, timeout: float = TIMEOUT, session: str | None = None) -> Any:
    """:func:`_call`, with a refusal mapped to its failure."""
    try:
        return _call(target, body, timeout)
    except Refused as refused:
        raise _failure(refused, session) from None


def _failure(refused: Refused, session: str | None) -> Exception:
    """The daemon's refusal as ``roost api``'s failure, by the one mapping of statuses
    (:data:`roost.faces.cli.daemonclient.FAILURES`): 404 is no such session (exit 2), a 5xx an
    unavailable daemon (2), any other a refusal (1)."""
    status, doc = refused.status, refused.doc
    if doc is None:
        message = f"rosterd answered {status} without JSON"
    else:
        message = str(doc.get("error") or f"rosterd answered {status}")
    if status == 404 and session:
        message = f"no session {session!r}"
    return refused.failure(message)


def _reworded(error: Unreachable) -> Unreachable:
    """``error`` in ``roost api``'s words, which scripts have matched since it shipped."""
    where, cause = error.socket_path, error.cause
    if isinstance(error, Lost):
        why = f"rosterd did not answer on {where}: {str(cause) or type(cause).__name__}"
    elif isinstance(cause, FileNotFoundError):
        why = f"rosterd is not running: no socket at {where} (start it with `rosterd daemon`)"
    elif isinstance(cause, ConnectionRefusedError):
        why = f"rosterd is not running: {where} refuses connections (start it with `rosterd daemon`)"
    else:
        why = f"rosterd is not reachable on {where}: {cause}"
    return type(error)(where, cause, why)


def _cell(name: str, value: object) -> str:
    if value is None:
        return "legacy" if name == "source" else "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    return " ".join(str(value).split()) or "-"


def _table(rows: list[dict[str, Any]], header: tuple[str, ...] = FIELDS) -> None:
    lines = ["\t".join(header), *("\t".join(_cell(name, row.get(name)) for name in header) for row in rows)]
    output.line("\n".join(lines))  # cells hold no tab or newline: what is left is escaped


def _read(target: str, session: str | None = None) -> tuple[bytes, Any]:
    """``GET target``: its body as sent, and as JSON; a refusal mapped to its failure."""
    try:
        content = _fetch(target)
    except Refused as refused:
        raise _failure(refused, session) from None
    return content, _parsed(content)


def _as_sent(content: bytes) -> None:
    """``--json``: the daemon's body byte for byte, then a newline, so a script reading the CLI
    and one reading the route parse the same document."""
    out = sys.stdout.buffer
    out.write(content + b"\n")
    out.flush()


def _row(session: str) -> dict[str, Any]:
    return _read(path_of("agents", session), session)[1]


def agent_status(args: list[str]) -> int:
    positional, given = _options(args, ("--json",), ())
    if len(positional) != 1:
        raise UsageError(USAGE)
    content, row = _read(path_of("agents", positional[0]), positional[0])
    if "--json" in given:
        _as_sent(content)
    else:
        _table([row])
    return 0


def agents(args: list[str]) -> int:
    positional, given = _options(args, ("--json",), ())
    if positional:
        raise UsageError(USAGE)
    content, doc = _read("/agents")
    if "--json" in given:
        _as_sent(content)
    else:
        _table(doc["agents"])
    return 0


def _waiting(given: dict[str, str], names: tuple[str, ...]) -> tuple[list[str], int] | None:
    """The wait options, ``--until`` and ``--timeout`` among them: all of ``names`` or none."""
    present = [name for name in names if name in given]
    if not present:
        return None
    if len(present) != len(names):
        raise UsageError(f"usage: {' '.join(names)} go together\n{USAGE}")
    return states(given["--until"]), duration_ms(given["--timeout"])


def agent_wait(args: list[str]) -> int:
    began = time.time()
    positional, given = _options(args, valued=("--until", "--timeout"))
    if len(positional) != 1:
        raise UsageError(USAGE)
    wait = _waiting(given, ("--until", "--timeout"))
    if wait is None:
        raise UsageError(USAGE)
    until, timeout_ms = wait
    row = _row(positional[0])
    body = {
        "status_epoch": row["status_epoch"],
        "occupant_id": row["occupant_id"],
        "until": until,
        "deadline_ms": round(began * 1000) + timeout_ms,
    }
    target = path_of("sessions", row["session_id"], "wait")
    doc = _answer(target, body, timeout_ms / 1000 + SLACK, positional[0])
    print(doc["outcome"])
    return 0 if doc["outcome"] == "matched" else 1


def _text(value: str) -> str:
    try:
        size = len(value.encode())
    except UnicodeEncodeError:
        raise UsageError("TEXT is not valid UTF-8") from None
    if not value:
        raise UsageError(f"usage: TEXT must not be empty\n{USAGE}")
    if size > TEXT_LIMIT:
        raise TooLarge(f"TEXT is {size} UTF-8 bytes, more than {TEXT_LIMIT}; nothing was sent")
    return value


def agent_prompt(args: list[str]) -> int:
    began = time.time()
    positional, given = _options(args, ("--wait",), ("--until", "--timeout"))
    if len(positional) != 2:
        raise UsageError(USAGE)
    session, text = positional[0], _text(positional[1])
    wait = _waiting(given, ("--wait", "--until", "--timeout"))
    row = _row(session)
    body: dict[str, Any] = {
        "text": text,
        "status_epoch": row["status_epoch"],
        "occupant_id": row["occupant_id"],
        "revision": row["revision"],
        "deadline_ms": round(began * 1000) + (wait[1] if wait else PROMPT_DEADLINE_MS),
    }
    if wait:
        body["wait"] = {"until": wait[0]}
    target = path_of("sessions", row["session_id"], "prompt")
    budget = (wait[1] if wait else PROMPT_DEADLINE_MS) / 1000 + SLACK
    try:
        doc = _call(target, body, budget)
    except Lost as lost:
        _table([{"input": "ambiguous", "written_bytes": None}], PROMPT_COLUMNS)
        message = f"{lost.message}; the text may have arrived: never send it again"
        raise DeliveredNoTurn(message) from None
    except Refused as refused:
        if refused.status != 409 or (refused.doc or {}).get("input") != "rejected":
            raise _failure(refused, session) from None
        doc = refused.doc
    outcome = (doc.get("wait") or {}).get("outcome")
    _table([{**doc, "wait": outcome}], PROMPT_COLUMNS)
    if doc["input"] == "rejected":
        raise Conflict(f"agent-prompt rejected: {doc.get('reason') or doc.get('code')}")
    if doc["input"] == "ambiguous":
        raise DeliveredNoTurn(f"agent-prompt ambiguous: {doc.get('reason')}; never send it again")
    return 0 if wait is None or outcome == "matched" else 1


def raw_input(args: list[str]) -> int:
    positional, _ = _options(args)
    if len(positional) not in (1, 2):
        raise UsageError(USAGE)
    data = os.fsencode(positional[1]) if len(positional) == 2 else sys.stdin.buffer.read()
    if not data:
        raise UsageError(f"usage: there is nothing to write\n{USAGE}")
    if len(data) > INPUT_LIMIT:
        raise TooLarge(f"input is {len(data)} bytes, more than {INPUT_LIMIT}; nothing was sent")
    import base64

    body = {"data": base64.b64encode(data).decode()}
    _answer(path_of("sessions", positional[0], "input"), body, session=positional[0])
    return 0


VERBS = {
    "agent-status": agent_status,
    "agents": agents,
    "agent-wait": agent_wait,
    "agent-prompt": agent_prompt,
    "input": raw_input,
}


def run(verb: str, args: list[str]) -> int:
    if args and args[0] in ("help", "--help", "-h"):
        print(HELP)
        return 0
    command = VERBS.get(args[0]) if args else None
    if command is None:
        raise UsageError(USAGE)
    return command(args[1:])
