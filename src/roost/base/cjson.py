"""JSON through CPython's C codec alone, for the commands that start on every hook event.

``import json`` costs about what a bare interpreter start costs (its decoder and encoder import
``re``, which brings ``enum``, ``functools`` and ``collections``), and the hook parses its
event and its manifest's cache on every run. The scanner and encoder ``json`` itself uses live
in the C module ``_json``; this drives them with json's own defaults, so :func:`loads` and
:func:`dumps` give what ``json.loads`` and ``json.dumps(value, separators=(",", ":"))`` give,
and :func:`document`, roost's one writer of JSON documents, what ``json.dumps(value,
ensure_ascii=False) + "\\n"`` gives.
Input ``json`` would have to sniff for its encoding (a byte-order mark, UTF-16, UTF-32), and
any interpreter without ``_json``, go to ``json`` itself.
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # another interpreter: json's pure-Python codec will do
    _json = None

_SPACE = " \t\n\r"
_SNIFFED = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


class _Defaults:
    """``json.JSONDecoder()``'s settings, read by name by the C scanner."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # "NaN", "Infinity", "-Infinity": json maps them to the same floats


def _unserialisable(value: object) -> object:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


_scan = _json.make_scanner(_Defaults()) if _json else None


def loads(data: bytes | str) -> object:
    """One JSON document; ``ValueError`` (``UnicodeDecodeError`` too) when it is not one."""
    if _scan is None or (isinstance(data, bytes) and (data.startswith(_SNIFFED) or b"\0" in data[:4])):
        import json

        return json.loads(data)
    text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as missing:
        raise ValueError(f"Expecting value: char {missing.value}") from None
    if text[end:].strip(_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: object) -> str:
    """``value`` as compact, ASCII-only JSON, for the wire and for caches; ``TypeError`` for
    what JSON cannot hold and ``ValueError`` for a value that holds itself, as json has them."""
    return _encode(value, True, (",", ":"))


def document(value: object, *, compact: bool = False, indent: int | str | None = None) -> str:
    """``value`` as roost writes a JSON document out: a ``--json`` answer, an events-log line, a
    file. Every writer goes through here, so they agree byte for byte on what ``json.dumps``
    with ``ensure_ascii=False`` gives: text as itself rather than ``\\u``-escaped, json's
    spacing (none with ``compact``; ``indent`` lays it out over lines, as a person's settings
    file is), then one newline."""
    separators = (",", ":") if compact else (", ", ": ")
    if indent is not None:
        import json  # json's C encoder cannot indent; a file laid out for people is rare

        text = json.dumps(value, ensure_ascii=False, indent=indent, separators=(",", separators[1]))
        return text + "\n"
    return _encode(value, False, separators) + "\n"


def _encode(value: object, ascii: bool, separators: tuple[str, str]) -> str:
    if _json is None:
        import json

        return json.dumps(value, ensure_ascii=ascii, separators=separators)
    # json.dumps's own encoder, made afresh as json makes it: its circular-reference marks
    # start empty, NaN is allowed, nothing is sorted or skipped.
    strings = _json.encode_basestring_ascii if ascii else _json.encode_basestring
    encode = _json.make_encoder(
        {}, _unserialisable, strings, None, separators[1], separators[0], False, False, True
    )
    return "".join(encode(value, 0))
