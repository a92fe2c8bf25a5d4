"""Checking a value from outside at the door: the constrained types every schema is built from,
and a refusal that names the field.

Request bodies and claims are pydantic models made of the types below, so one declaration
gives the check, the limit and the OpenAPI description. Each type carries a ``description``
saying what a good value is ("a positive integer up to 4194304"); a refusal is that
description under the field's dotted name (``ancestors.0.pid must be …``), never pydantic's
own sentence and never the value itself, which may be a prompt's text. Models are strict: a
``"12"`` is not a pid and ``true`` is not a count.

Only the daemon loads this (pydantic costs ~60 ms to import); the hook and ``roost send``
never reach it.
"""

from __future__ import annotations

import math
import re
import types
import typing
from itertools import accumulate
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from roost.base.text import REFUSED_CLASS, control

OBJECT_DEPTH = 16
"""Levels a free-form object (a claim's ``usage``, ``tmux``…) may nest."""


NESTING = 32
"""Arrays and objects a document from outside (a body, a report line, a WebSocket message) may
nest; the API's bodies nest a few. Python's parser recurses, so a document thousands deep would
fail inside it (RecursionError) instead of being refused: :func:`too_deep` looks first."""
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_STEP = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[{]}"))


def too_deep(text: bytes, limit: int = NESTING) -> bool:
    """Whether ``text`` nests arrays and objects more than ``limit`` deep, brackets inside
    strings not counted: the strings go, then each bracket left becomes a step of +1 or -1."""
    brackets = _STRING.sub(b"", text).translate(None, _NOT_BRACKETS).translate(_STEP)
    return bool(brackets) and max(accumulate(memoryview(brackets).cast("b"))) > limit


class Invalid(ValueError):
    """A value the schema does not allow: ``field`` is its dotted name ("" for the whole body)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class Strict(BaseModel):
    """A body or a part of one: strict types, frozen, unknown keys ignored (as everywhere in
    rosterd's wire formats) unless a model says ``extra="forbid"``. Each model's validator is
    built when it is first used, not when the daemon starts: most daemons never see most bodies."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore", defer_build=True)
    shape: ClassVar[str | None] = None
    """What a good value of the whole model is, for a refusal of it as one item of a list."""


def refuse(message: str) -> PydanticCustomError:
    """A refusal raised from a model's own validator, worded by the model."""
    return PydanticCustomError("roost", message)


def unwritable(value: object, depth: int = 0) -> str | None:
    """Why ``value`` cannot be written as strict JSON in UTF-8 (a lone surrogate, NaN or an
    infinity, nesting past :data:`OBJECT_DEPTH`), or None. The roster publishes every value it holds,
    so one that cannot be written would fail every snapshot and stream until a restart."""
    if depth > OBJECT_DEPTH:
        return f"nests deeper than {OBJECT_DEPTH} levels"
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "holds text that is not valid Unicode (a lone surrogate)"
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return "holds a number that is not finite"
    if isinstance(value, dict):
        for key, item in value.items():
            problem = unwritable(key, depth + 1) or unwritable(item, depth + 1)
            if problem:
                return problem
    elif isinstance(value, list | tuple):
        for item in value:
            problem = unwritable(item, depth + 1)
            if problem:
                return problem
    return None


def writable(value: Any) -> Any:
    """The validator behind every text and object type here, for a model's own types."""
    problem = unwritable(value)
    if problem:
        raise refuse(problem)
    return value


def _one_line(value: str) -> str:
    refused = control(value)
    if refused is not None:
        raise refuse(f"is one line and may not hold control characters (U+{ord(refused):04X})")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise refuse("may not be blank")
    return value


def text(limit: int, *, least: int = 0, one_line: bool = False, what: str = "text") -> Any:
    """Text of ``least`` to ``limit`` characters, valid Unicode, and not only spaces when
    ``least`` is set; ``one_line`` refuses control characters too (a name, a harness word:
    they reach terminals as they are)."""
    checks = [AfterValidator(writable)]
    checks += [AfterValidator(_not_blank)] if least else []
    checks += [AfterValidator(_one_line)] if one_line else []
    span = f"{least} to {limit}" if least else f"at most {limit}"
    described = f"{what} of {span} characters" + (", one line" if one_line else "")
    shape = {"pattern": pattern} if (pattern := text_pattern(least > 0, one_line)) else None
    field = Field(min_length=least, max_length=limit, description=described, json_schema_extra=shape)
    return Annotated[str, field, *checks]


