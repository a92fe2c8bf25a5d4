"""``rosterd detect explain|check``: see why a screen reads as a state, and check the manifests.

Adding or fixing an agent is one manifest file plus its recorded screens; these two verbs are
how its author sees what the engine sees, without a daemon or a running agent.
"""

from __future__ import annotations

import sys
from pathlib import Path

from roost.base.errors import UsageError
from roost.faces.cli.output import complain, decode, document, line
from roost.faces.cli.rosterd.options import parse

USAGE = (
    ("detect explain [OPTIONS] FILE|-", "which detection rule a screen matches, and why (detect --help)"),
    ("detect check [--json]", "load every agent's detection rules; exit 1 when a file is unusable"),
)

HELP = """\
usage: rosterd detect explain [--agent NAME] [--title TITLE] [--progress P] [--json] FILE|-
       rosterd detect check [--json]

explain  reads a screen (what `tmux capture-pane -p` prints, with or without -e escapes;
         - reads stdin) and prints every detection rule tried, in order, whether it
         matched and why, and the state the first match gives. Without --agent the
         agents whose manifests can identify their screen are asked which one it is.
         --title is the window title the program set (OSC 0/2); --progress its OSC 9;4
         progress: none, normal N, error N, indeterminate, paused N, or the OSC numbers
         (3, 1;40). Title and progress sequences inside FILE are used when not given.
check    loads every manifest, packaged and yours in $XDG_CONFIG_HOME/roost/agents/
         (merged over the packaged one), and lists each agent's rules. A file with a
         mistake (its TOML, an unknown key, a wrong type, a rule that does not compile)
         is named with the field, and left out: the packaged manifest is used.

--json prints one schema-1 document instead:
  explain  agent, identified, title, progress, state, rule, priority, region, event,
           reason, tool (null when nothing matched), asked [{agent, matched, why}],
           rules [{id, state, priority, region, verdict (wins|match|no), why, reason}],
           problems [message]
  check    agents [{agent, rules [id], identifies, files [path]}], problems [message]

Exit status:
  0  explained (whether or not a rule matched: see "state"); check: every file is usable
  1  a usage error, an unreadable FILE, an agent without usable rules, or (check) a
     manifest file that cannot be used; the message names the file and the rule
"""

_VALUED = ("--agent", "--title", "--progress")


def _read(source: str) -> str:
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError as error:
        raise UsageError(f"can't read {source}: {error.strerror or error}") from None
    return decode(data)[0]


def explain(args: list[str]) -> int:
    from roost.truth.detect.explain import explain as run_explain
    from roost.truth.detect.explain import lines, to_json
    from roost.truth.detect.regions import Screen, parse_progress

    usage = "usage: rosterd detect explain [--agent NAME] [--title T] [--progress P] [--json] FILE|-"
    given = parse(args, usage, flags=("--json",), valued=_VALUED, positional=1)
    values, as_json = given.values, "--json" in given.flags
    progress = values.get("--progress")
    if progress is not None:
        try:
            progress = parse_progress(progress)
        except ValueError as error:
            raise UsageError(f"usage: rosterd detect explain: {error}") from None
    screen = Screen.parse(_read(given.positional[0]), title=values.get("--title"), progress=progress)
    explanation = run_explain(screen, values.get("--agent"))
    if as_json:
        document("detect explain", **to_json(explanation))
    else:
        line("\n".join(lines(explanation)))  # the screen's text is anyone's: escaped
    return 0


def check(args: list[str]) -> int:
    from roost.truth.detect.manifests import load_catalog

    as_json = "--json" in parse(args, "usage: rosterd detect check [--json]", flags=("--json",)).flags
    catalog = load_catalog()
    agents = [catalog.agents[name] for name in sorted(catalog.agents)]
    if as_json:
        document(
            "detect check",
            agents=[
                {
                    "agent": a.agent,
                    "rules": [r.id for r in a.rules],
                    "identifies": a.identify is not None,
                    "files": [str(path) for path in a.files],
                }
                for a in agents
            ],
            problems=[message for _, message in catalog.problems],
        )
    else:
        for rules in agents:
            identifies = ", identifies its screen" if rules.identify else ""
            line(f"{rules.agent}: {len(rules.rules)} rules{identifies} ({', '.join(map(str, rules.files))})")
        for _, message in catalog.problems:
            complain(f"rosterd detect: {message}\n")
    return 1 if catalog.problems else 0


def run(verb: str, args: list[str]) -> int:
    action = args[0] if args else ""
    if action in ("-h", "--help", "help"):
        print(HELP, end="")
        return 0
    if action == "explain":
        return explain(args[1:])
    if action == "check":
        return check(args[1:])
    raise UsageError("usage: rosterd detect explain|check … (see rosterd detect --help)")
