"""Shared by every benchmark: a throwaway tmux server, isolated dirs, and interleaved timing.

A benchmark measures its subject and its baselines in the same run, round by round (A B A B
…, the order rotating each round), so a noisy neighbour on a shared machine slows them
alike and the ratios stay meaningful even when the absolute numbers do not.
"""

from __future__ import annotations

import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PYTHON = BIN / "python"
FAKE_AGENT = ROOT / "tests" / "fakes" / "agent.py"
SCREENS = ROOT / "tests" / "fixtures" / "screens" / "claude"
"""Recorded Claude Code screens (``capture-pane -p -e``), one per state, for a fake TUI to print."""
TMUX = shutil.which("tmux") or "tmux"

# The two baselines every benchmark compares against.
PYTHON_START = "python -c pass"
TMUX_LIST = "tmux list-panes -a"


@dataclass
class Case:
    """One command to time; ``setup`` runs before each timed run and is not timed."""

    argv: list[str]
    env: dict[str, str]
    input: bytes | None = None
    setup: Callable[[], None] | None = None
    # (spawned, exited, stderr) of every run, on CLOCK_MONOTONIC, for a case that reports on stderr.
    runs: list[tuple[float, float, bytes]] = field(default_factory=list)

    def run(self) -> float:
        """Seconds the command took, start to exit; a failing command stops the benchmark."""
        if self.setup:
            self.setup()
        spawned = time.monotonic()
        proc = subprocess.run(self.argv, input=self.input, capture_output=True, env=self.env)
        exited = time.monotonic()
        if proc.returncode != 0:
            sys.exit(
                f"bench: {shlex.join(self.argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}"
            )
        self.runs.append((spawned, exited, proc.stderr))
        return exited - spawned