def text_pattern(nonblank: bool, one_line: bool) -> str | None:
    """What :func:`text`'s own checks refuse, as a regular expression for the OpenAPI document
    (the checks stay, for their words): a character that is not whitespace, and no control
    character of :func:`roost.base.text.control` (whitespace and blank are Python's ``str.strip``'s)."""
    line = f"[^{REFUSED_CLASS}]*"
    if one_line:
        return f"^{line}[^{REFUSED_CLASS}\\s]{line}$" if nonblank else f"^{line}$"
    return r"\S" if nonblank else None


def integer(least: int, most: int, what: str) -> Any:
    """A whole number from ``least`` to ``most`` (never a bool, never a float)."""
    return Annotated[int, Field(ge=least, le=most, description=what)]


def words(choices: typing.Iterable[str]) -> Any:
    """One word of ``choices``."""
    listed = tuple(choices)
    return Annotated[Literal[listed], Field(description=f"one of {', '.join(listed)}")]  # type: ignore[valid-type]


JsonObject = Annotated[dict[str, Any], Field(description="a JSON object"), AfterValidator(writable)]


def _dotted(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds (``list[Process] | None`` holds ``Process``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _models(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, dict):
        return [model for arg in typing.get_args(annotation) for model in _models(arg)]
    return []


def _shape(annotation: Any) -> str | None:
    """What a good value of a type is, as the type itself says it (inside ``X | None`` too):
    true or false for a flag, the words of a choice, else its ``Field`` description (each type
    above carries one)."""
    if annotation is bool:
        return "true or false"
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(str(choice) for choice in typing.get_args(annotation))
    if origin is Annotated:
        for meta in annotation.__metadata__:
            if getattr(meta, "description", None):
                return meta.description
        return _shape(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return next(filter(None, map(_shape, typing.get_args(annotation))), None)
    return None


def _described(model: type[BaseModel], loc: tuple[int | str, ...]) -> str | None:
    """What a good value of the field ``loc`` names is: list indices and union tags are skipped.

    The type's own word comes first: a field's description may say what the field does (the
    tool schemas agents read say "list sessions that ended too"), which is no value, while
    ``text()``, ``integer()`` and ``words()`` each describe one; a field whose type carries
    none (an ``Annotated`` one's description is the field's) is described by the field."""
    described, current = None, [model]
    for part in loc:
        field = next((m.model_fields[part] for m in current if part in m.model_fields), None)
        if field is None:
            shapes = [getattr(m, "shape", None) for m in current]
            described = shapes[0] if len(shapes) == 1 and shapes[0] else described
            continue
        described = _shape(field.annotation) or field.description
        current = _models(field.annotation)
    return described


UNKNOWN = "{} is not a field this body may hold"


def reason(error: ValidationError, model: type[BaseModel], unknown: str = UNKNOWN) -> Invalid:
    """The first of ``error``'s problems, as one sentence about one field; ``unknown`` words a
    key that a model forbidding extra keys does not have."""
    first = error.errors(include_url=False, include_input=False)[0]
    loc, kind = tuple(first["loc"]), first["type"]
    name = _dotted(loc)
    if kind == "roost":
        message = f"{name} {first['msg']}" if loc else first["msg"]
    elif kind == "string_unicode":
        message = f"{name} holds text that is not valid Unicode (a lone surrogate)"
    elif kind == "missing":
        message = f"{name} is required"
    elif kind == "extra_forbidden":
        message = unknown.format(name)
    else:
        described = _described(model, loc)
        message = f"{name} must be {described}" if described else f"{name} holds a value it may not hold"
    return Invalid(name, message)


M = TypeVar("M", bound=BaseModel)


def validated(
    model: type[M], value: object, context: dict[str, Any] | None = None, unknown: str = UNKNOWN
) -> M:
    """``value`` as ``model``, or :class:`Invalid` naming the first bad field."""
    try:
        return model.model_validate(value, context=context)
    except ValidationError as error:
        raise reason(error, model, unknown) from None
