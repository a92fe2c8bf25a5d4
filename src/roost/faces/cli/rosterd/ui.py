"""``rosterd ui`` and ``rosterd open KEY``: the web app in the person's browser, logged in.

Each asks the daemon (over its unix socket, which only this user can reach) for a fresh
one-time login link, prints it — so it works over SSH or with no desktop, where the person
copies it — and hands it to the system's browser (``$BROWSER`` or the desktop's opener).
``open`` first resolves KEY (a session key, a pid or a unique name) so a wrong key fails here,
not in the browser, and the link lands on that session.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from roost.base.errors import UsageError
from roost.faces.cli.daemonclient import Client, path_of
from roost.faces.cli.rosterd import printing
from roost.faces.cli.rosterd.options import parse

USAGE = (
    ("ui", "open the web app in a browser, logged in"),
    ("open KEY", "open one session in the web app"),
)
_USAGE = {"ui": "usage: rosterd ui", "open": "usage: rosterd open KEY"}


def _show(url: str) -> None:
    import webbrowser

    printing.line(url)
    webbrowser.open(url)


def run(verb: str, args: list[str]) -> int:
    wanted = 1 if verb == "open" else 0
    options = parse(args, _USAGE[verb], flags=(), positional=(wanted, wanted))
    if verb == "open" and not options.positional[0]:
        raise UsageError(_USAGE[verb])
    with Client() as client:
        landing = ""
        if verb == "open":
            record = json.loads(client.get(path_of("sessions", options.positional[0])))
            landing = "&" + urlencode({"open": record["session_key"]})
        url = json.loads(client.post("/login-link", {}))["url"]
    _show(url + landing)
    return 0
