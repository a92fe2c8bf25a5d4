"""The sentences of ``docs/architecture.md`` about layers, each held as a rule of its own.

The diagram is the block in ``docs/architecture.md`` (``<!-- layers: … -->``), so the picture a
newcomer reads and the rule the suite enforces are one text; the package docstring names the
same rows. Every ``roost`` import in ``src/roost`` is walked (those inside functions, and
relative ones, too) and checked against each rule below, and each rule is tried on a copy of
the tree with a violation planted in it, so a rule that stopped looking would fail here too.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "roost"
DOC = ROOT / "docs" / "architecture.md"
MARK = "<!-- layers:"
PACKAGE = re.compile(r"[a-z][a-z0-9_]*(?:/[a-z][a-z0-9_]*)*")

FACES = ("faces.cli.roost", "faces.cli.rosterd", "faces.hook", "headless.holder", "faces.api", "faces.mcp")
"""The programs and routes through which people, agents and the daemon reach Roost."""
DOORS = ("faces.api", "faces.mcp", "faces.cli.rosterd", "faces.cli.roost.api")
"""The faces that act on sessions by way of ``actions`` (the daemon's routes, its MCP server,
``rosterd`` and ``roost api``). ``roost``'s other verbs and the hook are the interactive lane,
which works with no daemon running and so reads and writes panes through ``state`` and ``tmux``
itself."""
TERMINAL = ("pane.tmux", "pane.state")
APPLIERS = ("apply", "apply_all", "overrule")


def rows(doc: str | None = None, src: Path = SRC) -> list[list[str]]:
    """The diagram's rows, top to bottom, each the packages it places.

    A row is an optional tier word (at the start of the line), then package paths separated by
    one or two spaces, then three or more spaces and a description. Each path must name a
    package or module of ``src``, so a row misread (or a package renamed) fails loudly.
    """
    text = DOC.read_text() if doc is None else doc
    block = text[text.index(MARK) :].split("```")[1].splitlines()
    found = []
    for line in filter(str.strip, block):
        body = line if line[:1].isspace() else line.split(None, 1)[1]
        names = re.split(r"\s{3,}", body.strip())[0].split()
        for name in names:
            assert PACKAGE.fullmatch(name), f"layer diagram row {line!r}: {name!r} is not a package path"
            path = src / name
            assert path.is_dir() or path.with_suffix(".py").is_file(), (
                f"layer diagram row {line!r}: {name} is no package or module of src/roost"
            )
        found.append([name.replace("/", ".") for name in names])
    return found


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted, without the ``roost.`` prefix
    target: str  # the imported module, dotted, without the ``roost.`` prefix ("" is the root)
    line: int


@dataclass(frozen=True)
class Call:
    module: str  # the calling module, dotted, without the ``roost.`` prefix
    name: str  # the attribute called (``live.apply(…)`` is ``apply``)
    line: int


def module_name(path: Path, src: Path) -> str:
    name = ".".join(path.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
    return "" if name == "__init__" else name


def absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The dotted ``roost.…`` name a (possibly relative) ``from … import`` reaches."""
    if node.level == 0:
        return node.module or ""
    base = ["roost", *module.split(".")] if module else ["roost"]
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def walk(src: Path = SRC) -> tuple[list[Import], list[Call]]:
    """Every ``roost`` import in the tree at any depth, and every call of a method by name."""
    found, calls = [], []
    for path in sorted(src.rglob("*.py")):
        module = module_name(path, src)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                where = absolute(module, path.name == "__init__.py", node)
                targets = [f"{where}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                calls.append(Call(module, node.func.attr, node.lineno))
                continue
            else:
                continue
            for target in targets:
                if target == "roost" or target.startswith("roost."):
                    found.append(Import(module, target.removeprefix("roost").lstrip("."), node.lineno))
    return found, calls


def owner(module: str, places: dict[str, int]) -> str | None:
    """The longest placed package that ``module`` lives in (``cli.roost.send`` -> ``cli.roost``)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in places:
            return ".".join(parts[:end])
    return None


def within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == package or module.startswith(package + ".") for package in packages)


def placed(imp: Import, places: dict[str, int]) -> tuple[str | None, str | None]:
    """The rows' packages of both ends; ``from roost.faces.cli import output`` names a module of a
    placed package, so an unplaced target is tried as its parent."""
    mine = owner(imp.module, places) if imp.module else None
    theirs = owner(imp.target, places) or owner(imp.target.rpartition(".")[0], places)
    return mine, theirs


def where(imp: Import) -> str:
    return f"roost.{imp.module} line {imp.line}: imports roost.{imp.target}"


def points_down(found: list[Import], calls: list[Call], layout: list[list[str]]) -> list[str]:
    """Imports point down: a module imports its own package and rows below, never up or sideways."""
    places = {package: index for index, row in enumerate(layout) for package in row}
    wrong = []
    for imp in found:
        mine, theirs = placed(imp, places)
        if imp.module and mine is None:
            wrong.append(f"roost.{imp.module} is in no row of the layer diagram")
        elif imp.target in ("", "__version__") or mine is None or theirs == mine:
            continue
        elif theirs is None:
            wrong.append(f"{where(imp)}, which is in no row of the layer diagram")
        elif places[theirs] <= places[mine]:
            side = "sideways (same row)" if places[theirs] == places[mine] else "up"
            wrong.append(f"{where(imp)} ({theirs}), {side} from {mine}")
    return wrong


def faces_apart(found: list[Import], calls: list[Call], layout: list[list[str]]) -> list[str]:
    """Faces never import each other: they share the layers below, not each other's verbs."""
    places = {package: index for index, row in enumerate(layout) for package in row}
    wrong = []
    for imp in found:
        mine, theirs = placed(imp, places)
        if mine in FACES and theirs in FACES and mine != theirs:
            wrong.append(f"{where(imp)}: the face {mine} reaches into the face {theirs}")
    return wrong


def one_door(found: list[Import], calls: list[Call], layout: list[list[str]]) -> list[str]:
    """The daemon's faces act through ``actions``: they import neither ``tmux`` nor ``runner``."""
    return [
        f"{where(imp)}: a face acts on sessions through roost.actions, not {lane}"
        for imp in found
        if (lane := ".".join(imp.target.split(".")[:2]))
        if within(imp.module, DOORS) and within(imp.target, ("pane.tmux", "headless.runner"))
    ]


def terminal_knows_no_agents(found: list[Import], calls: list[Call], layout: list[list[str]]) -> list[str]:
    """The terminal layer (``tmux``, and ``state`` above it) knows nothing of agents."""
    return [
        f"{where(imp)}: the terminal layer knows nothing of agents"
        for imp in found
        if within(imp.module, TERMINAL) and within(imp.target, ("agents",))
    ]


def only_the_roster_applies(found: list[Import], calls: list[Call], layout: list[list[str]]) -> list[str]:
    """Detectors produce claims and never apply them; only the roster holds a session's state."""
    wrong = [
        f"roost.{call.module} line {call.line}: calls .{call.name}(): detectors produce claims, "
        "only the roster applies them"
        for call in calls
        if within(call.module, ("truth.detect",)) and call.name in APPLIERS
    ]
    wrong += [
        f"{where(imp)}: only the roster holds a session's state"
        for imp in found
        if within(imp.target, ("truth.roster.session",)) and not within(imp.module, ("truth.roster",))
    ]
    return wrong


Rule = Callable[[list[Import], list[Call], list[list[str]]], list[str]]
RULES: dict[str, Rule] = {
    "points_down": points_down,
    "faces_apart": faces_apart,
    "one_door": one_door,
    "terminal_knows_no_agents": terminal_knows_no_agents,
    "only_the_roster_applies": only_the_roster_applies,
}


def broken(rule: Rule, src: Path = SRC) -> list[str]:
    found, calls = walk(src)
    return sorted(set(rule(found, calls, rows(src=src))))


@pytest.mark.parametrize("name", RULES)
def test_the_tree_keeps_the_rule(name: str) -> None:
    assert broken(RULES[name]) == [], RULES[name].__doc__


PLANTS: dict[str, tuple[str, str, str]] = {
    "points_down": (
        "pane/tmux/planted.py",
        "def f():\n    from roost.truth.roster import hub\n",
        "roost.pane.tmux.planted line 2: imports roost.truth.roster.hub (truth.roster), up from pane.tmux",
    ),
    "faces_apart": (
        "faces/hook/planted.py",
        "from roost.faces.api import app\n",
        "roost.faces.hook.planted line 1: imports roost.faces.api.app: "
        "the face faces.hook reaches into the face faces.api",
    ),
    "one_door": (
        "faces/api/planted.py",
        "from ...pane.tmux import paste\n",
        "roost.faces.api.planted line 1: imports roost.pane.tmux.paste: a face acts on sessions through "
        "roost.actions, not pane.tmux",
    ),
    "terminal_knows_no_agents": (
        "pane/state/planted.py",
        "from roost.agents import manifest\n",
        "roost.pane.state.planted line 1: imports roost.agents.manifest: "
        "the terminal layer knows nothing of agents",
    ),
    "only_the_roster_applies": (
        "truth/detect/planted.py",
        "def f(live):\n    live.apply(None)\n",
        "roost.truth.detect.planted line 2: calls .apply(): detectors produce claims, "
        "only the roster applies them",
    ),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("layers") / "roost"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "static", "manifests", "assets"))
    return copy


