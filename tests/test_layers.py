"""Imports point down: every import in ``src/roost`` checked against the layer diagram.

The diagram is the block in ``docs/architecture.md`` (``<!-- layers: … -->``), so the picture
a newcomer reads and the rule the suite enforces are one text. The package docstring must
name the same rows, so the three cannot drift apart.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "roost"
DOC = ROOT / "docs" / "architecture.md"
MARK = "<!-- layers:"


def rows(doc: str = DOC.read_text()) -> list[list[str]]:
    """The diagram's rows, top to bottom, each the packages it places.

    A row is its (optional) tier word, then package paths, then two or more spaces and a
    description; a package path is lower case with ``/`` (``cli/roost``).
    """
    block = doc[doc.index(MARK) :].split("```")[1].strip("\n").splitlines()
    found = []
    for line in block:
        names = line[10:].split("   ")[0].split()
        found.append([name.replace("/", ".") for name in names])
    return found


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted, without the ``roost.`` prefix
    target: str  # the imported module, dotted, without the ``roost.`` prefix ("" is the root)
    line: int


def owner(module: str, places: dict[str, int]) -> str | None:
    """The longest placed package that ``module`` lives in (``cli.roost.send`` -> ``cli.roost``)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in places:
            return ".".join(parts[:end])
    return None


def imports() -> list[Import]:
    """Every ``roost`` import in the tree, at any depth (lazy imports inside functions too)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        module = "" if module == "__init__" else module
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target == "roost" or target.startswith("roost."):
                    found.append(Import(module, target.removeprefix("roost").lstrip("."), node.lineno))
    return found


def violations(found: list[Import], layout: list[list[str]]) -> list[str]:
    places = {package: index for index, row in enumerate(layout) for package in row}
    wrong = []
    for imp in found:
        mine = owner(imp.module, places) if imp.module else None
        theirs = owner(imp.target, places)
        where = f"roost.{imp.module} line {imp.line}: imports roost.{imp.target}"
        if imp.module and mine is None:
            wrong.append(f"roost.{imp.module} is in no row of the layer diagram")
        elif imp.target in ("", "__version__") or mine is None or theirs == mine:
            continue
        elif theirs is None:
            # ``from roost.cli import output`` names a module of a placed package.
            theirs = owner(imp.target.rpartition(".")[0], places)
            if theirs is None:
                wrong.append(f"{where}, which is in no row of the layer diagram")
                continue
        if theirs is not None and theirs != mine and places[theirs] <= places[mine]:
            side = "sideways (same row)" if places[theirs] == places[mine] else "up"
            wrong.append(f"{where} ({theirs}), {side} from {mine}")
    return sorted(set(wrong))


def test_every_import_points_down() -> None:
    assert violations(imports(), rows()) == []


def test_every_package_is_placed_once() -> None:
    layout = rows()
    placed = [package for row in layout for package in row]
    assert len(placed) == len(set(placed)), placed
    places = dict.fromkeys(placed, 0)
    modules = {".".join(p.relative_to(SRC).with_suffix("").parts) for p in SRC.rglob("*.py")}
    modules = {m.removesuffix(".__init__") for m in modules if m != "__init__"}
    unplaced = sorted(m for m in modules if owner(m, places) is None)
    assert unplaced == []


def test_the_package_docstring_names_the_same_rows() -> None:
    import roost

    doc = roost.__doc__ or ""
    named = re.findall(r"``([a-z/]+)``", doc)
    placed = [package.replace(".", "/") for row in rows() for package in row]
    assert named == placed


def test_an_upward_import_is_caught() -> None:
    """The check itself: the tmux layer reaching for the roster is refused, and so is a row
    importing its neighbour."""
    layout = rows()
    assert violations([Import("tmux.watch", "roster.hub", 1)], layout) == [
        "roost.tmux.watch line 1: imports roost.roster.hub (roster), up from tmux"
    ]
    assert violations([Import("notify.push", "integrate.common", 3)], layout) == [
        "roost.notify.push line 3: imports roost.integrate.common (integrate), "
        "sideways (same row) from notify"
    ]
    assert violations([Import("api.app", "daemon.main", 7)], layout)
    assert violations([Import("roster.hub", "state.words", 2)], layout) == []
