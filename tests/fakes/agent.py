"""A fake agent TUI for tests: reads prompts in raw mode and badges itself like a real one.

It turns on bracketed paste, collects pasted text, and on Enter "submits": it fires the
same hook events Claude Code would (through ``rosterd-hook``), waits, answers, and fires
Stop with the answer as ``last_assistant_message``. Flags make it misbehave the ways real
agents do: boot slowly (dropping input meanwhile), swallow the first Enter, open a dialog.

Every byte it receives is appended to ``--log`` so tests can prove what reached the pane.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import termios
import time
import tty

from hook_poster import post  # beside this file: run as a script, its folder is on the path

PASTE_START, PASTE_END = b"\x1b[200~", b"\x1b[201~"


def hook(event: dict, args: argparse.Namespace) -> None:
    payload = {"session_id": args.session, "cwd": os.getcwd(), **event}
    payload.setdefault("transcript_path", args.transcript)
    if args.hook_url and event["hook_event_name"] != "SessionStart":
        said = post(args.hook_url, json.dumps(payload).encode(), os.environ.get("TMUX_PANE", ""), 60)
        if args.hook_log:
            with open(args.hook_log, "a") as log:
                log.write(f"{payload['hook_event_name']} {said}\n")
        return
    subprocess.run(["rosterd-hook"], input=json.dumps(payload).encode(), check=False)


def answer(prompt: str, args: argparse.Namespace) -> str:
    if args.echo_reply:
        return f"reply to: {prompt}"
    return args.reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", default=None)
    parser.add_argument("--boot", type=float, default=0.0, help="seconds during which input is dropped")
    parser.add_argument("--swallow-enters", type=int, default=0)
    parser.add_argument("--work", type=float, default=0.2, help="seconds a turn takes")
    parser.add_argument("--reply", default="fake reply")
    parser.add_argument("--echo-reply", action="store_true")
    parser.add_argument("--dialog-on", default=None, help="a prompt containing this opens a dialog")
    parser.add_argument(
        "--dialog-notice",
        action="store_true",
        help="a PermissionRequest is followed by Notification permission_prompt, as Claude Code does",
    )
    parser.add_argument("--no-hooks", action="store_true", help="never badge itself")
    parser.add_argument(
        "--footer", default=None, help="a line drawn under the prompt, as Claude Code's mode line"
    )
    parser.add_argument("--hook-url", default=None, help="POST events but SessionStart here (HTTP hooks)")
    parser.add_argument("--hook-log", default=None, help="append each POST's answer here")
    parser.add_argument("--no-start", action="store_true", help="never fire UserPromptSubmit")
    parser.add_argument("--error-on", default=None, help="a prompt containing this fails the turn")
    parser.add_argument("--silent-on", default=None, help="a prompt containing this ends with no reply")
    parser.add_argument("--session", default="fake-session-1")
    parser.add_argument("--transcript", default=None)
    parser.add_argument("--start-hook", action="store_true", help="fire SessionStart at boot")
    parser.add_argument("--exit-command", default="/exit")
    parser.add_argument("--exit-after-turn", action="store_true", help="exit as soon as a turn ends")
    parser.add_argument("--deaf", type=float, default=0.0, help="seconds after boot it reads nothing")
    parser.add_argument("--drop-reads", type=int, default=0, help="input it reads and loses after boot")
    parser.add_argument(
        "--stall-after-paste", type=float, default=0.0, help="seconds it reads nothing after a paste"
    )
    parser.add_argument(
        "--exit-dialog", action="store_true", help="the exit command opens a dialog: 1 exits, Esc stays"
    )
    parser.add_argument(
        "--no-bracketed-paste", action="store_true", help="never turn bracketed paste on (a plain program)"
    )
    parser.add_argument(
        "--fast-return",
        type=float,
        default=0.0,
        help="an Enter within this many seconds of the input before it is a newline (Gemini CLI's 30 ms)",
    )
    args = parser.parse_args()

    log = open(args.log, "ab", buffering=0) if args.log else None  # noqa: SIM115
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    out = sys.stdout.buffer

    def write(text: str) -> None:
        # A prompt gets the footer two lines under it, the cursor left where typing goes.
        if args.footer and text.endswith("> "):
            text += f"\x1b7\n\n  {args.footer}\x1b8"
        out.write(text.replace("\n", "\r\n").encode())
        out.flush()

    try:
        deadline = time.monotonic() + args.boot
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.05)[0]:
                os.read(fd, 65536)  # booting: input is lost, as in a real slow start
        if not args.no_bracketed_paste:
            out.write(b"\x1b[?2004h")
        if args.start_hook:
            hook({"hook_event_name": "SessionStart", "source": "startup"}, args)
        write("fake agent ready\n> ")
        time.sleep(args.deaf)  # input meanwhile waits unread on the terminal
        buf = bytearray()
        swallow = args.swallow_enters
        in_dialog = False
        exiting = False
        prompt = ""
        drops = args.drop_reads
        last_read = 0.0
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            previous, last_read = last_read, time.monotonic()
            if drops > 0:
                drops -= 1
                continue
            if log:
                log.write(data)
            i = 0
            while i < len(data):
                if data.startswith(PASTE_START, i):
                    end = data.find(PASTE_END, i)
                    while end < 0:
                        more = os.read(fd, 65536)
                        if log:
                            log.write(more)
                        data += more
                        end = data.find(PASTE_END, i)
                    chunk = data[i + len(PASTE_START) : end]
                    buf += chunk
                    write(f"[Pasted text, {len(chunk)} bytes]")
                    time.sleep(args.stall_after_paste)
                    i = end + len(PASTE_END)
                    continue
                ch = data[i : i + 1]
                i += 1
                if exiting:
                    if ch in (b"1", b"y", b"\r"):
                        write("\nbye\n")
                        return
                    if ch == b"\x1b":
                        exiting = False
                        write("\nstaying\n> ")
                    continue
                if in_dialog:
                    if ch in (b"1", b"y", b"\r"):
                        in_dialog = False
                        write("\napproved\n")
                        hook({"hook_event_name": "PostToolUse", "tool_name": "Bash"}, args)
                        finish(prompt, args, write)
                    elif ch == b"\x1b":
                        in_dialog = False
                        write("\ndeclined\n> ")
                        if args.transcript:
                            with open(args.transcript, "a") as t:
                                t.write('{"type":"user","declined":true}\n')
                    continue
                if ch == b"\x03":
                    return
                if ch == b"\r" and args.fast_return and (i > 1 or last_read - previous <= args.fast_return):
                    buf += b"\n"  # it came with the keys before it: a newline in the input, not a submit
                    write("\n  ")
                    continue
                if ch == b"\r":
                    if swallow > 0:
                        swallow -= 1
                        continue
                    prompt = buf.decode(errors="replace")
                    buf.clear()
                    if prompt.strip() == args.exit_command and args.exit_dialog:
                        write("\nBackground work is still running. Exit anyway? [1] yes  [Esc] no\n")
                        if not args.no_hooks:
                            message = "Background work is still running"
                            hook(
                                {
                                    "hook_event_name": "Notification",
                                    "notification_type": "permission_prompt",
                                    "message": message,
                                },
                                args,
                            )
                        exiting = True
                        continue
                    if prompt.strip() == args.exit_command:
                        write("\nbye\n")
                        return
                    write("\n")
                    if not args.no_hooks and not args.no_start:
                        hook({"hook_event_name": "UserPromptSubmit", "prompt": prompt}, args)
                    if args.dialog_on and args.dialog_on in prompt:
                        time.sleep(args.work)
                        write("Allow Bash: npm test? [1] yes  [Esc] no\n")
                        if not args.no_hooks:
                            hook(
                                {
                                    "hook_event_name": "PermissionRequest",
                                    "tool_name": "Bash",
                                    "tool_input": {"command": "npm test"},
                                },
                                args,
                            )
                            if args.dialog_notice:
                                notice = {
                                    "hook_event_name": "Notification",
                                    "notification_type": "permission_prompt",
                                    "message": "Claude needs your permission to use Bash",
                                }
                                hook(notice, args)
                        in_dialog = True
                        continue
                    finish(prompt, args, write)
                    continue
                if ch == b"\x7f":
                    del buf[-1:]
                    write("\b \b")
                    continue
                buf += ch
                write(ch.decode(errors="replace"))
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def finish(prompt: str, args: argparse.Namespace, write) -> None:
    time.sleep(args.work)
    if args.error_on and args.error_on in prompt:
        write("API Error: 400\n> ")
        if not args.no_hooks:
            hook(
                {
                    "hook_event_name": "StopFailure",
                    "error": "invalid_request",
                    "error_details": "API Error: 400",
                },
                args,
            )
        return
    text = "" if args.silent_on and args.silent_on in prompt else answer(prompt, args)
    write(f"{text}\n> ")
    if not args.no_hooks:
        hook({"hook_event_name": "Stop", "last_assistant_message": text or None}, args)
    if args.exit_after_turn:
        sys.exit(0)


if __name__ == "__main__":
    main()
