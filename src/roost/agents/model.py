"""An agent's manifest as one typed, immutable value, and the words its fields may hold.

One concept: what a checked manifest says, section by section (``[hook]``, ``[hook.gate]``,
``[acp]``, ``[mcp]``, ``[fork]``, ``[usage]``, ``[detect]``), each built from its table. Nothing
here reads a file: :mod:`roost.agents.schema` checks and merges the tables, and the loader
(:mod:`roost.agents.manifest`) builds these values from them.

The values are written out on :class:`_Value` rather than made by a standard library class
maker, because the hook builds a manifest on every event and must stay within 1.3x its floor
in ``bench/hotpaths.py``. Measured there (the hook's CPU time against its floor's, 30 runs):
1.24x as written; 1.44x as ``collections.namedtuple`` subclasses (importing ``collections``
and making eight classes, about 2 ms); 2.75x as frozen slotted dataclasses (``dataclasses``
imports ``inspect`` and ``re``, about 11 ms, and each class compiles its methods);
``typing.NamedTuple`` needs ``typing``, about 7 ms to import. The hook imports none of these.
"""

from __future__ import annotations

# What a hook event can make roost do; the engine knows these words and nothing per agent.
ACTIONS = (
    "prompt", "working", "tool", "blocked", "done", "interrupt", "error", "identify", "ready", "ignore",
)  # fmt: skip
# How an agent's hooks are installed: each kind but "none" is a module of roost.services.integrate.
HOOK_KINDS = ("none", "claude-settings", "codex-hooks", "asset")


