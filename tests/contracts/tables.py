"""Reading the tables of ``docs/contracts.md``: a section's first table as rows of cells."""

from __future__ import annotations

from pathlib import Path

CONTRACTS = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


def table(heading: str, path: Path = CONTRACTS) -> list[dict[str, str]]:
    """The first table under ``## heading``: one dict per row, keyed by the header's cells,
    each cell with its backticks and surrounding spaces taken off."""
    lines = path.read_text().splitlines()
    start = lines.index(f"## {heading}")
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append([cell.strip().replace("`", "") for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"no table under '## {heading}' in {path}"
    header, _rule, *body = rows
    return [dict(zip(header, cells, strict=True)) for cells in body]


def names(cell: str) -> list[str]:
    """A cell holding a comma list (``a, b``) as its items."""
    return [item.strip() for item in cell.split(",") if item.strip()]
