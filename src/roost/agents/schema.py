"""Checking manifest files and laying a user's file over the packaged one.

Only the loader (:mod:`roost.agents.manifest`) calls this, and only when a manifest changed
since it was last cached: the hook pays for ``tomllib`` and these checks once per version of
a file, never per event. Written by hand rather than with a validation library: the ones that
fit (msgspec, pydantic) take 50 ms or more to import, which the loader cannot pay on a miss
inside an 800 ms hook, and the checks are few.

A file is checked on its own, so a problem names the file that has it and the field
(``[hook.events]: Stop must be one of …``). Then the user's file is merged over the packaged
one (:func:`merge`), and what only the whole can say (an adapter kind without its files) is
checked last, blaming the user's file when the packaged one alone was complete.

What is checked here is the shape: known keys, types, required keys, actions the engine
knows. Whether a screen rule's region, regular expressions and reason template are usable is
detection's to say (:mod:`roost.truth.detect.manifests` compiles them).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Collection
from typing import Any

from roost.agents.model import ACTIONS, HOOK_KINDS
from roost.base.errors import SetupError


class ManifestError(SetupError):
    """A manifest file that cannot be used; the message names the file and the field."""

    def __init__(self, message: str, agent: str | None = None) -> None:
        super().__init__(message)
        self.agent = agent


Check = Callable[[object], str | None]
"""A value's check: None when it is good, else what it must be (``"a string"``)."""


def _text(value: object) -> str | None:
    return None if isinstance(value, str) else "a string"


def _flag(value: object) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _number(value: object) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) else "an integer"


def _texts(value: object) -> str | None:
    ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    return None if ok else "a list of strings"


def _action(value: object) -> str | None:
    return None if value in ACTIONS else f"one of {', '.join(ACTIONS)}"


def _kind(value: object) -> str | None:
    return None if value in HOOK_KINDS else f"one of {', '.join(HOOK_KINDS)}"


def _steps(value: object) -> str | None:
    ok = isinstance(value, list) and all(isinstance(step, str | int) for step in value)
    return None if ok else 'a list of keys and positions, such as ["questions", 0, "question"]'


TOP: dict[str, Check] = {
    "name": _text,
    "display": _text,
    "rank": _number,
    "binaries": _texts,
    "aliases": _texts,
    "exit_command": _text,
    "resume_command": _text,
    "resume_env": _texts,
    "value_flags": _texts,
    "transcript": _flag,
    "session_context": _flag,
}
HOOK: dict[str, Check] = {
    "kind": _kind,
    "default": _flag,
    "dirs": _texts,
    "file": _text,
    "config": _text,
    "asset": _text,
    "own_dir": _flag,
    "install": _texts,
    "matcher_events": _texts,
    "timeout": _number,
    "disable_features": _texts,
    "reports_dialogs": _flag,
    "reports_failures": _flag,
    "shared_process": _texts,
    "reminders": _texts,
    "http": _texts,
}
HOOK_MAPS: dict[str, Check] = {
    "events": _action,
    "notifications": _action,
    "starts": _action,
    "fields": _text,
    "summaries": _steps,
}
ACP: dict[str, Check] = {
    "command": _texts,
    "package": _text,
    "extension": _flag,
    "resumes": _flag,
    "transcripts": _texts,
}


def _object(value: object) -> str | None:
    return None if isinstance(value, dict) and value else "a table: the JSON the hook prints"


GATE: dict[str, Check] = {
    "event": _text,
    "skip_tools": _texts,
    "always_from": _text,
    "always_types": _texts,
    "always_at": _steps,
    "allow": _object,
    "deny": _object,
}
GATE_NEEDS = ("event", "allow", "deny")

MCP: dict[str, Check] = {"args": _texts}
FORK: dict[str, Check] = {"command": _text, "drop": _texts}


def _match(value: object) -> str | None:
    ok = (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, str | int | bool) for v in value.values())
    )
    return (
        None
        if ok
        else 'a table of dotted paths to the values a line must hold, such as { type = "assistant" }'
    )