@dataclass
class Sandbox:
    """A private tmux socket and XDG dirs in a temp dir, like the tests' ``roost`` fixture."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="rb", dir="/tmp")))
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        outside = ("TMUX", "ROOST_", "XDG_", "CLAUDE_", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
        keep = {k: v for k, v in os.environ.items() if not k.startswith(outside)}
        self.env = {
            **keep,
            # Bytecode cached as an installed roost's would be, but in the temp dir, not the
            # work tree: without it every start compiles roost's modules from source again.
            "PYTHONPYCACHEPREFIX": str(self.root / "pycache"),
            "ROOST_SOCKET": str(self.root / "tmux.sock"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            "HOME": str(self.root / "home"),
            "PATH": f"{BIN}{os.pathsep}{keep.get('PATH', '')}",
            "LANG": "C.UTF-8",
            "SHELL": "/bin/sh",
        }
        for d in ("state", "config", "run", "home"):
            (self.root / d).mkdir(mode=0o700)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        subprocess.run([TMUX, "-S", self.socket, "kill-server"], capture_output=True)
        # The server's exit hooks run `roost events --reconcile`, which would write its
        # bytecode into the temp dir after it was removed: let them finish first.
        deadline = time.monotonic() + 10
        while naming(f"ROOST_SOCKET={self.socket}".encode()) and time.monotonic() < deadline:
            time.sleep(0.05)
        shutil.rmtree(self.root, ignore_errors=True)

    @property
    def socket(self) -> str:
        return self.env["ROOST_SOCKET"]

    def tmux(self, *args: str) -> str:
        proc = subprocess.run([TMUX, "-S", self.socket, *args], capture_output=True, text=True, env=self.env)
        if proc.returncode != 0:
            sys.exit(f"bench: tmux {shlex.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def roost(self, *args: str, env: dict[str, str] | None = None) -> str:
        proc = subprocess.run(
            [str(BIN / "roost"), *args], capture_output=True, text=True, env={**self.env, **(env or {})}
        )
        if proc.returncode != 0:
            sys.exit(f"bench: roost {shlex.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout

    def start(self, command: str) -> str:
        """Start the server through roost itself, session ``main`` running ``command``; its ``%N``."""
        return self.roost("new", "-d", "-s", "main", command).strip()

    def windows(self, count: int, command: str = "sleep 100000") -> list[str]:
        """``count`` more windows in ``main``, made in one tmux call; their ``%N``, in order."""
        args: list[str] = []
        for i in range(count):
            args += [*([";"] if args else []), "new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "main:"]
            args += ["-n", f"w{i}", command]
        return self.tmux(*args).split() if args else []

    def set_options(self, pane: str, options: dict[str, str]) -> None:
        args: list[str] = []
        for name, value in options.items():
            args += [*([";"] if args else []), "set-option", "-p", "-t", pane, name, value]
        self.tmux(*args)

    def option(self, pane: str, name: str) -> str:
        return self.tmux("display-message", "-p", "-t", pane, f"#{{{name}}}").rstrip("\n")

    def tmux_env(self) -> dict[str, str]:
        """``TMUX`` as tmux sets it inside a pane of this server: ``socket,server pid,session``."""
        pid = self.tmux("display-message", "-p", "#{pid}").strip()
        return {**self.env, "TMUX": f"{self.socket},{pid},0"}

    def counting_env(self, env: dict[str, str]) -> tuple[dict[str, str], Path]:
        """``env`` with a ``tmux`` first on PATH that logs each call; returns it and the log."""
        wrapdir = self.root / "counting"
        wrapdir.mkdir(exist_ok=True)
        log = self.root / "tmux-calls.log"
        wrapper = wrapdir / "tmux"
        wrapper.write_text(
            f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {shlex.quote(TMUX)} "$@"\n'
        )
        wrapper.chmod(0o755)
        return {**env, "PATH": f"{wrapdir}{os.pathsep}{env['PATH']}"}, log

    def baselines(self) -> dict[str, Case]:
        return {
            PYTHON_START: Case([str(PYTHON), "-c", "pass"], self.env),
            TMUX_LIST: Case([TMUX, "-S", self.socket, "list-panes", "-a"], self.env),
        }


def naming(text: bytes) -> list[int]:
    """Processes whose command line or environment holds ``text``."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            for part in ("cmdline", "environ"):
                try:
                    with open(f"/proc/{entry.name}/{part}", "rb") as f:
                        if text in f.read():
                            found.append(int(entry.name))
                            break
                except OSError:
                    continue
    return found


def screen_tui(first: str) -> str:
    """A program that clears its screen and prints the recorded Claude screen ``first``, then
    another each time a screen's name (``working``, ``permission`` …) is typed at it, unechoed."""
    show = f'printf "\\033[H\\033[2J\\033[3J"; cat "{SCREENS}/$f.txt"'
    script = f"stty -echo; f={shlex.quote(first)}; {show}; while read f; do {show}; done"
    return shlex.join(["sh", "-c", script])


def count_calls(case: Case, log: Path) -> list[str]:
    """The tmux invocations one run of ``case`` made (its env must come from ``counting_env``)."""
    log.unlink(missing_ok=True)
    case.run()
    return log.read_text().splitlines() if log.exists() else []


