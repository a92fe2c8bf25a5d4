"""The launcher: ``GET /launcher``, ``POST /launch``, and the "New session" panel in Chromium.

Against a real daemon and tmux: every refusal is checked to have created no window (tmux's
own count before and after), and a launch is checked in tmux itself (name, folder, command).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Roost
from tests.daemon.fixture import Daemon
from tests.web.conftest import Web
from tests.web.test_browser import log_in, row, run, wait_screen

AGENTS = [
    "claude",
    "codex",
    "gemini",
    "opencode",
    "cursor-agent",
    "amp",
    "copilot",
    "droid",
    "grok",
    "pi",
    "omp",
]


def windows(roost: Roost) -> int:
    return len(roost.tmux("list-windows", "-a", "-F", "#{window_id}", check=False).split())


def browser_headers(web: Web) -> dict[str, str]:
    return {**web.cookie_header(), "Origin": web.origin}


def launch(web: Web, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    sent = browser_headers(web) if headers is None else headers
    with web.client() as client:
        if isinstance(body, bytes):
            return client.post("/launch", content=body, headers={**sent, "Content-Type": "application/json"})
        return client.post("/launch", json=body, headers=sent)


def listing(web: Web) -> dict[str, Any]:
    with web.client() as client:
        response = client.get("/launcher", headers=web.cookie_header())
    assert response.status_code == 200, response.text
    return response.json()


def missing_agent(web: Web) -> dict[str, Any]:
    absent = [agent for agent in listing(web)["agents"] if not agent["installed"]]
    if not absent:
        pytest.skip("every agent's binary is installed on this machine")
    return absent[0]


def test_the_list_names_eleven_agents_and_whether_each_is_installed(web: Web) -> None:
    doc = listing(web)
    installed = [agent["name"] for agent in doc["agents"] if agent["installed"]]
    missing = [agent["name"] for agent in doc["agents"] if not agent["installed"]]
    assert installed + missing == [agent["name"] for agent in doc["agents"]]  # the installed first
    assert [name for name in AGENTS if name in installed] + [name for name in AGENTS if name in missing] == (
        installed + missing
    )  # each part in the manifests' order
    by_name = {agent["name"]: agent for agent in doc["agents"]}
    assert by_name["claude"]["display"] == "Claude Code"
    assert by_name["cursor-agent"]["display"] == "Cursor Agent"
    assert by_name["cursor-agent"]["binary"] == "cursor-agent"
    path = web.roost.env["PATH"]
    assert doc["shell"] == web.roost.env["SHELL"]
    for agent in doc["agents"]:
        assert set(agent) == {"name", "display", "binary", "installed", "headless"}
        assert agent["headless"] is (agent["name"] in doc["headless"]), agent
        on_path = any(os.access(Path(d) / agent["binary"], os.X_OK) for d in path.split(os.pathsep) if d)
        assert agent["installed"] is on_path, agent
    assert doc["custom"] is True
    assert doc["home"] == web.roost.env["HOME"]


def test_the_list_needs_a_login(web: Web) -> None:
    with web.client() as client:
        assert client.get("/launcher").status_code == 401
        assert client.post("/launch", json={"command": "sh", "cwd": "/"}).status_code == 401


def test_a_custom_command_opens_a_named_window_in_the_folder(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    folder = tmp_path / "proj"
    folder.mkdir()
    before = windows(roost)
    response = launch(web, {"command": "sh", "cwd": str(folder), "name": "from web"})
    assert response.status_code == 201, response.text
    doc = response.json()
    pane = doc["pane"]
    assert doc == {
        "pane": pane,
        "session": "main",
        "name": "from web",
        "agent": None,
        "cwd": str(folder),
        "worktree": None,
        "branch": None,
    }
    assert windows(roost) == before + 1
    assert roost.option(pane, "@roost-name") == "from web"
    assert roost.option(pane, "window_name") == "from web"
    assert roost.option(pane, "session_name") == "main"
    roost.wait_for(lambda: roost.option(pane, "pane_current_path") == str(folder), what="the folder")
    assert roost.option(pane, "@roost-pane-session")  # the same pane environment roost spawn gives
    with web.client() as client:
        listed = client.get("/terminals", headers=web.cookie_header()).json()["terminals"]
    assert any(t["pane"] == pane and t["name"] == "from web" for t in listed)


def test_a_custom_command_without_a_name_is_named_after_its_program(web: Web, tmp_path: Path) -> None:
    web.roost.start()
    response = launch(web, {"command": "sh -c 'exec sh'", "cwd": str(tmp_path)})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == "sh"


def test_the_first_launch_starts_the_server(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    assert windows(roost) == 0
    response = launch(web, {"command": "sh", "cwd": str(tmp_path), "name": "first"})
    assert response.status_code == 201, response.text
    assert windows(roost) == 1
    assert roost.option(response.json()["pane"], "@roost-name") == "first"


def test_an_agent_that_is_not_installed_is_refused(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    agent = missing_agent(web)
    before = windows(roost)
    response = launch(web, {"agent": agent["name"], "cwd": str(tmp_path)})
    assert response.status_code == 409, response.text
    assert "not installed" in response.json()["error"]
    assert response.json()["agent"] == agent["name"]
    assert windows(roost) == before


def test_an_installed_agent_runs_its_binary(daemon: Daemon, roost: Roost, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "amp"
    fake.write_text("#!/bin/sh\necho amp-is-running\nexec sh\n")
    fake.chmod(0o755)
    roost.env["PATH"] = f"{bin_dir}{os.pathsep}{roost.env['PATH']}"
    daemon.start()
    web = Web(daemon, roost)
    roost.start()
    amp = next(agent for agent in listing(web)["agents"] if agent["name"] == "amp")
    assert amp["installed"] is True
    response = launch(web, {"agent": "amp", "cwd": str(tmp_path)})
    assert response.status_code == 201, response.text
    doc = response.json()
    assert (doc["agent"], doc["name"]) == ("amp", "amp")
    roost.wait_screen(doc["pane"], "amp-is-running")
    assert roost.option(doc["pane"], "@roost-name") == "amp"


def fake_agent(folder: Path, binary: str) -> Path:
    """A stand-in for an agent's program in ``folder``: it says it runs, then is a shell."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / binary
    fake.write_text(f"#!/bin/sh\necho {binary}-is-running\nexec sh\n")
    fake.chmod(0o755)
    return fake