class _Value:
    """An immutable value built from a checked table: what a frozen dataclass with slots
    would give (no assignment, equality and repr by field, no hash), at no import cost."""

    __slots__ = ()

    def _set(self, **values: object) -> None:
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def _items(self) -> tuple:
        return tuple(getattr(self, key) for key in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return self._items() == other._items() if other.__class__ is self.__class__ else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={getattr(self, key)!r}" for key in self.__slots__)
        return f"{self.__class__.__name__}({fields})"


class Hook(_Value):
    """``[hook]``: how the agent's hooks are installed and how their events read."""

    __slots__ = (
        "asset",
        "config",
        "default",
        "dirs",
        "disable_features",
        "events",
        "fields",
        "file",
        "gate",
        "http",
        "install",
        "kind",
        "matcher_events",
        "notifications",
        "own_dir",
        "reminders",
        "reports_dialogs",
        "reports_failures",
        "shared_process",
        "starts",
        "summaries",
        "timeout",
    )
    kind: str
    """One of :data:`HOOK_KINDS`: which module of ``roost.services.integrate`` installs the hooks."""
    default: bool
    """``rosterd-hook`` with no argument serves this agent (its host names the bare command)."""
    dirs: tuple[str, ...]
    file: str | None
    config: str | None
    asset: str | None
    own_dir: bool
    install: tuple[str, ...]
    http: tuple[str, ...]
    """Of ``install``, the events the host can post to a URL instead of running a program
    (``rosterd integrate install --http``); the rest stay command hooks. Empty: it cannot."""
    matcher_events: tuple[str, ...]
    timeout: int | None
    disable_features: tuple[str, ...]
    reports_dialogs: bool
    """The integration tells roost when a dialog opens. Where it cannot (its host tells an
    extension of a permission only by letting it answer, or a dialog is another extension's),
    the daemon's screen reader puts the dialog on the pane's badge instead."""
    reports_failures: bool
    """The integration tells roost when the model API fails a turn. Where it cannot (Codex fires
    no hook then), the daemon's screen reader ends the turn as failed from the screen's error."""
    shared_process: tuple[str, ...]
    reminders: tuple[str, ...]
    """Events (``Event`` or ``Event:notification``, as a hook's claim names them) the agent
    sends only after its dialog has been on screen a while: the screen reader ends one whose
    dialog is no longer drawn, however late it arrives (:mod:`roost.truth.roster.attention`)."""
    events: dict[str, str]
    notifications: dict[str, str]
    starts: dict[str, str]
    """A session start's ``source`` (why it started: ``startup``, ``resume``, ``clear``,
    ``compact``) to its action, where it says more than the event: an agent that starts at its
    prompt is ``ready`` for a prompt, one that restarts mid-turn after compacting is not."""
    fields: dict[str, str]
    summaries: dict[str, list]
    gate: Gate | None
    """How ``rosterd-hook --gate`` holds a permission request open, when the host lets a hook
    decide one; None: the person answers in the terminal only."""

    def __init__(self, table: dict) -> None:
        self._set(
            kind=table.get("kind", "none"),
            default=table.get("default", False),
            dirs=tuple(table.get("dirs", ())),
            file=table.get("file"),
            config=table.get("config"),
            asset=table.get("asset"),
            own_dir=table.get("own_dir", False),
            install=tuple(table.get("install", ())),
            http=tuple(table.get("http", ())),
            matcher_events=tuple(table.get("matcher_events", ())),
            timeout=table.get("timeout"),
            disable_features=tuple(table.get("disable_features", ())),
            reports_dialogs=table.get("reports_dialogs", True),
            reports_failures=table.get("reports_failures", True),
            shared_process=tuple(table.get("shared_process", ())),
            reminders=tuple(table.get("reminders", ())),
            events=dict(table.get("events", {})),
            notifications=dict(table.get("notifications", {})),
            starts=dict(table.get("starts", {})),
            fields=dict(table.get("fields", {})),
            summaries=dict(table.get("summaries", {})),
            gate=Gate(table["gate"]) if "gate" in table else None,
        )


class Gate(_Value):
    """``[hook.gate]``: a hook that may decide a permission for the person
    (``rosterd-hook --gate``), and the JSON that tells its host the decision.

    The gate holds ``event`` open while rosterd asks everywhere; ``allow`` or ``deny`` is
    printed when an answer comes (``{reason}`` in a string becomes the denial's reason), and
    nothing when none does, so the host's own dialog decides. "Always allow" is offered only
    when the event carries ``always_from`` entries of ``always_types``: those are put at
    ``always_at`` inside ``allow``. Requests of ``skip_tools`` (a question, not a tool) are
    not held."""

    __slots__ = ("allow", "always_at", "always_from", "always_types", "deny", "event", "skip_tools")
    event: str
    skip_tools: tuple[str, ...]
    always_from: str | None
    always_types: tuple[str, ...]
    always_at: tuple
    allow: dict
    deny: dict

    def __init__(self, table: dict) -> None:
        self._set(
            event=table["event"],
            skip_tools=tuple(table.get("skip_tools", ())),
            always_from=table.get("always_from"),
            always_types=tuple(table.get("always_types", ())),
            always_at=tuple(table.get("always_at", ())),
            allow=dict(table["allow"]),
            deny=dict(table["deny"]),
        )

    def holds(self, event: str, tool: str | None) -> bool:
        """Whether the gate holds this event open: its own event, for a tool it does not skip.
        The command gate and the daemon's hook port both ask here, so they hold the same ones."""
        return event == self.event and tool not in self.skip_tools

    def offered(self, payload: dict) -> list:
        """What "always allow" would grant: the event's suggestions of the kinds the gate keeps."""
        offered = payload.get(self.always_from) if self.always_from else None
        if not isinstance(offered, list):
            return []
        return [s for s in offered if isinstance(s, dict) and s.get("type") in self.always_types]

    def decided(self, decision: object, reason: object, offered: list) -> dict | None:
        """The JSON its host reads for rosterd's ``decision`` (``allow``, ``allow_always`` or
        ``reject``, with a rejection's ``reason``), or None for any other: the host's dialog
        decides. ``offered`` is what :meth:`offered` found in the event."""
        if decision in ("allow", "allow_always"):
            allow = _filled(self.allow, None)
            if decision == "allow_always" and offered:
                place = allow
                for step in self.always_at[:-1]:
                    place = place.setdefault(step, {})
                if self.always_at:
                    place[self.always_at[-1]] = offered
            return allow
        if decision == "reject":
            why = reason if isinstance(reason, str) and reason else "denied from rosterd"
            return _filled(self.deny, why)
        return None


def _filled(value: object, reason: str | None) -> object:
    """A deep copy of the manifest's JSON ``value``, with ``{reason}`` in its strings replaced
    when a reason is given."""
    if isinstance(value, dict):
        return {key: _filled(item, reason) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, reason) for item in value]
    if isinstance(value, str) and reason is not None:
        return value.replace("{reason}", reason)
    return value


class Acp(_Value):
    """``[acp]``: the adapter a headless session runs between its holder and the agent."""

    __slots__ = ("command", "extension", "package", "resumes", "transcripts")
    command: tuple[str, ...]
    """The adapter's argv; it speaks ACP on its stdin and stdout."""
    package: str | None
    """The npm package that provides ``command``, when it is not the agent's own binary."""
    extension: bool
    """The adapter lacks claims and a permission gate: roost's hook adapter supplies them."""
    resumes: bool
    """The adapter loads a session back (``session/load``) with its history. Where it cannot, a
    session of it is never suspended (it could not come back) and is not resumed."""
    transcripts: tuple[str, ...]
    """Where the harness keeps a session's files that ``session/load`` reads back: glob patterns
    relative to the home directory, ``{session_id}`` standing for the session's id. A handoff
    carries the files they match to the other node, at the same paths under its home."""

    def __init__(self, table: dict) -> None:
        self._set(
            command=tuple(table["command"]),
            package=table.get("package"),
            extension=table.get("extension", False),
            resumes=table.get("resumes", True),
            transcripts=tuple(table.get("transcripts", ())),
        )


