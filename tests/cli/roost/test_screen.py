"""``roost screen``: the last non-blank lines of a pane's screen, ``+N``, ``--json``, refusals."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Roost


def shell(roost: Roost, lines: str, rows: int = 24) -> str:
    """A shell pane that cleared its screen and printed ``lines`` (a shell word list)."""
    pane = roost.start("sh")
    roost.tmux("resize-window", "-t", pane, "-x", "80", "-y", str(rows))
    roost.tmux("send-keys", "-t", pane, f"clear; for l in {lines}; do echo $l; echo; done; echo END", "Enter")
    roost.wait_screen(pane, "\nEND\n")  # the line END printed, not the typed "echo END"
    return pane


def test_default_is_the_last_40_non_blank_lines(roost: Roost) -> None:
    pane = shell(roost, " ".join(f"row{i}" for i in range(1, 50)), rows=100)
    proc = roost.run("screen", pane)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert len(lines) == 40
    assert "" not in lines
    assert lines[0] == "row12"  # rows 12..49, END and the prompt
    assert lines[-2] == "END"


def test_a_count_takes_the_last_lines(roost: Roost) -> None:
    pane = shell(roost, "a b c")
    proc = roost.run("screen", pane, "3")
    assert proc.stdout.splitlines()[:2] == ["c", "END"]
    assert len(proc.stdout.splitlines()) == 3
    assert proc.stdout.endswith("\n")


def test_plus_n_starts_at_that_row_of_the_screen(roost: Roost) -> None:
    pane = shell(roost, "a b c")
    proc = roost.run("screen", pane, "+3")
    # rows: a, (blank), b, (blank), c, (blank), END, prompt
    assert proc.stdout.splitlines()[:5] == ["b", "", "c", "", "END"]
    assert not proc.stdout.endswith("\n\n")
    doc = roost.json("screen", "--json", pane, "+1")
    assert doc["lines"] is None
    assert doc["text"].startswith("a\n\nb\n")
    assert roost.json("screen", "--json", pane, "+200")["text"] == ""


def test_json_document(roost: Roost) -> None:
    pane = shell(roost, "a b")
    roost.tmux("rename-window", "-t", pane, "api")
    proc = roost.run("screen", "--json", "api", "2")
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 1
    doc = json.loads(proc.stdout)
    assert list(doc)[:2] == ["schema", "command"]
    prompt = doc["text"].split("\n")[-1]
    assert doc == {
        "schema": 1,
        "command": "screen",
        "target": "api",
        "pane": pane,
        "lines": 2,
        "text": f"END\n{prompt}",
        "lossy": False,
    }
    assert roost.json("screen", "--json", pane)["lines"] == 40


def test_blank_screen_is_empty_and_exit_0(roost: Roost) -> None:
    pane = roost.start("sleep 300")
    proc = roost.run("screen", pane)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    doc = roost.json("screen", "--json", pane)
    assert (doc["text"], doc["lossy"], doc["lines"]) == ("", False, 40)


def test_window_target_shows_its_active_pane(roost: Roost) -> None:
    first = shell(roost, "left")
    roost.tmux("rename-window", "-t", first, "duo")
    other = roost.tmux("split-window", "-d", "-P", "-F", "#{pane_id}", "-t", first, "sleep 300").strip()
    assert roost.json("screen", "--json", "duo")["pane"] == first
    roost.tmux("select-pane", "-t", other)
    assert roost.json("screen", "--json", "duo")["pane"] == other


@pytest.mark.parametrize(
    "span", ["0", "abc", "1.5", "+0", "+x", "-3", "--json", "9" * 5000, "+" + "9" * 5000]
)
def test_bad_lines_are_refused(roost: Roost, span: str) -> None:
    pane = roost.start("sh")
    proc = roost.run("screen", pane, span)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr.startswith("usage:")
    assert "Traceback" not in proc.stderr and len(proc.stderr) < 300


def test_usage_and_missing_targets(roost: Roost) -> None:
    pane = roost.start("sh")
    for args in ([], ["--render", pane], [pane, "3", "4"]):
        proc = roost.run("screen", *args)
        assert (proc.returncode, proc.stdout) == (1, ""), args
        assert proc.stderr.startswith("usage:"), args
    for args in (["%999"], ["--json", "nosuch"]):
        proc = roost.run("screen", *args)
        assert (proc.returncode, proc.stdout) == (2, ""), args
        assert proc.stderr.startswith("roost screen: ")
