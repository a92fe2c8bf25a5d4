"""The verbs that drive headless sessions, each one request to the daemon's runner.

``rosterd start`` (``POST /sessions``) and ``spawn`` make a session; ``prompt`` sends a turn
(resuming a suspended session first) and, with ``--wait``, returns when the session is idle,
needs attention or has ended; ``cancel``, ``stop``, ``suspend`` and ``resume`` act on it, and
``handoff --to NODE`` moves it to another node of the swarm
(``allow`` and ``deny`` answer any session's permission: :mod:`roost.faces.cli.rosterd.answer`). ``--json``
prints the daemon's answer as sent (``record``, and ``wait`` for a prompt that waited). A wait
that ends elsewhere than asked (the timeout, or a person is needed while waiting for idle)
exits 1 after printing where the session is.

A prompt that waited prints its own turn's recap, or nothing: when the wait ended before the
turn did (the timeout, a permission), the recap the session holds is an earlier turn's, and
stderr says there is no reply yet; a turn that ended with no message is said so too.
"""

from __future__ import annotations

import json

from roost.base.errors import Conflict, UsageError
from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.output import complain
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

START = (
    "start --harness H --cwd DIR [--name L] [--policy auto|attention] [--model M] [--effort E] [--env K=V]"
)
USAGE = (
    (START, "start a headless session over the harness's ACP adapter"),
    ("prompt KEY TEXT [--wait idle|needs_attention|ended] [--timeout S]", "send a headless session a turn"),
    ("cancel KEY", "cancel a headless session's running turn"),
    ("suspend KEY", "stop its holder; the session stays, suspended, until addressed"),
    ("resume KEY", "start a suspended headless session again"),
    ("stop KEY", "end a headless session and every process under it"),
    ("handoff KEY --to NODE", "move a headless session to another node: suspended here, resumed there"),
    ("spawn KEY --harness H --cwd DIR [--name L]", "start a child session of a headless session"),
)
DONE = {"cancel": "cancelled", "suspend": "suspended", "resume": "resumed", "stop": "stopped"}
"""What each verb says it did, spelled out: English past tenses are not the verb plus "ed"."""
TIMEOUT_SLACK = 30.0
"""Seconds the client waits past a prompt's own ``--timeout`` for the daemon's answer."""
HANDOFF_TIMEOUT = 180.0
"""Seconds a handoff may take: the target starts the adapter and loads the session's history."""
NOT_YET = "no reply yet: this turn has not ended (the session's recap is an earlier turn's)"
NO_RECAP = "the turn ended with no recap"


def _env(values: list[str], usage: str) -> dict[str, str]:
    env = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"--env takes NAME=VALUE, got {item!r}; {usage}")
        env[name] = value
    return env


def _start_body(args: list[str], usage: str, positional: int) -> tuple[tuple[str, ...], dict, bool]:
    envs = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--env"]
    rest = [a for i, a in enumerate(args) if a != "--env" and (i == 0 or args[i - 1] != "--env")]
    options = parse(
        rest,
        usage,
        flags=("--json",),
        valued=("--harness", "--cwd", "--name", "--policy", "--model", "--effort"),
        positional=positional,
    )
    if "--harness" not in options.values or "--cwd" not in options.values:
        raise UsageError(usage)
    body = {name.lstrip("-"): value for name, value in options.values.items()}
    if envs:
        body["env"] = _env(envs, usage)
    return options.positional, body, "--json" in options.flags


def show(body: bytes, as_json: bool, verb: str) -> dict:
    if as_json:
        printing.raw(body)
    answer = json.loads(body)
    record = answer.get("record") or {}
    if not as_json:
        printing.line(
            f"{record.get('session_key')}: {verb}; {printing.label(record)} {printing.state(record)}"
        )
        if record.get("pending"):
            printing.line(f"  waits on: {printing.value(record['pending'].get('summary'))}")
    if answer.get("wait") is not None and _fresh(answer) and record.get("recap") and not as_json:
        printing.line(record["recap"])
    return answer


def _fresh(answer: dict) -> bool:
    """Whether a prompt's answer holds its own turn's recap; when it does not, or that turn
    left none, stderr says so, whatever the output. An answer that does not say (an older
    daemon's) counts as stale: a reply is never served as fresher than it is."""
    if answer["wait"].get("stale") is not False:
        complain(f"rosterd prompt: {NOT_YET}\n")
        return False
    if not (answer.get("record") or {}).get("recap"):
        complain(f"rosterd prompt: {NO_RECAP}\n")
    return True


def run(verb: str, args: list[str]) -> int:
    if verb == "start":
        usage = f"usage: rosterd {START} [--json]"
        _, body, as_json = _start_body(args, usage, 0)
        with Client() as client:
            show(client.post("/sessions", body), as_json, "started")
        return 0
    if verb == "spawn":
        usage = "usage: rosterd spawn KEY --harness H --cwd DIR [--name L] [--policy P] [--json]"
        (key,), body, as_json = _start_body(args, usage, 1)
        with Client() as client:
            show(client.post(path_of("sessions", key, "spawn"), body), as_json, "spawned")
        return 0
    if verb == "prompt":
        return _prompt(args)
    if verb == "handoff":
        return _handoff(args)
    usage = f"usage: rosterd {verb} KEY [--json]"
    options = parse(args, usage, flags=("--json",), positional=1)
    with Client(timeout=60) as client:
        body = client.post(path_of("sessions", options.positional[0], verb), {})
    show(body, "--json" in options.flags, DONE[verb])
    return 0


def _handoff(args: list[str]) -> int:
    """``handoff KEY --to NODE``: the record here (ended ``handed_off``) and where it went."""
    usage = "usage: rosterd handoff KEY --to NODE [--json]"
    options = parse(args, usage, flags=("--json",), valued=("--to",), positional=1)
    if "--to" not in options.values:
        raise UsageError(usage)
    with Client(timeout=HANDOFF_TIMEOUT) as client:
        body = client.post(
            path_of("sessions", options.positional[0], "handoff"), {"to": options.values["--to"]}
        )
    if "--json" in options.flags:
        printing.raw(body)
        return 0
    answer = json.loads(body)
    here, there = answer.get("record") or {}, answer.get("there") or {}
    node = (here.get("handed_to") or {}).get("node")
    printing.line(
        f"{here.get('session_key')}: handed off to {node} as {there.get('session_key')}; "
        f"{printing.label(there)} {printing.state(there)}"
    )
    return 0


def _prompt(args: list[str]) -> int:
    usage = "usage: rosterd prompt KEY TEXT [--wait idle|needs_attention|ended] [--timeout SECONDS] [--json]"
    options = parse(args, usage, flags=("--json",), valued=("--wait", "--timeout"), positional=2)
    key, text = options.positional
    body: dict = {"text": text}
    timeout = 600.0
    if "--wait" in options.values:
        body["wait"] = options.values["--wait"]
    if "--timeout" in options.values:
        raw = options.values["--timeout"]
        if not raw.isdigit() or int(raw) < 1:
            raise UsageError(f"--timeout takes whole seconds (1 or more), got {raw!r}")
        timeout = float(raw)
        body["timeout_s"] = int(raw)
    with Client(timeout=timeout + TIMEOUT_SLACK) as client:
        sent = client.post(path_of("sessions", key, "prompt"), body)
    answer = show(sent, "--json" in options.flags, "prompted")
    wait = answer.get("wait")
    if wait is not None and not wait.get("reached"):
        record = answer.get("record") or {}
        raise Conflict(f"the wait for {wait.get('until')} ended with the session {printing.state(record)}")
    return 0