class Mcp(_Value):
    """``[mcp]``: how the launcher tells this CLI of rosterd's MCP server."""

    __slots__ = ("args",)
    args: tuple[str, ...]
    """Arguments that follow the binary, with placeholders (see :mod:`roost.agents.mcpconfig`)."""

    def __init__(self, table: dict) -> None:
        self._set(args=tuple(table.get("args", ())))


class Fork(_Value):
    """``[fork]``: how the agent's CLI starts a new conversation from one it had, leaving that
    one as it was (Claude Code's ``--resume ID --fork-session``). An agent without it cannot be
    forked in a pane; a headless session forks where its ACP adapter offers ``session/fork``."""

    __slots__ = ("command", "drop")
    command: str
    """The fork's command line: ``{session_id}`` is the source's id, and ``{fork_id}`` a new
    one roost chooses, where the CLI takes one (so the fork is known before its first hook)."""
    drop: tuple[str, ...]
    """Flags of the source's command line that chose the conversation it opened (``--resume``,
    ``--continue``): the fork's command says which it opens, so these are left out of it."""

    def __init__(self, table: dict) -> None:
        self._set(command=table["command"], drop=tuple(table.get("drop", ())))


class Usage(_Value):
    """``[usage]``: where the agent itself records what each answer of its model used, and how
    to read it: the daemon counts an interactive session's turns from there
    (:mod:`roost.services.ledger.transcripts`), never from its prompts or replies.

    The files are JSON lines; ``files`` are glob patterns under each of ``roots`` (the first
    whose variables are all set, ``~`` the home directory), ``{session_id}`` standing for the
    session's id and ``{session_id:N}`` for its first N characters. A line whose fields equal
    ``when`` (keys are dotted paths into the line) is one answer: ``tokens`` maps each of the
    ledger's token names to the path of its count in that line, ``id`` names the answer (lines
    of one id are one answer, the last one read counting), ``input_includes`` names the counts
    the agent's input count already holds (they are taken off it), ``output_adds`` the counts
    billed as output that its output count leaves out (they are added to it: the ledger's
    ``output`` holds ``thought``, as Claude's and Codex's own counts do), and the model is read
    at ``model`` in the answer's line, or in the last line before it that matches
    ``model_when`` when that is set. ``at`` is the path of the answer's time (ISO 8601): with
    it, a file first seen after its session's answers were written is read from its start,
    each answer counted when it came after the agent's process started (a resumed
    conversation's earlier answers did not). With ``query``, the file is an SQLite database and
    the query's rows for the session (``:session_id``), in its order, are its lines: each row's
    first column one JSON document (OpenCode keeps its messages so)."""

    __slots__ = (
        "at",
        "files",
        "id",
        "input_includes",
        "model",
        "model_when",
        "output_adds",
        "query",
        "roots",
        "tokens",
        "when",
    )
    roots: tuple[str, ...]
    files: tuple[str, ...]
    when: dict[str, object]
    tokens: dict[str, tuple]
    id: tuple | None
    model: tuple | None
    model_when: dict[str, object] | None
    input_includes: tuple[str, ...]
    output_adds: tuple[str, ...]
    at: tuple | None
    query: str | None

    def __init__(self, table: dict) -> None:
        self._set(
            at=tuple(table["at"]) if "at" in table else None,
            roots=tuple(table.get("roots", ("~",))),
            files=tuple(table.get("files", ())),
            when=dict(table.get("when", {})),
            tokens={name: tuple(path) for name, path in table.get("tokens", {}).items()},
            id=tuple(table["id"]) if "id" in table else None,
            model=tuple(table["model"]) if "model" in table else None,
            model_when=dict(table["model_when"]) if "model_when" in table else None,
            input_includes=tuple(table.get("input_includes", ())),
            output_adds=tuple(table.get("output_adds", ())),
            query=table.get("query"),
        )


class ScreenProbe(_Value):
    """Where to look on screen and what to look for, as written: detection compiles it."""

    __slots__ = ("pattern", "region", "unless", "unless_after")
    region: str | None
    pattern: str | None
    unless: str | None
    unless_after: str | None

    def __init__(self, table: dict) -> None:
        self._set(
            region=table.get("region"),
            pattern=table.get("pattern"),
            unless=table.get("unless"),
            unless_after=table.get("unless_after"),
        )