def _query(value: object) -> str | None:
    ok = (
        isinstance(value, str)
        and re.match(r"\s*(?:SELECT|WITH)\b", value, re.IGNORECASE) is not None
        and ":session_id" in value
    )
    return None if ok else "one SQL SELECT of the session's rows, its id bound as :session_id"


TOKEN_NAMES = ("input", "output", "thought", "cached_read", "cached_write", "cached_write_1h")
"""The ledger's token names a ``[usage.tokens]`` entry may read."""
USAGE: dict[str, Check] = {
    "roots": _texts,
    "files": _texts,
    "when": _match,
    "id": _steps,
    "model": _steps,
    "model_when": _match,
    "input_includes": _texts,
    "output_adds": _texts,
    "at": _steps,
    "query": _query,
}
USAGE_NEEDS = ("files", "when", "tokens")
PLACEHOLDER = re.compile(r"\{[^{}]*\}|[{}]")
"""Anything in a ``files`` pattern that reads as a placeholder (or half of one)."""
SESSION_ID = re.compile(r"\{session_id(?::([1-9]\d{0,2}))?\}")
"""The placeholders a ``files`` pattern may hold: ``{session_id}``, or ``{session_id:N}`` for its
first N characters (Gemini CLI names its chat file with the first 8); the ledger fills them in
(:func:`roost.services.ledger.transcripts.pattern_for`)."""
DETECT_KEYS = frozenset({"identify", "rules", "replace"})
RULE: dict[str, Check] = {
    "id": _text,
    "state": _text,
    "priority": _number,
    "region": _text,
    "pattern": _text,
    "unless": _text,
    "unless_after": _text,
    "reason": _text,
    "event": _text,
    "overrules": _texts,
}
PROBE: dict[str, Check] = {"region": _text, "pattern": _text, "unless": _text, "unless_after": _text}
SEARCH = frozenset({"region", "pattern"})
# What each adapter kind needs of [hook], beyond its kind.
NEEDS = {
    "claude-settings": ("dirs", "file", "install"),
    "codex-hooks": ("dirs", "file", "config", "install"),
    "asset": ("dirs", "file", "asset"),
}


def read(path: str) -> dict:
    """One file's TOML table; a file that cannot be read or parsed is a ManifestError."""
    try:
        with open(path, encoding="utf-8") as f:
            return tomllib.loads(f.read())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ManifestError(f"{path}: cannot read it: {error}") from None


def _unknown(table: dict, known: Collection[str], where: str) -> None:
    extra = sorted(set(table) - set(known))
    if extra:
        raise ManifestError(f"{where}unknown key {extra[0]!r} (known: {', '.join(sorted(known))})")


def _values(table: dict, checks: dict[str, Check], where: str, nested: Collection[str] = ()) -> None:
    """Every key of ``table`` known (to ``checks``, or one of the ``nested`` tables checked
    apart) and every value of ``checks``' keys good by its check."""
    _unknown(table, {*checks, *nested}, where)
    for key, value in table.items():
        wanted = checks[key](value) if key in checks else None
        if wanted is not None:
            raise ManifestError(f"{where}{key} must be {wanted}, got {value!r}")