def on_login_path(roost: Roost, folder: Path) -> None:
    """``folder`` on the PATH of the person's login shell (the sandbox's ``/bin/sh`` reads
    ``~/.profile``), as an installer that edits the profile leaves it."""
    profile = Path(roost.env["HOME"]) / ".profile"
    profile.write_text(f'PATH="{folder}:$PATH"\nexport PATH\n')


def pane_path(roost: Roost, pane: str) -> str:
    pid = roost.option(pane, "pane_pid")
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next(line for line in environ if line.startswith(b"PATH=")).decode()[len("PATH=") :]


def test_an_agent_installed_since_the_daemon_started_where_the_login_shell_looks_is_listed_first_and_runs(
    web: Web, tmp_path: Path
) -> None:
    roost = web.roost
    roost.start()
    folder = Path(roost.env["HOME"]) / ".local" / "bin"
    before = {agent["name"]: agent for agent in listing(web)["agents"]}
    assert before["droid"]["installed"] is False
    fake_agent(folder, "droid")
    on_login_path(roost, folder)  # the daemon's own PATH never had it
    assert str(folder) not in web.daemon.env["PATH"]
    agents = listing(web)["agents"]
    assert agents[0]["name"] == "droid" and agents[0]["installed"] is True
    response = launch(web, {"agent": "droid", "cwd": str(tmp_path)})
    assert response.status_code == 201, response.text
    pane = response.json()["pane"]
    roost.wait_screen(pane, "droid-is-running")
    assert str(folder) in pane_path(roost, pane).split(os.pathsep)  # what it starts finds it too