class ScreenRule(_Value):
    """One ``[[detect.rules]]`` entry as written, and the file it came from."""

    __slots__ = ("event", "id", "overrules", "priority", "probe", "reason", "reason_from", "source", "state")
    id: str
    state: str | None
    priority: int
    probe: ScreenProbe
    reason: str | None
    reason_from: ScreenProbe | None
    event: str | None
    overrules: tuple[str, ...]
    """The state words of a higher source (a hook's ``done``) that this rule's reading ends:
    what the screen shows is truer than what that source said (detection checks the words)."""
    source: str

    def __init__(self, table: dict) -> None:
        found = table.get("reason_from")
        self._set(
            id=table["id"],
            state=table.get("state"),
            priority=table.get("priority", 0),
            probe=ScreenProbe(table),
            reason=table.get("reason"),
            reason_from=None if found is None else ScreenProbe(found),
            event=table.get("event"),
            overrules=tuple(table.get("overrules", ())),
            source=table["source"],
        )


class Detect(_Value):
    """``[detect]``: the screen and title rules, merged, and the files that gave them."""

    __slots__ = ("files", "identify", "identify_source", "rules")
    rules: tuple[ScreenRule, ...]
    identify: tuple[ScreenProbe, ...]
    identify_source: str | None
    files: tuple[str, ...]
    """The files whose ``[detect]`` section is in here, packaged first; empty: no section."""

    def __init__(self, table: dict) -> None:
        self._set(
            rules=tuple(ScreenRule(rule) for rule in table.get("rules", ())),
            identify=tuple(ScreenProbe(probe) for probe in table.get("identify", ())),
            identify_source=table.get("identify_source"),
            files=tuple(table.get("files", ())),
        )


class Manifest(_Value):
    """One agent's manifest: the packaged file with the user's merged over it."""

    __slots__ = (
        "acp",
        "aliases",
        "binaries",
        "detect",
        "display",
        "exit_command",
        "files",
        "fork",
        "hook",
        "mcp",
        "name",
        "rank",
        "resume_command",
        "resume_env",
        "session_context",
        "transcript",
        "usage",
        "value_flags",
    )
    name: str
    display: str
    rank: int | None
    """Where the launcher lists the agent: lower first; agents without a rank follow, by name."""
    binaries: tuple[str, ...]
    aliases: tuple[str, ...]
    exit_command: str | None
    resume_command: str | None
    resume_env: tuple[str, ...]
    """The environment variables a resumed session needs as it was started with (an API
    endpoint, a model, a config directory): ``roost restore`` carries them. Never a secret:
    they are written to the layout record."""
    value_flags: tuple[str, ...]
    """The CLI's flags that take a value (``--model``, ``-m``): what ``roost restore`` keeps of a
    command line as flags and their values. Every other word that is no flag is a prompt the
    conversation already holds, and is not sent again."""
    transcript: bool
    session_context: bool
    """Whether the hook tells the agent, as a session starts, which pane it runs in."""
    hook: Hook
    detect: Detect
    acp: Acp | None
    mcp: Mcp | None
    fork: Fork | None
    """How a conversation of it is forked in a pane; None: it cannot be."""
    usage: Usage | None
    files: tuple[str, ...]
    """The files it was made from, packaged first."""

    def __init__(self, table: dict) -> None:
        acp, mcp, fork, usage = table.get("acp"), table.get("mcp"), table.get("fork"), table.get("usage")
        self._set(
            name=table["name"],
            display=table.get("display") or table["name"],
            rank=table.get("rank"),
            binaries=tuple(table.get("binaries", ())),
            aliases=tuple(table.get("aliases", ())),
            exit_command=table.get("exit_command"),
            resume_command=table.get("resume_command"),
            resume_env=tuple(table.get("resume_env", ())),
            value_flags=tuple(table.get("value_flags", ())),
            transcript=table.get("transcript", False),
            session_context=table.get("session_context", True),
            hook=Hook(table.get("hook", {})),
            detect=Detect(table.get("detect", {})),
            acp=None if acp is None else Acp(acp),
            mcp=None if mcp is None else Mcp(mcp),
            fork=None if fork is None else Fork(fork),
            usage=None if usage is None else Usage(usage),
            files=tuple(table.get("files", ())),
        )

    def action(self, event: str, notification: str | None = None, start: str | None = None) -> str:
        """What ``event`` makes roost do: a Notification's ``notification`` first, then a session
        start's ``start`` (its source), then the event's own mapping."""
        if notification is not None and notification in self.hook.notifications:
            return self.hook.notifications[notification]
        if start is not None and start in self.hook.starts:
            return self.hook.starts[start]
        return self.hook.events.get(event, "ignore")

    def matches(self, command: str) -> bool:
        """``command`` (a pane's current command) is one of the agent's binaries or aliases."""
        return command in self.binaries or command in self.aliases