def wait_for(predicate: Callable[[], object], timeout: float = 20, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            sys.exit(f"bench: timed out waiting for {what}")
        time.sleep(0.02)


def measure(cases: dict[str, Case], runs: int, budget: float, warmup: int = 2) -> dict[str, list[float]]:
    """Time every case ``runs`` times, interleaved, stopping early when ``budget`` seconds pass.

    Each round runs every case once, in an order rotated by one each round, so no case
    always runs first (after the benchmark's own setup) or right after the same neighbour.
    """
    names = list(cases)
    for _ in range(warmup):
        for name in names:
            cases[name].run()
    for case in cases.values():
        case.runs.clear()
    samples: dict[str, list[float]] = {name: [] for name in names}
    stop = time.monotonic() + budget
    for i in range(runs):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            samples[name].append(cases[name].run())
        if time.monotonic() > stop and i >= 4:
            break
    return samples


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def report(title: str, samples: dict[str, list[float]]) -> dict[str, float]:
    """Print median and p90 per case and each median as a ratio of the two baselines'.

    Returns the medians in seconds, for the caller's own verdicts.
    """
    medians = {name: statistics.median(values) for name, values in samples.items()}
    runs = min(len(values) for values in samples.values())
    print(f"\n{title}  ({runs} interleaved runs each)")
    width = max(len(name) for name in samples)
    print(f"  {'':<{width}}  {'median':>9}  {'p90':>9}  {'x python':>8}  {'x tmux':>7}")
    for name, values in samples.items():
        med = medians[name]
        print(
            f"  {name:<{width}}  {med * 1000:7.1f}ms  {p90(values) * 1000:7.1f}ms"
            f"  {med / medians[PYTHON_START]:8.2f}  {med / medians[TMUX_LIST]:7.2f}"
        )
    return medians


def importtime(argv: list[str], env: dict[str, str], input: bytes | None = None) -> list[tuple[int, str]]:
    """``(cumulative µs, module)`` of the top-level imports of one run, slowest first."""
    proc = subprocess.run(argv, input=input, capture_output=True, env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    top = []
    for line in proc.stderr.decode(errors="replace").splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if cumulative.strip().isdigit() and not name.startswith("  "):
            top.append((int(cumulative), name.strip()))
    return sorted(top, reverse=True)


def print_imports(label: str, argv: list[str], env: dict[str, str], input: bytes | None = None) -> None:
    """The heaviest top-level imports of one run, from ``-X importtime`` (after one to warm up)."""
    importtime(argv, env, input)
    top = importtime(argv, env, input)
    total = sum(us for us, _ in top)
    heaviest = ", ".join(f"{name} {us / 1000:.1f}" for us, name in top[:6])
    print(f"  imports of {label}: {total / 1000:.1f} ms in all; heaviest (ms): {heaviest}")


def free_port() -> int:
    """A loopback TCP port nobody holds now, for a daemon's listener."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def python_start() -> float:
    """One bare interpreter start from the venv: the floor a Python process costs, this minute."""
    began = time.perf_counter()
    subprocess.run([str(PYTHON), "-c", "pass"], check=True)
    return time.perf_counter() - began


def show(name: str, values: list[float], floor: list[float]) -> None:
    """One row: median and p90 of ``values``, and the median against ``floor``'s."""
    median, high = statistics.median(values) * 1000, p90(values) * 1000
    ratio = statistics.median(values) / statistics.median(floor)
    print(f"  {name:<30} median {median:8.1f} ms  p90 {high:8.1f} ms  {ratio:6.1f}x python -c pass")


def end_holders(box: Sandbox) -> None:
    """End every holder the sandbox's daemons started (they outlive a daemon by design)."""
    import json

    holders = box.root / "run" / "roost" / "holders"
    for state in holders.glob("*.json"):
        try:
            pid = json.loads(state.read_text())["holder_pid"]
        except (OSError, ValueError, KeyError):
            continue
        subprocess.run(["kill", "-TERM", str(pid)], capture_output=True)
    wait_for(lambda: not list(holders.glob("*.json")), what="holders to end")


def in_namespace() -> None:
    """Run this script again in a network namespace of its own with only loopback up, for a
    benchmark that starts real agent CLIs (some look up outside hosts at start)."""
    if os.environ.get("ROOST_BENCH_NETNS") == "1":
        return
    netns = ["unshare", "--net"] if os.getuid() == 0 else ["unshare", "--map-root-user", "--net"]
    ip = shutil.which("ip") or "/usr/sbin/ip"
    argv = [*netns, "sh", "-c", f'{ip} link set lo up && exec "$@"', "sh", sys.executable, *sys.argv]
    os.execvpe(argv[0], argv, {**os.environ, "ROOST_BENCH_NETNS": "1"})
