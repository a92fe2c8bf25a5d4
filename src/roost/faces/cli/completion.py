"""Shell completion for ``roost`` and ``rosterd``: the scripts bash, zsh and fish load, and the
candidates they ask for as a person presses Tab.

The scripts hold no knowledge of their own: on each Tab they run ``PROGRAM __complete SHELL``
with the words typed so far, and print back what it answers, one candidate per line. So a
verb or flag added to a program's help is completed at once, and live names (panes, windows,
session keys and names) are whatever runs now. What a position takes is read from the verb's
usage line in the program's help: its flags, and a ``TARGET`` (a pane of roost's tmux server)
or a ``KEY`` (a session the daemon knows) after them; a ``--harness`` takes an agent's name.
Where nothing is known the shell completes file names, as it would without us.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

SHELLS = ("bash", "zsh", "fish")
FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
BASH_BREAKS = ":="
"""Characters bash ends a completion word at (of its COMP_WORDBREAKS, those a name may hold)."""


@dataclass(frozen=True)
class Program:
    """What completion knows of one program: its name, its verbs, each verb's usage (looked up
    only for the verb being completed), and where its live names come from (each called only
    when a position takes one)."""

    name: str
    verbs: Sequence[str]
    usage: Callable[[str], str | None]
    targets: Callable[[], Iterable[str]]
    keys: Callable[[], Iterable[str]]
    harnesses: Callable[[], Iterable[str]]


def candidates(program: Program, words: Sequence[str]) -> list[str]:
    """What may stand in place of the last of ``words`` (the words after the program's name,
    the last one being typed), starting with what is typed of it."""
    *before, typing = words or [""]
    if not before:
        return _starting(program.verbs, typing)
    usage = program.usage(before[0])
    if usage is None:
        return []
    previous = before[-1]
    if previous == "--harness":
        return _starting(program.harnesses(), typing)
    if previous in ("-t", "--pane"):
        return _starting(program.targets(), typing)
    if typing.startswith("-"):
        return _starting(dict.fromkeys(FLAG.findall(usage)), typing)
    if "TARGET" in usage:
        return _starting(program.targets(), typing)
    if "KEY" in usage:
        return _starting(program.keys(), typing)
    return []


def _starting(found: Iterable[str], typed: str) -> list[str]:
    return sorted({name for name in found if name.startswith(typed) and name})


def from_line(line: str, point: int) -> list[str]:
    """The words of a command line up to the cursor, the program's name dropped; a last word
    that is empty when the cursor follows a space. An unfinished quote still splits."""
    text = line[:point]
    lexer = shlex.shlex(text, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        words.extend(lexer)
    except ValueError:  # an open quote: the rest is the word being typed
        words.append(lexer.token)
    if not text or text[-1].isspace():
        words.append("")
    return words[1:]


def for_bash(found: list[str], typing: str) -> list[str]:
    """Candidates as bash wants them: bash's word begins after the last ``:`` or ``=`` of what
    is typed, and replaces only that part."""
    cut = max(typing.rfind(char) for char in BASH_BREAKS) + 1
    return [name[cut:] for name in found]


def script(program: str, shell: str) -> str:
    """The completion script ``shell`` loads for ``program``."""
    function = f"_{program}_complete"
    if shell == "bash":
        return (
            f"{function}() {{\n"
            "    local IFS=$'\\n'\n"
            f'    COMPREPLY=($({program} __complete bash --line "$COMP_LINE" "$COMP_POINT" 2>/dev/null))\n'
            "}\n"
            f"complete -o default -F {function} {program}\n"
        )
    if shell == "zsh":
        return (
            f"#compdef {program}\n"
            f"{function}() {{\n"
            "    local -a found\n"
            f'    found=("${{(@f)$({program} __complete zsh -- "${{(@)words[2,CURRENT]}}" 2>/dev/null)}}")\n'
            "    if (( ${#found} )) && [[ -n ${found[1]} ]]; then\n"
            "        compadd -Q -- $found\n"
            "    else\n"
            "        _files\n"
            "    fi\n"
            "}\n"
            f'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then {function} "$@"; '
            f"else compdef {function} {program}; fi\n"
        )
    return (
        f"function {function}\n"
        "    set -l tokens (commandline -opc)\n"
        f"    {program} __complete fish -- $tokens[2..-1] (commandline -ct) 2>/dev/null\n"
        "end\n"
        f"complete -c {program} -f -a '({function})'\n"
    )


def answer(program: Program, args: list[str]) -> list[str]:
    """``PROGRAM __complete SHELL (-- WORD… | --line LINE POINT)``: the candidates, shaped for
    ``SHELL``; an empty list for anything malformed (a Tab never prints an error)."""
    if len(args) < 2 or args[0] not in SHELLS:
        return []
    shell = args[0]
    if args[1] == "--line" and len(args) == 4 and args[3].isdigit():
        words = from_line(args[2], int(args[3]))
    elif args[1] == "--":
        words = args[2:]
    else:
        return []
    found = candidates(program, words)
    return for_bash(found, words[-1] if words else "") if shell == "bash" else found
