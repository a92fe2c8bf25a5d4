"""A webhook URL the destination rule accepts, as one regular expression.

The rule itself is :func:`roost.services.notify.destinations.parse`, which says in words what it refuses.
This is the same rule as a pattern, so a request body's schema (and the OpenAPI document read
off it) states it whole: ``http`` or ``https`` in any case, ``//``, a host, an optional port
from 1 to 65535, then a path, query or fragment of visible ASCII. The host is

- a loopback or tailnet IPv4 address in dotted decimal, no leading zeros (as ``ipaddress``
  reads it), and an optional trailing dot;
- ``localhost`` or a ``*.ts.net`` name in any case, an optional trailing dot (whether such a
  name resolves where the rule allows is the registration's to find out, not a pattern's);
- in brackets, every way of writing an IPv6 address on loopback or the tailnet, or an
  IPv4-mapped one of the IPv4 ranges: groups of one to four hex digits, at most one ``::``
  standing for one zero group or more, the last two groups as dotted decimal.

``parse`` checks this pattern last, so a URL Python's ``urlsplit`` would read past (text before
a bracket, after it, or a dot after it) is refused as not of this shape, and what the pattern
matches is exactly what the rule accepts.
"""

from __future__ import annotations

import re

HEXDIGIT = "[0-9A-Fa-f]"
HEX = f"{HEXDIGIT}{{1,4}}"
ZERO = "0{1,4}"
OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
LOOPBACK4 = rf"127(?:\.{OCTET}){{3}}"
TAILNET_SECOND = "(?:6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])"
"""100.64.0.0/10's second octet: 64 to 127."""
TAILNET4 = rf"100\.{TAILNET_SECOND}(?:\.{OCTET}){{2}}"
LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
NAME = rf"(?:[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|(?:{LABEL}\.)+[Tt][Ss]\.[Nn][Ee][Tt])"
PORT = "0*(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
REST = r"(?:[/?#][\x21-\x7e]*)?"


def spellings(groups: list[tuple[str, bool]], dotted: str) -> str:
    """Every way to write an IPv6 address whose eight groups are ``groups`` (each the pattern of
    one group's hex digits, and whether it may be zero): in full, with one run of zero groups as
    ``::``, and with the last two groups as ``dotted`` (a pattern of dotted decimal)."""
    forms = []
    for width, last in ((8, ""), (6, dotted)):
        shown = [text for text, _ in groups[:width]]
        ends = [":".join([*shown, last] if last else shown)]
        for start in range(width):
            for stop in range(start + 1, width + 1):
                if all(zero for _, zero in groups[start:stop]):
                    after = [*shown[stop:], last] if last else shown[stop:]
                    ends.append(":".join(shown[:start]) + "::" + ":".join(after))
        forms += ends
    return "(?:" + "|".join(dict.fromkeys(forms)) + ")"


def _mapped(second_group: str, dotted: str) -> str:
    """An IPv4-mapped address (``::ffff:a.b.c.d``) of an IPv4 range: its seventh group's digits
    (the range's first two octets), and the range in dotted decimal."""
    groups = [(ZERO, True)] * 5 + [("[Ff]{4}", False), (second_group, False), (HEX, True)]
    return spellings(groups, dotted)


DOTTED = rf"{OCTET}(?:\.{OCTET}){{3}}"
LOOPBACK6 = spellings([(ZERO, True)] * 7 + [("0{0,3}1", False)], r"0\.0\.0\.1")
TAILNET6 = spellings(
    [("[Ff][Dd]7[Aa]", False), ("115[Cc]", False), ("[Aa]1[Ee]0", False)] + [(HEX, True)] * 5, DOTTED
)
MAPPED = "|".join((_mapped(f"7[Ff]{HEXDIGIT}{{2}}", LOOPBACK4), _mapped(f"64[4-7]{HEXDIGIT}", TAILNET4)))
IPV6 = f"(?:{LOOPBACK6}|{TAILNET6}|{MAPPED})"
HOST = rf"(?:(?:{LOOPBACK4}|{TAILNET4}|{NAME})\.?|\[{IPV6}\])"
PATTERN = rf"^[Hh][Tt][Tt][Pp][Ss]?://{HOST}(?::(?:{PORT})?)?{REST}$"
"""The whole URL; the document's ``pattern``, and
:func:`roost.services.notify.destinations.parse`'s last check."""
SHAPE = re.compile(PATTERN)