def test_an_agent_on_the_path_of_roosts_tmux_server_is_installed(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    folder = tmp_path / "from-tmux"
    fake_agent(folder, "grok")
    assert next(a for a in listing(web)["agents"] if a["name"] == "grok")["installed"] is False
    path = roost.tmux("show-environment", "-g", "PATH").strip().removeprefix("PATH=")
    roost.tmux("set-environment", "-g", "PATH", f"{folder}{os.pathsep}{path}")
    assert next(a for a in listing(web)["agents"] if a["name"] == "grok")["installed"] is True
    response = launch(web, {"agent": "grok", "cwd": str(tmp_path)})
    assert response.status_code == 201, response.text
    roost.wait_screen(response.json()["pane"], "grok-is-running")


def bad_bodies(tmp_path: Path) -> list[tuple[str, Any]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    here = str(tmp_path)
    return [
        ("not JSON", b"{not json"),
        ("not an object", ["sh"]),
        ("empty", {}),
        ("no folder", {"command": "sh"}),
        ("empty folder", {"command": "sh", "cwd": ""}),
        ("relative folder", {"command": "sh", "cwd": "proj"}),
        ("missing folder", {"command": "sh", "cwd": str(tmp_path / "nowhere")}),
        ("a file, not a folder", {"command": "sh", "cwd": str(a_file)}),
        ("folder not a string", {"command": "sh", "cwd": 7}),
        ("newline in the name", {"command": "sh", "cwd": here, "name": "a\nb"}),
        ("escape in the name", {"command": "sh", "cwd": here, "name": "a\x1b[31mb"}),
        ("blank name", {"command": "sh", "cwd": here, "name": "  "}),
        ("name too long", {"command": "sh", "cwd": here, "name": "n" * 65}),
        ("unknown agent", {"agent": "nope", "cwd": here}),
        ("agent not a string", {"agent": ["codex"], "cwd": here}),
        ("agent and command", {"agent": "claude", "command": "sh", "cwd": here}),
        ("empty command", {"command": "", "cwd": here}),
        ("control character in the command", {"command": "sh\x03", "cwd": here}),
        ("unknown field", {"command": "sh", "cwd": here, "session": "other"}),
        ("a branch without a worktree", {"command": "sh", "cwd": here, "branch": "b"}),
        ("a worktree that is not a boolean", {"command": "sh", "cwd": here, "worktree": "yes"}),
    ]


def test_bad_input_is_400_and_creates_nothing(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    before = windows(roost)
    headers = browser_headers(web)
    for what, body in bad_bodies(tmp_path):
        response = launch(web, body, headers)
        assert response.status_code == 400, (what, response.text)
        assert isinstance(response.json()["error"], str) and response.json()["error"], what
    assert windows(roost) == before


def test_an_oversized_body_is_refused_and_creates_nothing(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    before = windows(roost)
    response = launch(web, {"command": "sh", "cwd": str(tmp_path), "name": "x" * 8000})
    assert response.status_code == 413, response.text
    assert "larger than" in response.json()["error"]
    assert windows(roost) == before


def test_a_launch_from_another_origin_or_without_one_is_403(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    before = windows(roost)
    body = {"command": "sh", "cwd": str(tmp_path)}
    cookie = web.cookie_header()
    for headers in (cookie, {**cookie, "Origin": "http://evil.example"}, {**cookie, "Origin": "null"}):
        response = launch(web, body, headers)
        assert response.status_code == 403, response.text
        assert "Origin" in response.json()["error"]
    assert windows(roost) == before
    bearer = {"Authorization": f"Bearer {web.daemon.token}"}
    assert launch(web, body, bearer).status_code == 201  # a script with the token needs no Origin
    assert windows(roost) == before + 1


@pytest.mark.browser
def test_launch_a_shell_from_the_panel(page: Any, web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    folder = tmp_path / "launched"
    folder.mkdir()
    log_in(page, web)
    page.click("#sidebar .new-session")
    page.wait_for_selector('dialog#launcher[open] .choice[data-agent="claude"]')
    assert page.locator("#launch-cwd").input_value() == roost.env["HOME"]
    assert page.locator("#launch-agents .choice[data-agent]").count() == len(AGENTS)
    page.fill("#launch-command", "sh")
    assert page.locator('.choice.custom input[type="radio"]').is_checked()
    page.fill("#launch-cwd", str(folder))
    page.fill("#launch-name", "web shell")
    before = windows(roost)
    page.click("#launch-go")
    page.wait_for_selector('li.session:has-text("web shell")')
    pane = page.locator('li.session:has-text("web shell")').get_attribute("data-pane")
    assert pane
    assert page.locator("dialog#launcher").get_attribute("open") is None
    page.wait_for_selector(f'.view[data-pane="{pane}"][data-state="open"] .xterm-rows')
    assert page.locator(f'.tab[data-pane="{pane}"]').get_attribute("aria-selected") == "true"
    assert page.locator(f"{row(pane)}.active").count() == 1
    assert windows(roost) == before + 1
    assert roost.option(pane, "@roost-name") == "web shell"
    run(page, "echo $((6*7)) in $(pwd)")
    wait_screen(page, pane, lambda lines: f"42 in {folder}" in lines, "the shell's answer")


@pytest.mark.browser
def test_the_panel_lists_what_is_installed_now_first_and_offers_a_plain_shell(page: Any, web: Web) -> None:
    roost = web.roost
    started = roost.start()
    log_in(page, web)
    page.click("#sidebar .new-session")
    page.wait_for_selector('dialog#launcher[open] .choice[data-agent="codex"]')
    assert page.locator('.choice[data-agent="codex"] input').is_disabled()
    page.click("#launch-cancel")
    folder = Path(roost.env["HOME"]) / "bin-later"
    fake_agent(folder, "codex")
    on_login_path(roost, folder)
    page.click("#sidebar .new-session")  # asked again as the panel opens
    first = page.locator("#launch-agents .choice").first
    first.locator("input:not([disabled])").wait_for()
    assert first.get_attribute("data-agent") == "codex"
    assert "not installed" not in first.inner_text()
    shell = page.locator("#launch-agents .choice.shell")
    assert page.locator("#launch-agents .choice").nth(1).get_attribute("class") == shell.get_attribute(
        "class"
    )
    assert shell.locator(".display").inner_text() == "Shell"
    assert shell.locator("code").inner_text() == "sh"
    shell.click()
    page.click("#launch-go")
    launched = page.locator(f'li.session:not([data-pane="{started}"])')
    launched.wait_for()
    assert launched.locator(".name").inner_text() == "sh"
    pane = launched.get_attribute("data-pane")
    assert pane
    assert roost.option(pane, "@roost-name") == "sh"
    assert str(folder) in pane_path(roost, pane).split(os.pathsep)
    run(page, "codex")
    wait_screen(page, pane, lambda lines: "codex-is-running" in lines, "the agent, from the shell")


@pytest.mark.browser
def test_the_panel_shows_missing_agents_disabled_and_server_errors(chromium: Any, web: Web) -> None:
    # Its own context, not the ``page`` fixture: the refused launch is this test's own doing,
    # and Chromium reports every 4xx response on the console.
    roost = web.roost
    roost.start()
    agent = missing_agent(web)
    context = chromium.new_context(viewport={"width": 1200, "height": 760})
    try:
        page = context.new_page()
        log_in(page, web)
        page.click("#sidebar .new-session")
        choice = page.locator(f'.choice[data-agent="{agent["name"]}"]')
        choice.wait_for()
        assert "not installed" in choice.inner_text()
        assert choice.locator("input").is_disabled()
        choice.click(force=True)  # a person clicking it anyway
        assert not choice.locator("input").is_checked()
        before = windows(roost)
        page.click("#launch-go")
        page.wait_for_selector("#launch-error:has-text('pick an agent')")
        page.fill("#launch-command", "sh")
        page.fill("#launch-cwd", "relative/folder")
        page.click("#launch-go")
        page.wait_for_selector("#launch-error:has-text('absolute path')")
        assert page.locator("dialog#launcher").get_attribute("open") is not None
        assert windows(roost) == before
    finally:
        context.close()


def _repo(where: Path) -> Path:
    """A git repository with one commit, for a launch to make a worktree of."""
    where.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(where)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(where)], check=True, capture_output=True)
    (where / "README").write_text("hi\n")
    subprocess.run([*git, "add", "."], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True, capture_output=True)
    return where


def test_a_launch_in_a_worktree_gets_a_folder_and_branch_of_its_own(web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    repo = _repo(tmp_path / "app")
    response = launch(web, {"command": "sh", "cwd": str(repo), "name": "fixer", "worktree": True})
    assert response.status_code == 201, response.text
    doc = response.json()
    made = tmp_path / "app.worktrees" / "fixer"
    assert (doc["cwd"], doc["worktree"], doc["branch"]) == (str(made), str(made), "fixer")
    assert (made / "README").read_text() == "hi\n"
    roost.wait_for(lambda: roost.option(doc["pane"], "pane_current_path") == str(made), what="the worktree")
    assert (roost.option(doc["pane"], "@roost-worktree"), roost.option(doc["pane"], "@roost-branch")) == (
        str(made),
        "fixer",
    )
    before = windows(roost)
    again = launch(
        web, {"command": "sh", "cwd": str(repo), "name": "other", "worktree": True, "branch": "fixer"}
    )
    assert again.status_code == 409, again.text
    assert "branch fixer already exists" in again.json()["error"]
    plain = launch(web, {"command": "sh", "cwd": str(tmp_path), "name": "x", "worktree": True})
    assert plain.status_code == 400, plain.text
    assert "needs a git repository" in plain.json()["error"]
    assert windows(roost) == before


@pytest.mark.browser
def test_the_panel_launches_into_a_worktree(page: Any, web: Web, tmp_path: Path) -> None:
    roost = web.roost
    roost.start()
    repo = _repo(tmp_path / "app")
    log_in(page, web)
    page.click("#sidebar .new-session")
    page.wait_for_selector('dialog#launcher[open] .choice[data-agent="claude"]')
    assert page.locator("#launch-branch").is_hidden()
    page.fill("#launch-command", "sh")
    page.fill("#launch-cwd", str(repo))
    page.fill("#launch-name", "tidy")
    page.check("#launch-worktree")
    page.fill("#launch-branch", "chore/tidy")
    page.click("#launch-go")
    page.wait_for_selector('li.session:has-text("tidy")')
    pane = page.locator('li.session:has-text("tidy")').get_attribute("data-pane")
    assert pane
    made = tmp_path / "app.worktrees" / "tidy"
    assert (roost.option(pane, "@roost-worktree"), roost.option(pane, "@roost-branch")) == (
        str(made),
        "chore/tidy",
    )