def _table(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: must be a table")
    return value


def _hook(table: object, prefix: str) -> dict:
    hook = _table(table, f"{prefix}[hook]")
    _values(hook, HOOK, f"{prefix}[hook]: ", nested=(*HOOK_MAPS, "gate"))
    for key, check in HOOK_MAPS.items():
        if key in hook:
            entries = _table(hook[key], f"{prefix}[hook.{key}]")
            _values(entries, dict.fromkeys(entries, check), f"{prefix}[hook.{key}]: ")
    if "gate" in hook:
        gate = _table(hook["gate"], f"{prefix}[hook.gate]")
        _values(gate, GATE, f"{prefix}[hook.gate]: ")
    return hook


def _usage(table: object, prefix: str) -> dict:
    usage = _table(table, f"{prefix}[usage]")
    _values(usage, USAGE, f"{prefix}[usage]: ", nested=("tokens",))
    if "tokens" in usage:
        tokens = _table(usage["tokens"], f"{prefix}[usage.tokens]")
        _unknown(tokens, TOKEN_NAMES, f"{prefix}[usage.tokens]: ")
        _values(tokens, dict.fromkeys(tokens, _steps), f"{prefix}[usage.tokens]: ")
    for key in ("input_includes", "output_adds"):
        for name in usage.get(key, ()):
            if name not in TOKEN_NAMES:
                raise ManifestError(
                    f"{prefix}[usage]: {key} names {name!r}, which is none of {', '.join(TOKEN_NAMES)}"
                )
    for pattern in usage.get("files", ()):
        for placeholder in PLACEHOLDER.findall(pattern):
            if not SESSION_ID.fullmatch(placeholder):
                raise ManifestError(
                    f"{prefix}[usage]: files pattern {pattern!r} holds {placeholder}, which is neither"
                    " {session_id} nor {session_id:N} (its first N characters, N from 1)"
                )
    return usage


def _rules(tables: object, path: str, prefix: str) -> list[dict]:
    if not isinstance(tables, list):
        raise ManifestError(f"{prefix}[detect]: rules must be an array of tables ([[detect.rules]])")
    rules, seen = [], set()
    for index, table in enumerate(tables):
        where = f"{prefix}[[detect.rules]] #{index + 1}: "
        if not isinstance(table, dict):
            raise ManifestError(f"{where}each rule is a table")
        rule_id = table.get("id")
        if not isinstance(rule_id, str) or not rule_id.strip():
            raise ManifestError(f"{where}id is required (a short name such as 'permission-dialog')")
        where = f"{prefix}rule {rule_id!r}: "
        _values(table, RULE, where, nested=("reason_from",))
        if "reason_from" in table:
            found = table["reason_from"]
            if not isinstance(found, dict):
                raise ManifestError(f"{where}reason_from must be a table with region and pattern")
            _values(found, {k: PROBE[k] for k in SEARCH}, f"{where}reason_from: ")
        if rule_id in seen:
            raise ManifestError(f"{where}id is used twice")
        seen.add(rule_id)
        rules.append({**table, "source": path})
    return rules


def _identify(value: object, prefix: str) -> list[dict]:
    tables = value if isinstance(value, list) else [value]
    for index, table in enumerate(tables):
        where = f"{prefix}[detect] identify" + (f" #{index + 1}" if isinstance(value, list) else "")
        if not isinstance(table, dict):
            raise ManifestError(f"{where}: must be a table with region and pattern")
        _values(table, PROBE, f"{where}: ")
    return list(tables)


def _detect(value: object, path: str, prefix: str) -> dict:
    detect = _table(value, f"{prefix}[detect]")
    _unknown(detect, DETECT_KEYS, f"{prefix}[detect]: ")
    if "replace" in detect and not isinstance(detect["replace"], bool):
        raise ManifestError(f"{prefix}[detect]: replace must be true or false")
    checked: dict[str, Any] = {"files": [path], "rules": _rules(detect.get("rules", []), path, prefix)}
    if detect.get("replace"):
        checked["replace"] = True
    if "identify" in detect:
        checked["identify"] = _identify(detect["identify"], prefix)
        checked["identify_source"] = path
    return checked


def check(table: dict, path: str) -> dict:
    """One file's table, checked: the same table, with each rule's file recorded beside it."""
    name = os.path.splitext(os.path.basename(path))[0]
    agent = table.get("name", name)
    if agent != name:
        raise ManifestError(f"{path}: name must be the file's own name, {name!r}, got {agent!r}")
    prefix = f"{path} ({name}): "
    _values(table, TOP, prefix, nested=("hook", "detect", "acp", "mcp", "fork", "usage"))
    checked = dict(table)
    if "hook" in table:
        checked["hook"] = _hook(table["hook"], prefix)
    if "acp" in table:
        acp = _table(table["acp"], f"{prefix}[acp]")
        _values(acp, ACP, f"{prefix}[acp]: ")
    if "mcp" in table:
        _values(_table(table["mcp"], f"{prefix}[mcp]"), MCP, f"{prefix}[mcp]: ")
    if "fork" in table:
        _values(_table(table["fork"], f"{prefix}[fork]"), FORK, f"{prefix}[fork]: ")
    if "usage" in table:
        checked["usage"] = _usage(table["usage"], prefix)
    if "detect" in table:
        checked["detect"] = _detect(table["detect"], path, prefix)
    return checked


def merge(base: dict, over: dict) -> dict:
    """``over`` laid on ``base``: tables merge key by key, ``[[detect.rules]]`` by id, and every
    other value (an array too) replaces the base's."""
    merged = dict(base)
    for key, value in over.items():
        if key == "detect":
            merged[key] = _merge_detect(base.get("detect"), value)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = merge(base[key], value)
        else:
            merged[key] = value
    return merged


def _merge_detect(base: dict | None, over: dict) -> dict:
    """A rule with the same id replaces the base's where it stood, new ids come after, and
    ``replace = true`` drops every base rule (and the base's identify) first."""
    keep = base is not None and not over.get("replace")
    rules = {rule["id"]: rule for rule in (base["rules"] if keep and base else ())}
    for rule in over["rules"]:
        rules[rule["id"]] = rule
    merged = {"files": [*(base["files"] if base else ()), *over["files"]], "rules": list(rules.values())}
    source = over if "identify" in over else base if keep else None
    if source is not None and "identify" in source:
        merged["identify"] = source["identify"]
        merged["identify_source"] = source["identify_source"]
    return merged


def complete(table: dict, path: str) -> None:
    """What only the merged manifest can say: an adapter kind has the files it writes, an
    [acp] section its command, a [fork] section its command."""
    prefix = f"{path} ({table.get('name')}): "
    hook = table.get("hook", {})
    kind = hook.get("kind", "none")
    missing = [key for key in NEEDS.get(kind, ()) if not hook.get(key)]
    if missing:
        raise ManifestError(f"{prefix}[hook]: kind {kind!r} needs {', '.join(missing)}")
    if "acp" in table and not table["acp"].get("command"):
        raise ManifestError(f"{prefix}[acp]: command is required (the adapter's argv)")
    if "fork" in table and not table["fork"].get("command"):
        raise ManifestError(f"{prefix}[fork]: command is required (the fork's command line)")
    if "usage" in table:
        lacking = [key for key in USAGE_NEEDS if not table["usage"].get(key)]
        if lacking:
            raise ManifestError(f"{prefix}[usage]: needs {', '.join(lacking)}")
    gate = hook.get("gate")
    if gate is not None:
        lacking = [key for key in GATE_NEEDS if not gate.get(key)]
        if lacking:
            raise ManifestError(f"{prefix}[hook.gate]: needs {', '.join(lacking)}")


def resolve(name: str, packaged: str | None, user: str | None) -> tuple[dict | None, list[list[str]]]:
    """The agent's table, the user's file merged over the packaged one, and its problems as
    ``[agent, message]``. A user's file with a problem is left out whole: the packaged
    manifest alone is used, so a mistake never takes an agent away."""
    problems: list[list[str]] = []
    base = None
    if packaged is not None:
        try:
            base = check(read(packaged), packaged)
            complete(base, packaged)
            base["files"] = [packaged]
        except ManifestError as error:
            problems.append([name, error.message])
            base = None
    if user is None:
        return base, problems
    try:
        over = check(read(user), user)
        merged = merge(base or {"name": name}, over)
        complete(merged, user)
    except ManifestError as error:
        problems.append([name, error.message])
        return base, problems
    merged["files"] = [*(base["files"] if base else ()), user]
    return merged, problems
