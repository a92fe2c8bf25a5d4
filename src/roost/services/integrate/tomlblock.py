"""Editing a TOML file roost shares with its owner, as text, since Python writes no TOML.

roost's additions are either one block between marker comments, appended at the end of the
file, or a single line ending with ``LINE_MARK`` inside a table the owner already has (TOML
forbids opening that table a second time). ``strip`` removes both and nothing else, so
install followed by uninstall gives back the original text.
"""

from __future__ import annotations

import json
import re
import tomllib

from roost.base.errors import SetupError

BEGIN = "# >>> roost"
END = "# <<< roost"
LINE_MARK = "# roost: added by rosterd integrate"


def parse(text: str, where: object) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SetupError(f"{where} is not valid TOML ({error}); left untouched") from error


def strip(text: str) -> str:
    """``text`` without roost's block and roost's marked lines."""
    kept = []
    inside = False
    for line in text.splitlines(keepends=True):
        bare = line.strip()
        if inside:
            inside = not bare.startswith(END)
        elif bare.startswith(BEGIN):
            inside = True
        elif not bare.endswith(LINE_MARK):
            kept.append(line)
    return "".join(kept)


def has_own(text: str) -> bool:
    return strip(text) != text


def append_block(text: str, title: str, lines: list[str]) -> str:
    if not lines:
        return text
    if text and not text.endswith("\n"):
        text += "\n"
    return text + f"{BEGIN}: {title}\n" + "".join(f"{line}\n" for line in lines) + f"{END}\n"


def table_header(text: str, table: str) -> re.Match | None:
    """Where ``[table]`` is opened by a header line, if it is."""
    return re.search(rf"^[ \t]*\[[ \t]*{re.escape(table)}[ \t]*\][ \t]*(#.*)?$", text, re.MULTILINE)


def insert_line(text: str, after: re.Match, line: str) -> str:
    """Put one marked line right below the header line ``after`` matched."""
    end = after.end()
    if text[end : end + 1] == "\n":
        end += 1
    else:
        text = text[:end] + "\n" + text[end:]
        end += 1
    return text[:end] + f"{line}  {LINE_MARK}\n" + text[end:]


def string(value: str) -> str:
    """A TOML basic string; JSON's escapes are all valid TOML escapes."""
    return json.dumps(value)