@pytest.mark.parametrize("name", RULES)
def test_a_planted_violation_is_caught(name: str, tree: Path) -> None:
    """A test of the test: the rule finds a violation planted in a copy of the tree, by its own
    message, and nothing else that the tree itself does not show."""
    where_, text, message = PLANTS[name]
    before = set(broken(RULES[name], tree))
    plant = tree / where_
    plant.write_text(text)
    try:
        assert set(broken(RULES[name], tree)) - before == {message}
    finally:
        plant.unlink()


def test_a_relative_import_is_followed() -> None:
    node = ast.parse("from ..roster import hub").body[0]
    assert isinstance(node, ast.ImportFrom)
    assert absolute("api.rows", False, node) == "roost.roster"
    package = ast.parse("from .claims import Claim").body[0]
    assert isinstance(package, ast.ImportFrom)
    assert absolute("roster", True, package) == "roost.roster.claims"


def test_the_diagram_is_read_whatever_its_columns(tmp_path: Path) -> None:
    """Rows are read by their gaps, not by fixed columns: shifting the block changes nothing,
    and a row naming what is no package fails with the row."""
    text = DOC.read_text()
    block = text[text.index(MARK) :].split("```")[1]
    shifted = "\n".join(
        re.sub(r"^(\S+)\s+", r"\1 ", line) if line[:1].strip() else "  " + line for line in block.split("\n")
    )
    assert rows(text.replace(block, shifted)) == rows()
    with pytest.raises(AssertionError, match="nosuch is no package"):
        rows(text.replace("base/validation  ", "base/validation  nosuch  ", 1))


def test_every_package_is_placed_once() -> None:
    layout = rows()
    placed_ = [package for row in layout for package in row]
    assert len(placed_) == len(set(placed_)), placed_
    places = dict.fromkeys(placed_, 0)
    modules = {module_name(p, SRC) for p in SRC.rglob("*.py")} - {""}
    # a folder that only groups placed packages (``faces``, ``remote``) is no layer of its own
    groups = {m for m in modules if any(p.startswith(m + ".") for p in places) and owner(m, places) is None}
    for group in groups:
        tree = ast.parse((SRC / group.replace(".", "/") / "__init__.py").read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)], group
    unplaced = sorted(m for m in modules - groups if owner(m, places) is None)
    assert unplaced == []


def test_the_package_docstring_names_the_same_rows() -> None:
    import roost

    doc = roost.__doc__ or ""
    named = re.findall(r"``([a-z/]+)``", doc)
    placed_ = [package.replace(".", "/") for row in rows() for package in row]
    assert named == placed_
